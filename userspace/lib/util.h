/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * util.h - small helpers libcolibri's readers share.
 */
#ifndef COLIBRI_UTIL_H
#define COLIBRI_UTIL_H

#include <stddef.h>

/* printf into err[len] (nothing if err is NULL or len 0). */
void cb_set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The whole file at @path, NUL-terminated, if it is at most @max bytes;
 * its length in *@len (if @len is not NULL).  NULL if it cannot be opened
 * or read, is larger than @max, or memory runs out.  free() it.
 */
char *cb_read_file(const char *path, size_t max, size_t *len);

#endif /* COLIBRI_UTIL_H */

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * util.h - small helpers libcolibri's readers share: errors, whole files,
 * a string builder, a string hash.
 */
#ifndef COLIBRI_UTIL_H
#define COLIBRI_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* printf into err[len] (nothing if err is NULL or len 0). */
void cb_set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The whole file at @path, NUL-terminated, if it is at most @max bytes;
 * its length in *@len (if @len is not NULL).  NULL if it cannot be opened
 * or read, is larger than @max, or memory runs out.  free() it.
 */
char *cb_read_file(const char *path, size_t max, size_t *len);

/*
 * struct cb_sbuf - a growable byte string, always NUL-terminated once
 * anything was added (p[n] == 0), so it can be handed to C string APIs.
 * Start from { 0 }; free(b.p) when done.
 */
struct cb_sbuf {
	char *p;
	size_t n, cap;
};

/* Make room for @extra more bytes (and the NUL).  0 or -ENOMEM. */
int cb_sbuf_reserve(struct cb_sbuf *b, size_t extra);

/* Append @n bytes of @s.  0 or -ENOMEM (then @b is unchanged). */
int cb_sbuf_add(struct cb_sbuf *b, const void *s, size_t n);

/*
 * An array *@p of *@cap elements of @size bytes grown to hold @need, its
 * capacity doubled from 16 (contents kept).  0, or -1 (out of memory or
 * past 2^31 elements; *@p unchanged).
 */
int cb_grow(void **p, uint32_t *cap, uint32_t need, size_t size);

/* 64-bit FNV-1a of @n bytes, high bits folded down for power-of-two tables. */
uint64_t cb_hash_bytes(const char *s, size_t n);

#endif /* COLIBRI_UTIL_H */

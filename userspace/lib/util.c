// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * util.c - small helpers libcolibri's readers share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

void cb_set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

char *cb_read_file(const char *path, size_t max, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || (unsigned long)n > max ||
	    fseek(fp, 0, SEEK_SET))
		goto out;
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = (size_t)n;
	}
out:
	fclose(fp);
	return buf;
}

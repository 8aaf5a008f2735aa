// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_isa_names.c - the name of each ISA level (enum cb_isa_level): the
 * one table the tools' --isa, COLIBRI_ISA, the device client's
 * colibri_isa_name() and the "A, B or C" lists of their messages read.
 * Data and a lookup only, in an object of its own: reading a name links
 * no variant.  Each variant's own name (struct cb_isa_ops) is this one
 * (tests/unit/test_ops checks it).  Integer-only.
 */
#include "core/cb_engine.h"

const char *const cb_isa_names[CB_ISA__COUNT] = {
	[CB_ISA_SCALAR] = "scalar",
	[CB_ISA_AVX2] = "avx2",
	[CB_ISA_AVX512] = "avx512",
	[CB_ISA_AVX512_VNNI] = "avx512_vnni",
};

/**
 * cb_isa_level_of() - the level of an ISA name ("avx2").
 * @name: the name, or NULL.
 *
 * Return: its enum cb_isa_level, or -1 for a name that is none.
 */
int cb_isa_level_of(const char *name)
{
	int i;

	for (i = 0; i < CB_ISA__COUNT; i++)
		if (cb_streq(cb_isa_names[i], name))
			return i;
	return -1;
}

/**
 * cb_isa_name_list() - "scalar, avx2, avx512 or avx512_vnni", for messages.
 * @buf: where.
 * @len: its size; the list is cut short to fit.
 *
 * Return: @buf.
 */
char *cb_isa_name_list(char *buf, cb_u32 len)
{
	cb_u32 n = 0, i;

	for (i = 0; i < CB_ISA__COUNT; i++) {
		const char *sep = !i ? "" : i + 1 == CB_ISA__COUNT ? " or " : ", ";
		const char *p;

		for (p = sep; *p && n + 1 < len; p++)
			buf[n++] = *p;
		for (p = cb_isa_names[i]; *p && n + 1 < len; p++)
			buf[n++] = *p;
	}
	if (len)
		buf[n] = 0;
	return buf;
}

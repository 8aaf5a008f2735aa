// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_isa_query.c - the ISA choice as plain integers, for callers that may
 * not include cb_ops.h (non-FPU kernel objects).
 */
#include "cb_ops.h"

int colibri_engine_isa(int max_level, const char **name);

int colibri_engine_isa(int max_level, const char **name)
{
	const struct cb_isa_ops *ops = cb_isa_select(max_level);

	*name = ops->name;
	return ops->level;
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_isa.c - choosing an ISA variant, as lib/raid6 chooses its algorithm.
 *
 * The list is in order of preference; the first variant whose valid()
 * accepts this CPU (and whose level the caller allows) wins.  Nothing is
 * cached here: each engine instance asks once at init and keeps the
 * pointer, so several engines may run at different levels side by side.
 *
 * Integer only, built without SSE (Kbuild's cb-int-only-dirs): the module
 * chooses outside FPU sections, at load and in every cb_engine_init().
 * The tables are in the variants' objects (data only is read from them);
 * their valid() hooks, integer only for the same reason, are in
 * cb_isa_valid.c, below the variants.
 */
#include "ops/cb_ops.h"

static const struct cb_isa_ops *const cb_isa_list[] = {
	&cb_isa_avx512_vnni,
	&cb_isa_avx512,
	&cb_isa_avx2,
	&cb_isa_scalar,
};

/**
 * cb_isa_select() - the preferred valid variant at or below a level.
 * @max_level: highest enum cb_isa_level the caller allows.
 *
 * Return: never NULL; the scalar variant if nothing else qualifies.
 */
const struct cb_isa_ops *cb_isa_select(int max_level)
{
	unsigned int i;

	for (i = 0; i < CB_ARRAY_SIZE(cb_isa_list); i++) {
		const struct cb_isa_ops *ops = cb_isa_list[i];

		if ((int)ops->level <= max_level && ops->valid())
			return ops;
	}
	return &cb_isa_scalar;
}

/**
 * cb_isa_get() - the variant of exactly one level, if this CPU runs it.
 * @level: enum cb_isa_level.
 *
 * Return: the variant, or NULL if there is none for that level or its
 * valid() refuses this CPU.
 */
const struct cb_isa_ops *cb_isa_get(int level)
{
	unsigned int i;

	for (i = 0; i < CB_ARRAY_SIZE(cb_isa_list); i++) {
		const struct cb_isa_ops *ops = cb_isa_list[i];

		if ((int)ops->level == level)
			return ops->valid() ? ops : CB_NULL;
	}
	return CB_NULL;
}

/*
 * The choice as plain integers, for the module's non-FPU code, which may
 * not include cb_ops.h (kmod/colibri_engine.h declares it).
 */
int colibri_engine_isa(int max_level, const char **name);

int colibri_engine_isa(int max_level, const char **name)
{
	const struct cb_isa_ops *ops = cb_isa_select(max_level);

	*name = cb_isa_names[ops->level];
	return ops->level;
}

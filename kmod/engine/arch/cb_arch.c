// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_arch.c - the table of architectures (one file each in this folder)
 * and the lookups by the names the model files use.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

const struct cb_arch_desc *const cb_archs[] = {
#define CB_ARCH(id, desc) \
	[(id)] = &(desc),
#include "arch/cb_arch_list.h"
#undef CB_ARCH
};

/* The lines of cb_arch_list.h: as many as entries, so no number is skipped. */
enum cb_arch_line {
#define CB_ARCH(id, desc) \
	CB_ARCH_LINE_##desc,
#include "arch/cb_arch_list.h"
#undef CB_ARCH
	CB_ARCHS_LISTED
};

CB_STATIC_ASSERT(CB_ARRAY_SIZE(cb_archs) == CB_ARCHS_LISTED,
		 "cb_arch_list.h skips a number: every entry of cb_archs[] must be set");

const cb_u32 cb_arch_count = CB_ARRAY_SIZE(cb_archs);

/**
 * cb_arch_by_name() - the architecture of a short name ("mixtral").
 * @name: the name.
 *
 * Return: it, or NULL.
 */
const struct cb_arch_desc *cb_arch_by_name(const char *name)
{
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++)
		if (cb_streq(cb_archs[i]->name, name))
			return cb_archs[i];
	return CB_NULL;
}

/**
 * cb_arch_by_hf_class() - the architecture of a Hugging Face class.
 * @cls: config.json's architectures[0] ("MixtralForCausalLM").
 *
 * Return: it, or NULL.
 */
const struct cb_arch_desc *cb_arch_by_hf_class(const char *cls)
{
	const char *const *c;
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++)
		for (c = cb_archs[i]->hf_classes; c && *c; c++)
			if (cb_streq(*c, cls))
				return cb_archs[i];
	return CB_NULL;
}

/**
 * cb_arch_by_gguf() - the architecture of a GGUF file.
 * @gguf_arch: its general.architecture ("llama").
 * @moe: it has routed experts: of the architectures that share a GGUF
 *	name (llama and Mixtral), the one whose FFN kind agrees.
 *
 * Return: it, or NULL.  (deepseek2 is DeepSeek-V2 here; its importer
 * makes it V3 when the file's gating says sigmoid.)
 */
const struct cb_arch_desc *cb_arch_by_gguf(const char *gguf_arch, int moe)
{
	const struct cb_arch_desc *first = CB_NULL;
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];
		int a_moe = a->ffn != CB_FFN_DENSE;

		if (!cb_streq(a->gguf_arch, gguf_arch))
			continue;
		if (a_moe == !!moe)
			return a;
		if (!first)
			first = a;
	}
	return first;
}

/**
 * cb_arch_by_gguf_scores() - of the scored-router architectures of a GGUF
 *	name, the one whose scores are @score_func.
 * @gguf_arch: its general.architecture ("deepseek2").
 * @score_func: CB_SCORE_*, as the file's gating says.
 *
 * Return: it, or NULL.  (deepseek2 with sigmoid gating is DeepSeek-V3.)
 */
const struct cb_arch_desc *cb_arch_by_gguf_scores(const char *gguf_arch, cb_u32 score_func)
{
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];

		if (cb_streq(a->gguf_arch, gguf_arch) && a->router == CB_ROUTER_SCORED &&
		    a->scored.score_func == score_func)
			return a;
	}
	return CB_NULL;
}

/**
 * cb_arch_name_in() - a tensor role's name in an architecture's list.
 * @names: the list (its gguf_names or hf_names), or NULL.
 * @role: uapi's COLIBRI_T_*.
 * @usual: the format's usual name of it.
 *
 * Return: the list's name of @role, or @usual.
 */
const char *cb_arch_name_in(const struct cb_arch_name *names, cb_u32 role, const char *usual)
{
	const struct cb_arch_name *n;

	for (n = names; n && n->name; n++)
		if (n->role == role)
			return n->name;
	return usual;
}

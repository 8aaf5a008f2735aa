/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * synth.h - the options of `colibri synth` (cmd_synth.c), shared with the
 * DeepSeek part of its config (synth_deepseek.c).
 */
#ifndef COLIBRI_CLI_SYNTH_H
#define COLIBRI_CLI_SYNTH_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "core/cb_engine.h"
#include "quant/quant_preset.h"

/* DeepSeek's MLA and routing options; -1 (or NAN for the scale): V2/V3's default */
struct synth_mla_opts {
	long q_lora, kv_lora, qk_nope, qk_rope, v_head;
	long n_group, topk_group, shared_experts, dense_layers, dense_ffn;
	double routed_scale;
};

#define SYNTH_MLA_UNSET { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, NAN }

struct synth_opts {
	const char *out, *name, *tokenizer;
	int arch;
	long hidden, layers, experts, top_k, ffn, heads, kv_heads, vocab, shared_ffn;
	long context, head_dim, window;
	int dtype, threads;
	struct cb_quant q;	/* --quant: a type or a preset */
	uint64_t seed;
	struct synth_mla_opts mla;
};

/* Row scratch is on the stack: no matrix row is longer than this. */
#define SYNTH_MAX_COLS (1u << 16)

/*
 * synth_deepseek_config() - the DeepSeek-V2/V3 part of @c (the common
 * fields already set from @o): MLA dims, dense leading layers, shared
 * experts, routing, each from its option or the architecture's default,
 * then the engine's own config check.
 * Return: NULL, or why the shape is refused (a constant, or @why: @len
 * bytes for the engine's reason).
 */
const char *synth_deepseek_config(const struct synth_opts *o, struct cb_model_config *c,
				  char *why, size_t len);

/* synth_deepseek_usage() - the MLA options' defaults, from the arch tables. */
void synth_deepseek_usage(FILE *f);

#endif /* COLIBRI_CLI_SYNTH_H */

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * synth.h - the options of `colibri synth` (cmd_synth.c), shared with the
 * MLA part of its config (synth_deepseek.c) and the scored routers' part
 * (synth_scored.c).
 */
#ifndef COLIBRI_CLI_SYNTH_H
#define COLIBRI_CLI_SYNTH_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "core/cb_engine.h"
#include "quant/quant_preset.h"

/* MLA's and the scored routers' options; -1 (or NAN for the scale): the arch's default */
struct synth_mla_opts {
	long q_lora, kv_lora, qk_nope, qk_rope, v_head;
	long n_group, topk_group, shared_experts, dense_layers, dense_ffn;
	double routed_scale;
};

#define SYNTH_MLA_UNSET { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, NAN }

/* Gated DeltaNet's options (qwen3_5_moe); -1: the default */
struct synth_delta_opts {
	long k_heads, v_heads, head_dim, conv, interval;
};

#define SYNTH_DELTA_UNSET { -1, -1, -1, -1, -1 }

struct synth_opts {
	const char *out, *name, *tokenizer;
	int arch;
	long hidden, layers, experts, top_k, ffn, heads, kv_heads, vocab, shared_ffn;
	long context, head_dim, window;
	int dtype, threads;
	struct cb_quant q;	/* --quant: a type or a preset */
	uint64_t seed;
	struct synth_mla_opts mla;
	struct synth_delta_opts delta;
};

/* Row scratch is on the stack: no matrix row is longer than this. */
#define SYNTH_MAX_COLS (1u << 16)

/* An option's value, or @def where it was not given (-1). */
static inline long synth_pick(long v, long def)
{
	return v >= 0 ? v : def;
}

/*
 * synth_deepseek_config() - the MLA part of @c (the common fields already
 * set from @o): the latent and head dims, each from its option or
 * DeepSeek's, and the RoPE those heads use.
 * Return: NULL, or why the shape is refused (a constant).
 */
const char *synth_deepseek_config(const struct synth_opts *o, struct cb_model_config *c);

/* synth_deepseek_usage() - the MLA options' defaults. */
void synth_deepseek_usage(FILE *f);

/*
 * synth_scored_config() - the part of @c a scored router's architecture
 * (DeepSeek's, GLM's) adds: dense leading layers, shared experts, the
 * routing rule, partial RoPE; each from its option or the arch file's
 * .synth, then the engine's own config check.
 * Return: NULL, or why the shape is refused (a constant, or @why: @len
 * bytes for the engine's reason).
 */
const char *synth_scored_config(const struct synth_opts *o, struct cb_model_config *c,
				char *why, size_t len);

/* synth_scored_usage() - the routing options' defaults, from the arch tables. */
void synth_scored_usage(FILE *f);

/*
 * synth_delta_config() - the Gated DeltaNet part of @c (qwen3_5_moe): its
 * heads, convolution and layer pattern from the options or Qwen3.5's
 * ratios, the quarter of each attention head RoPE rotates, then the
 * engine's own config check.
 * Return: NULL, or why the shape is refused (@why: @len bytes).
 */
const char *synth_delta_config(const struct synth_opts *o, struct cb_model_config *c,
			       char *why, size_t len);

/* synth_delta_usage() - its options and defaults. */
void synth_delta_usage(FILE *f);

#endif /* COLIBRI_CLI_SYNTH_H */

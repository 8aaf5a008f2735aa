/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_arch.h - an architecture is data: one const struct cb_arch_desc per
 * architecture, each in a file of its own in this folder (arch_NAME.c),
 * and the table of them all (cb_arch.c).
 *
 * An architecture says what it is called everywhere (the uapi number, the
 * short name sysfs and the tools print, the Hugging Face classes and
 * model_type its config.json names, the GGUF general.architecture its
 * files carry), the defaults its files leave unsaid, and the *kinds* of
 * its layers.  The forward pass dispatches on kinds, never on the
 * architecture: a new architecture made of known kinds is a new file here
 * and its importers' config mapping.
 *
 * This folder is integer-only (Kbuild builds it with the kernel's own
 * flags): strings, numbers and lookups, callable anywhere in the module.
 */
#ifndef CB_ARCH_H
#define CB_ARCH_H

#include "core/cb_platform.h"

/*
 * How a layer attends: grouped-query attention over every cached
 * position; the same with a learned sink logit per head and a sliding
 * window on the layers the config marks (GPT-OSS: struct
 * cb_gpt_oss_config); multi-head latent attention, with a cache of the
 * latent and the shared RoPE key (struct cb_mla_config); or Gated
 * DeltaNet layers with a fixed-size recurrent state, every few layers one
 * of grouped-query attention with an output gate (struct cb_delta_config).
 */
enum cb_attn_kind {
	CB_ATTN_GQA = 0,
	CB_ATTN_GQA_SINKS = 1,
	CB_ATTN_MLA = 2,
	CB_ATTN_GATED_DELTA = 3,
};

/*
 * What follows attention (a layer the config marks dense is dense
 * anyway): a SwiGLU MLP in every layer and no experts; routed experts;
 * routed experts plus shared ones; or plus one shared expert behind a
 * sigmoid gate (Qwen2-MoE: shared_gate).
 */
enum cb_ffn_kind {
	CB_FFN_DENSE = 0,
	CB_FFN_MOE = 1,
	CB_FFN_MOE_SHARED = 2,
	CB_FFN_MOE_SHARED_GATED = 3,
};

/*
 * How a router turns its logits into top_k experts and weights: none (no
 * experts); softmax over all, top_k, renormalised if norm_topk_prob; the
 * top_k logits (with the router's bias) and softmax over those (GPT-OSS);
 * softmax or sigmoid scores with a selection bias, expert groups and a
 * scale (DeepSeek).
 */
enum cb_router_kind {
	CB_ROUTER_NONE = 0,
	CB_ROUTER_SOFTMAX_TOPK = 1,
	CB_ROUTER_TOPK_SOFTMAX = 2,
	CB_ROUTER_SCORED = 3,
};

/*
 * What one routed expert computes: down(silu(gate x) * up x); or that
 * with biases and GPT-OSS's clamped SwiGLU, which an accelerator's expert
 * task cannot carry.
 */
enum cb_expert_kind {
	CB_EXPERT_SWIGLU = 0,
	CB_EXPERT_SWIGLU_OSS = 1,
};

/* How a config.json key fills a config field (struct cb_arch_hf_key). */
enum cb_hf_how {
	CB_HF_END = 0,		/* the end of the list */
	CB_HF_REQ = 1,		/* an integer in 0..2^32-1 the file must have */
	CB_HF_OPT = 2,		/* ... or @def where it is absent or null */
	CB_HF_BOOL = 3,		/* true or false; @def where it is not a bool */
	CB_HF_F32 = 4,		/* a number, stored as f32 bits; left alone if absent */
	CB_HF_SET = 5,		/* no key: the field is @def */
	CB_HF_LAYERS = 6,	/* a list of layer numbers: their bits in a layer bitmap */
};

/**
 * struct cb_arch_hf_key - one config.json key of an architecture's
 *	Hugging Face checkpoints, and the config field it fills.
 * @key: the key; "a|b" reads a, or b where a is absent or bad.
 * @how: enum cb_hf_how.
 * @field: the field's offset in struct cb_model_config (CB_HF_FIELD()).
 * @def: the default (CB_HF_OPT, CB_HF_BOOL) or the value (CB_HF_SET).
 *
 * Read in order, after the keys every architecture shares (sizes, heads,
 * RoPE, norms: userspace/lib/import/hfmodel.c), so a key here may override one
 * of those.
 */
struct cb_arch_hf_key {
	const char *key;
	cb_u32 how;
	cb_u32 field;
	cb_u32 def;
};

#define CB_HF_FIELD(f) ((cb_u32)__builtin_offsetof(struct cb_model_config, f))

/*
 * A tensor role (uapi's COLIBRI_T_*) and its name in one file format,
 * where it is not the usual one: GGUF's after "blk.N."; HF's after
 * "model.layers.N.", with one "%u" for a routed expert's number.
 */
struct cb_arch_name {
	cb_u32 role;
	const char *name;
};

/**
 * struct cb_arch_synth - the conventions `colibri synth` writes into a
 *	random model of an architecture (a stand-in for the family's,
 *	not any real checkpoint's values).
 * @rope_theta_bits: RoPE's base, as f32 bits (this code is integer-only).
 * @rms_eps_bits: RMSNorm's epsilon, as f32 bits.
 * @norm_topk_prob: the top-k routing weights renormalised to sum 1 (with
 *	top_k above 1).
 * @qkv_bias: q, k and v projections with biases.
 *
 * Of a scored router (DeepSeek, GLM), the defaults of synth's options:
 * @dense_layers: --dense-layers, the first layers with a dense MLP.
 * @dense_ffn_mult: --dense-ffn, as a multiple of --ffn.
 * @shared_experts: --shared-experts.
 * @topk_group: --topk-group (of 8 groups).
 * @routed_scale_bits: --routed-scale, as f32 bits.
 * @rope_part: the rotated part of each head, as a divisor of head_dim
 *	(GLM: 2, the leading half); 0: the whole head.
 */
struct cb_arch_synth {
	cb_u32 rope_theta_bits;
	cb_u32 rms_eps_bits;
	cb_u32 norm_topk_prob;
	cb_u32 qkv_bias;
	cb_u32 dense_layers;
	cb_u32 dense_ffn_mult;
	cb_u32 shared_experts;
	cb_u32 topk_group;
	cb_u32 routed_scale_bits;
	cb_u32 rope_part;
};

/**
 * struct cb_arch_scored - what the files of an architecture with a scored
 *	router (CB_ROUTER_SCORED: DeepSeek's) leave unsaid.
 * @score_func: CB_SCORE_*: its scores where config.json has no
 *	scoring_func; of two architectures sharing a GGUF name, sigmoid
 *	gating or a selection bias picks the sigmoid one.
 * @hf_topk_method: config.json's topk_method where absent ("greedy",
 *	"noaux_tc": a selection bias, groups ranked by their best two).
 * @scale_always: routed_scaling_factor scales renormalised weights too
 *	(V3), not only weights left unnormalised (V2).
 * @norm_any_k: norm_topk_prob renormalises a lone expert's weight too
 *	(GLM-4.5); DeepSeek's only with top_k above 1.
 */
struct cb_arch_scored {
	cb_u32 score_func;
	const char *hf_topk_method;
	cb_u32 scale_always;
	cb_u32 norm_any_k;
};

/* f32 bits of the values above */
#define CB_F32_1E4	0x461c4000u	/* 10000 */
#define CB_F32_1E6	0x49742400u	/* 1000000 */
#define CB_F32_150000	0x48127c00u	/* 150000 */
#define CB_F32_1EM6	0x358637bdu	/* 1e-6 */
#define CB_F32_1EM5	0x3727c5acu	/* 1e-5 */
#define CB_F32_2_5	0x40200000u	/* 2.5 */
#define CB_F32_16	0x41800000u	/* 16 */

/**
 * struct cb_arch_desc - one architecture.
 * @id: uapi's COLIBRI_ARCH_*: the model file's config.arch, and the
 *	index of this architecture in cb_archs[].
 * @name: the short name: sysfs's arch, `colibri info`, `ls`, `synth --arch`.
 * @hf_classes: config.json's architectures[0] read as this, NULL-ended;
 *	the first is the one a converted file reports.
 * @hf_model_type: config.json's model_type.
 * @hf_names: its HF tensor names that are not the usual ones
 *	(userspace/lib/import/hf_names.c), ended by a NULL name; NULL if none.
 * @hf_config: its config.json keys, ended by CB_HF_END; the blocks of the
 *	GPT-OSS, MLA and Gated DeltaNet kinds have readers of their own
 *	(hf_gpt_oss.c, hf_deepseek.c, hf_delta.c).
 * @gguf_arch: GGUF general.architecture read as this (with @ffn: llama
 *	and Mixtral share "llama"); NULL if none.
 * @gguf_rope: enum cb_rope_layout of its GGUF q/k tensors (llama.cpp
 *	permuted llama's to interleaved pairs; HF's are always NeoX).
 * @gguf_norm_topk: norm_topk_prob of its GGUF files, which do not say.
 * @gguf_expert_ffn_key: the GGUF metadata key (after "ARCH.") that states
 *	a routed expert's FFN size: "expert_feed_forward_length", or
 *	"feed_forward_length" where llama.cpp reuses the dense one.
 * @gguf_names: its GGUF tensor names that are not llama.cpp's usual ones,
 *	ended by a NULL name; NULL if none.
 * @hf_prefix: where its text model's tensors are, in place of "model."
 *	(a multimodal checkpoint's "model.language_model."); NULL: "model.".
 * @hf_norm_centred: its HF RMSNorms multiply by 1 + w (Qwen3.5): the file
 *	holds 1 + w (userspace/lib/import/hf_values.c).
 * @hf_delta_fused: its HF DeltaNet projections are fused per key head
 *	(Qwen3-Next's in_proj_qkvz and in_proj_ba): the file's delta_qkv,
 *	delta_z, delta_b and delta_a are cut from them (hf_fused.c).
 * @hf_add_bos: its HF tokenizers add BOS when tokenizer_config.json does
 *	not say (SentencePiece's Llama and Mixtral).
 * @qk_norm: enum cb_qk_norm: RMSNorm of q and k before RoPE.
 * @attn: enum cb_attn_kind.
 * @ffn: enum cb_ffn_kind.
 * @router: enum cb_router_kind.
 * @expert: enum cb_expert_kind.
 * @scored: its scored router's unsaid defaults (CB_ROUTER_SCORED only).
 * @synth: what `colibri synth` gives a model of this architecture.
 */
struct cb_arch_desc {
	cb_u32 id;
	const char *name;
	const char *const *hf_classes;
	const char *hf_model_type;
	const struct cb_arch_name *hf_names;
	const struct cb_arch_hf_key *hf_config;
	const char *gguf_arch;
	cb_u32 gguf_rope;
	cb_u32 gguf_norm_topk;
	const char *gguf_expert_ffn_key;
	const struct cb_arch_name *gguf_names;
	const char *hf_prefix;
	cb_u32 hf_norm_centred;
	cb_u32 hf_delta_fused;
	cb_u32 hf_add_bos;
	cb_u32 qk_norm;
	cb_u32 attn;
	cb_u32 ffn;
	cb_u32 router;
	cb_u32 expert;
	struct cb_arch_scored scored;
	struct cb_arch_synth synth;
};

/* The architectures, one file each (arch_NAME.c), listed in cb_arch_list.h. */
#define CB_ARCH(id, desc) \
	extern const struct cb_arch_desc desc;
#include "arch/cb_arch_list.h"
#undef CB_ARCH

/* Every architecture, indexed by id; cb_arch_count entries, none NULL. */
extern const struct cb_arch_desc *const cb_archs[];
extern const cb_u32 cb_arch_count;

/* The architecture of @id, or NULL for an unknown one. */
static inline const struct cb_arch_desc *cb_arch_of(cb_u32 id)
{
	return id < cb_arch_count ? cb_archs[id] : CB_NULL;
}

const struct cb_arch_desc *cb_arch_by_name(const char *name);
const struct cb_arch_desc *cb_arch_by_hf_class(const char *cls);
const struct cb_arch_desc *cb_arch_by_gguf(const char *gguf_arch, int moe);
const struct cb_arch_desc *cb_arch_by_gguf_scores(const char *gguf_arch, cb_u32 score_func);
const char *cb_arch_name_in(const struct cb_arch_name *names, cb_u32 role, const char *usual);

/* Does @a use struct cb_gpt_oss_config (sinks and windows, clamped experts)? */
static inline int cb_arch_uses_oss(const struct cb_arch_desc *a)
{
	return a && (a->attn == CB_ATTN_GQA_SINKS || a->expert == CB_EXPERT_SWIGLU_OSS);
}

#endif /* CB_ARCH_H */

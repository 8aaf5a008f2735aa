/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_engine.h - the public API of the Colibri compute engine.
 *
 * A model is a config (struct cb_model_config) plus a tensor table (struct
 * cb_model_weights) whose pointers the caller owns and keeps alive.  An
 * engine instance is carved out of one caller-provided arena: the engine
 * itself, the KV cache of every sequence slot and all scratch for a batch of
 * up to max_batch_tokens tokens.  Nothing is allocated after cb_engine_init().
 *
 * This header is included by non-FPU kernel code, so every function here
 * takes and returns only integers and pointers, and no struct here has a
 * floating-point field: real numbers are stored as IEEE-754 binary32 bit
 * patterns in cb_u32 fields (named *_bits) or as integer fixed point.
 */
#ifndef CB_ENGINE_H
#define CB_ENGINE_H

#include "core/cb_limits.h"
#include "core/cb_platform.h"
#include "quant/cb_quant.h"

/*
 * The multiply-adds a gemm chunk aims at, for load balance across threads.
 * A chunk is also capped by time: every chunk of every step is planned to
 * at most 100 us of the variant that runs it (cb_engine_priv.h,
 * CB_CHUNK_PS), because in the kernel one chunk runs inside one
 * kernel_fpu_begin/end section.  Chunk boundaries never change a result:
 * they do not depend on the thread count, and where they depend on the
 * batch or the ISA they only cut work whose result is computed the same
 * way whatever the cut.
 */
#define CB_CHUNK_TARGET_FLOPS (512u * 1024u)

/*
 * ISA variants of the engine, in increasing order of preference.  ABI:
 * uapi's COLIBRI_ISA_* (GET_INFO reports one, max_isa caps them), asserted
 * equal in kmod/colibri_main.c.
 */
enum cb_isa_level {
	CB_ISA_SCALAR = 0,	/* portable C, the reference */
	CB_ISA_AVX2 = 1,	/* AVX2 + FMA + F16C */
	CB_ISA_AVX512 = 2,	/* AVX-512 F/BW/VL */
	CB_ISA_AVX512_VNNI = 3,	/* the same with AVX512-VNNI int8 dot products */
	CB_ISA__COUNT
};

/* Their names ("avx2"), and the lookups (cb_isa_names.c). */
extern const char *const cb_isa_names[CB_ISA__COUNT];
int cb_isa_level_of(const char *name);
char *cb_isa_name_list(char *buf, cb_u32 len);

/*
 * The enumerated config fields.  Their numbers are ABI: uapi's
 * COLIBRI_ROPE_*, COLIBRI_QK_NORM_* (uapi/colibri_format.h), asserted equal
 * in cb_format.c.  The architecture is uapi's COLIBRI_ARCH_* itself, the
 * index of its entry in cb_archs[] (arch/cb_arch.h).
 */

/* How RoPE pairs the dimensions of a head. */
enum cb_rope_layout {
	CB_ROPE_NEOX = 0,	/* HF: pair (i, i + d/2) ("rotate_half") */
	CB_ROPE_INTERLEAVED = 1,/* GGUF llama: pair (2i, 2i + 1) */
};

/* RMSNorm applied to q and k before RoPE. */
enum cb_qk_norm {
	CB_QK_NORM_NONE = 0,
	CB_QK_NORM_HEAD = 1,	/* Qwen3: per head, weight [head_dim] */
	CB_QK_NORM_FULL = 2,	/* OLMoE: whole projection, weight [heads*head_dim] */
};

/*
 * GPT-OSS (arch COLIBRI_ARCH_GPT_OSS; all zero for the others): alternating
 * sliding-window and full attention with a learned sink logit per head,
 * o_proj bias, router bias, expert biases and the clamped SwiGLU.  Bit l
 * of sliding_layers: layer l attends the last sliding_window positions.
 */
struct cb_gpt_oss_config {
	cb_u32 sliding_window;
	cb_u32 swiglu_limit_bits;	/* f32 bits of swiglu_limit (7.0) */
	cb_u32 swiglu_alpha_bits;	/* f32 bits of the sigmoid's alpha (1.702) */
	cb_u32 reserved;
	cb_u32 sliding_layers[CB_MAX_LAYERS / 32];
};

/* How a router scores the experts (struct cb_mla_config.score_func). */
enum cb_score_func {
	CB_SCORE_SOFTMAX = 0,	/* softmax over all experts (V2, every other MoE) */
	CB_SCORE_SIGMOID = 1,	/* sigmoid of each logit (V3) */
};

/**
 * struct cb_mla_config - DeepSeek-V2/V3: multi-head latent attention and
 * the routing variants.  All zero for every other architecture.
 *
 * MLA (kv_lora_rank != 0): n_kv_heads == n_heads, head_dim == qk_nope_dim
 * + qk_rope_dim (the q and k head), v_head_dim the value head.  The cache
 * holds, per token and layer, the normed latent (kv_lora_rank) and the
 * roped shared key (qk_rope_dim): docs/format.md, "MLA".
 *
 * Routing (any MoE layer): scores are softmax or sigmoid of the router
 * logits; selection adds the router's bias (sel_bias) to them, keeps the
 * topk_group best of n_group equal groups of experts (a group ranked by
 * the sum of its group_top best selection scores) and takes the top_k
 * best of those; the weights are the unbiased scores of the chosen
 * experts, divided by their sum when norm_topk_prob, times route_scale.
 */
struct cb_mla_config {
	cb_u32 q_lora_rank;		/* 0: q = Wq x directly (V2-Lite) */
	cb_u32 kv_lora_rank;		/* latent width; 0: not MLA */
	cb_u32 qk_nope_dim;		/* per-head key/query part without RoPE */
	cb_u32 qk_rope_dim;		/* per-head query part and shared key with RoPE */
	cb_u32 v_head_dim;		/* per-head value */
	cb_u32 attn_scale_bits;		/* f32 bits of the softmax scale; 0 = 1/sqrt(head_dim) */
	cb_u32 score_func;		/* enum cb_score_func */
	cb_u32 n_group;			/* expert groups; 0 or 1 = no groups */
	cb_u32 topk_group;		/* groups a token may pick from */
	cb_u32 group_top;		/* a group's rank: sum of its best group_top */
	cb_u32 sel_bias;		/* router has a selection-only bias [n_experts] */
	cb_u32 route_scale_bits;	/* f32 bits of routed_scaling_factor; 0 = 1 */
};

/**
 * struct cb_model_config - everything the forward pass needs to know.
 *
 * A layer l has a routed-expert MLP when n_experts > 0, bit l of
 * mlp_only_layers is clear and (l + 1) % decoder_sparse_step == 0 (the
 * Qwen2-MoE rule; Mixtral and OLMoE use step 1 and no mlp_only layers).
 * Every other layer has a dense SwiGLU MLP of dense_ffn.  A dense Llama has
 * n_experts == 0.
 */
/**
 * struct cb_delta_config - the Gated DeltaNet layers of a hybrid model
 * (Qwen3.5/3.6-MoE; uapi struct colibri_file_delta, same fields).  All
 * zero for the models without them.
 *
 * Layer l is a DeltaNet layer unless (l + 1) % full_interval == 0; the
 * others are full attention with an output gate (wq holds, per head, q
 * then its gate).  A DeltaNet layer keeps, per sequence slot, the last
 * conv_kernel - 1 inputs of its convolution and a k_dim x v_dim state per
 * value head, whatever the context: arch/cb_delta.h.
 */
struct cb_delta_config {
	cb_u32 k_heads;			/* query/key heads */
	cb_u32 v_heads;			/* value heads, a multiple of k_heads */
	cb_u32 k_dim;			/* a query/key head */
	cb_u32 v_dim;			/* a value head */
	cb_u32 conv_kernel;		/* the causal convolution's taps */
	cb_u32 full_interval;		/* every full_interval-th layer attends fully */
	cb_u32 flags;			/* CB_DELTA_F_* (uapi's COLIBRI_DELTA_F_*) */
};

/* value head h uses key head h % k_heads (GGUF's order), not h / (v_heads / k_heads) */
#define CB_DELTA_F_TILED	0x1u
#define CB_DELTA_F_ALL		0x1u

/*
 * RoPE frequency scaling (uapi struct colibri_file_rope_scaling, same
 * fields): kind CB_ROPE_SCALING_NONE (all else 0) or _YARN.  Reals are f32
 * bit patterns; cb_rope.c has the formulas.
 */
enum cb_rope_scaling_kind { CB_ROPE_SCALING_NONE = 0, CB_ROPE_SCALING_YARN = 1 };
#define CB_ROPE_F_TRUNCATE	0x1u	/* HF truncate: floor/ceil the range */
#define CB_ROPE_F_ATTN_FACTOR	0x2u	/* mscale_bits is HF attention_factor */
#define CB_ROPE_F_ALL		(CB_ROPE_F_TRUNCATE | CB_ROPE_F_ATTN_FACTOR)

struct cb_rope_scaling {
	cb_u32 kind;			/* enum cb_rope_scaling_kind */
	cb_u32 factor_bits;		/* >= 1 */
	cb_u32 orig_context;		/* original_max_position_embeddings */
	cb_u32 beta_fast_bits;		/* > beta_slow (HF default 32) */
	cb_u32 beta_slow_bits;		/* > 0 (HF default 1) */
	cb_u32 mscale_bits;		/* >= 0 (1); attention factor with F_ATTN_FACTOR */
	cb_u32 mscale_all_dim_bits;	/* >= 0 (0) */
	cb_u32 flags;			/* CB_ROPE_F_* */
};

struct cb_model_config {
	cb_u32 arch;			/* COLIBRI_ARCH_*: cb_archs[arch] */
	cb_u32 vocab_size;
	cb_u32 hidden;			/* hidden_size */
	cb_u32 n_layers;
	cb_u32 n_heads;			/* query heads */
	cb_u32 n_kv_heads;		/* key/value heads (GQA), divides n_heads */
	cb_u32 head_dim;		/* even */
	cb_u32 expert_ffn;		/* moe_intermediate_size (per routed expert) */
	cb_u32 n_experts;		/* routed experts; 0 for a dense model */
	cb_u32 top_k;			/* experts per token, 1..CB_MAX_TOP_K */
	cb_u32 norm_topk_prob;		/* renormalise the top-k weights to sum 1 */
	cb_u32 shared_ffn;		/* shared expert intermediate size, 0 = none */
	cb_u32 shared_gate;		/* shared expert output * sigmoid(gate . x) */
	cb_u32 dense_ffn;		/* intermediate_size of dense-MLP layers */
	cb_u32 decoder_sparse_step;	/* >= 1 */
	cb_u32 rope_layout;		/* enum cb_rope_layout */
	cb_u32 rope_theta_bits;		/* f32 bits of rope_theta (e.g. 1e6) */
	cb_u32 rms_eps_bits;		/* f32 bits of rms_norm_eps */
	cb_u32 clip_qkv_bits;		/* f32 bits of OLMoE clip_qkv, 0 = none */
	cb_u32 qkv_bias;		/* q/k/v projections have a bias */
	cb_u32 qk_norm;			/* enum cb_qk_norm */
	cb_u32 tied_embeddings;		/* lm_head is the embedding matrix */
	cb_u32 max_context;		/* max_position_embeddings */
	cb_u32 rope_dim;		/* RoPE'd leading dims of a head; 0 = head_dim */
	cb_u64 mlp_only_layers[CB_MAX_LAYERS / 64];	/* bitmap of dense layers */
	struct cb_rope_scaling rope_scaling;
	struct cb_gpt_oss_config oss;	/* GPT-OSS only */
	struct cb_mla_config mla;	/* DeepSeek; zero otherwise */
	struct cb_delta_config delta;	/* Qwen3.5; zero otherwise */
};

/* Is this config multi-head latent attention (DeepSeek-V2/V3)? */
static inline int cb_is_mla(const struct cb_model_config *c)
{
	return c->mla.kv_lora_rank != 0;
}

/**
 * struct cb_tensor - one weight tensor, in caller-owned memory.
 *
 * A matrix is stored row-major as @rows rows of @cols elements of @dtype
 * (HF Linear layout: rows = out_features, cols = in_features), each row
 * cb_dtype_row_bytes(dtype, cols) bytes, rows contiguous.  A vector has
 * rows == 1.  data == NULL means "absent".  Norm weights and biases must be
 * f32; matrices may be any cb_dtype (block types need cols % 32 == 0).
 */
struct cb_tensor {
	const void *data;
	cb_u32 dtype;		/* enum cb_dtype */
	cb_u32 rows;
	cb_u32 cols;
	cb_u32 reserved;
};

/*
 * One routed expert: SwiGLU down(silu(gate x) * up x).  (GPT-OSS experts
 * have biases and the clamped SwiGLU: struct cb_gpt_oss_layer.)
 */
struct cb_expert_weights {
	struct cb_tensor gate;	/* [expert_ffn, hidden] */
	struct cb_tensor up;	/* [expert_ffn, hidden] */
	struct cb_tensor down;	/* [hidden, expert_ffn] */
};

/* GPT-OSS tensors of a layer (all f32; absent for the other architectures) */
struct cb_gpt_oss_layer {
	struct cb_tensor sinks;		/* [n_heads] */
	struct cb_tensor bo;		/* [hidden] o_proj bias */
	struct cb_tensor router_bias;	/* [n_experts] */
	struct cb_tensor gate_bias;	/* [n_experts, expert_ffn] */
	struct cb_tensor up_bias;	/* [n_experts, expert_ffn] */
	struct cb_tensor down_bias;	/* [n_experts, hidden] */
};

/*
 * A Gated DeltaNet layer's tensors, in place of wq .. wo (Kd = k_heads *
 * k_dim, Vd = v_heads * v_dim; conv_dim = 2 Kd + Vd).
 */
struct cb_delta_layer {
	struct cb_tensor qkv;		/* [conv_dim, hidden]: q, k, v before the conv */
	struct cb_tensor z;		/* [Vd, hidden]: the output gate */
	struct cb_tensor b;		/* [v_heads, hidden]: beta = sigmoid(b x) */
	struct cb_tensor a;		/* [v_heads, hidden]: the decay's input */
	struct cb_tensor conv;		/* [conv_dim, conv_kernel] f32 */
	struct cb_tensor decay;		/* [v_heads] f32: -exp(A_log) */
	struct cb_tensor dt_bias;	/* [v_heads] f32 */
	struct cb_tensor norm;		/* [v_dim] f32 */
	struct cb_tensor out;		/* [hidden, Vd] */
};

struct cb_layer_weights {
	struct cb_tensor attn_norm;	/* [hidden] */
	struct cb_tensor wq;		/* [n_heads*head_dim, hidden]; twice the rows when gated */
	struct cb_tensor wk;		/* [n_kv_heads*head_dim, hidden] */
	struct cb_tensor wv;		/* [n_kv_heads*head_dim, hidden] */
	struct cb_tensor wo;		/* [hidden, n_heads*head_dim] */
	struct cb_tensor bq, bk, bv;	/* biases, when qkv_bias */
	struct cb_tensor q_norm;	/* [head_dim] or [n_heads*head_dim] */
	struct cb_tensor k_norm;	/* [head_dim] or [n_kv_heads*head_dim] */
	struct cb_tensor ffn_norm;	/* [hidden] (post_attention_layernorm) */
	/* MLA (cb_is_mla()): wq is [n_heads*head_dim, hidden] when q_lora_rank is 0 */
	struct cb_tensor q_a;		/* [q_lora_rank, hidden] */
	struct cb_tensor q_a_norm;	/* [q_lora_rank] */
	struct cb_tensor q_b;		/* [n_heads*head_dim, q_lora_rank] */
	struct cb_tensor kv_a;		/* [kv_lora_rank + qk_rope_dim, hidden] */
	struct cb_tensor kv_a_norm;	/* [kv_lora_rank] */
	struct cb_tensor k_b;		/* [n_heads*kv_lora_rank, qk_nope_dim]: per head W_uk^T */
	struct cb_tensor v_b;		/* [n_heads*v_head_dim, kv_lora_rank]: per head W_uv */
	/* routed-expert layers */
	struct cb_tensor router;	/* [n_experts, hidden] */
	struct cb_tensor router_sel_bias;	/* [n_experts], when mla.sel_bias */
	const struct cb_expert_weights *experts;	/* [n_experts] */
	struct cb_tensor shared_gate_proj;	/* [shared_ffn, hidden] */
	struct cb_tensor shared_up_proj;	/* [shared_ffn, hidden] */
	struct cb_tensor shared_down_proj;	/* [hidden, shared_ffn] */
	struct cb_tensor shared_expert_gate;	/* [1, hidden] */
	/* dense-MLP layers */
	struct cb_tensor mlp_gate;	/* [dense_ffn, hidden] */
	struct cb_tensor mlp_up;	/* [dense_ffn, hidden] */
	struct cb_tensor mlp_down;	/* [hidden, dense_ffn] */
	struct cb_gpt_oss_layer oss;	/* GPT-OSS layers */
	struct cb_delta_layer delta;	/* Gated DeltaNet layers */
};

struct cb_model_weights {
	struct cb_tensor embed;			/* [vocab, hidden] */
	const struct cb_layer_weights *layers;	/* [n_layers] */
	struct cb_tensor final_norm;		/* [hidden] */
	struct cb_tensor lm_head;		/* [vocab, hidden]; ignored if tied */
};

/* Is layer l a Gated DeltaNet layer (else: attention)? */
static inline int cb_layer_is_delta(const struct cb_model_config *c, cb_u32 l)
{
	return c->delta.full_interval && (l + 1) % c->delta.full_interval != 0;
}

/* Does layer l route to experts (else: dense MLP)? */
static inline int cb_layer_is_moe(const struct cb_model_config *c, cb_u32 l)
{
	if (!c->n_experts || l >= CB_MAX_LAYERS)
		return 0;
	if (c->mlp_only_layers[l / 64] >> (l % 64) & 1)
		return 0;
	return (l + 1) % (c->decoder_sparse_step ? c->decoder_sparse_step : 1) == 0;
}

/**
 * struct cb_engine_params - the shape of one engine instance.
 * @max_batch_tokens: most tokens one cb_engine_forward() call may carry.
 * @n_seqs: sequence slots, each with its own KV cache.
 * @max_context: positions per slot (<= config max_context if that is set).
 * @isa_max_level: cap for the ISA variant (enum cb_isa_level).
 * @chunk_ns: most work one parallel_for chunk is planned to, in ns of the
 *	scalar code on the reference machine; 0 (what the kernel passes) is
 *	the default, 100 us.  Results never depend on it (tests set it tiny
 *	to cut every step into its smallest chunks and compare).
 */
struct cb_engine_params {
	cb_u32 max_batch_tokens;
	cb_u32 n_seqs;
	cb_u32 max_context;
	cb_u32 isa_max_level;
	cb_u32 chunk_ns;
};

struct cb_engine;

/*
 * cb_config_check() - the one check of a config (cb_config.c), shared by
 * model setup and the file validator: 0, or -CB_EINVAL with a one-line
 * reason naming the field in @why (which may be NULL).
 */
int cb_config_check(const struct cb_model_config *cfg, char *why, cb_u32 whylen);

/**
 * cb_engine_check_model() - validate a config and tensor table.
 *
 * cb_config_check(), then every shape against the config and the dtypes
 * (norms and biases f32, block types only on whole blocks).
 * Return: 0 or -CB_EINVAL.
 */
int cb_engine_check_model(const struct cb_model_config *cfg,
			  const struct cb_model_weights *w);

/**
 * cb_engine_arena_size() - bytes of arena cb_engine_init() needs.
 *
 * Return: the size (aligned to 64), or 0 if the parameters are invalid or
 * the size overflows.
 */
cb_u64 cb_engine_arena_size(const struct cb_model_config *cfg,
			    const struct cb_engine_params *p);

/**
 * cb_engine_init() - build an engine inside @arena.
 * @out: receives the engine (it lives at the start of the arena).
 * @cfg, @w: the model; @w and the memory it points to must outlive the engine
 *	(they are referenced, not copied); @cfg is copied.
 * @p: instance shape.
 * @arena, @arena_size: caller memory, 64-byte aligned, at least
 *	cb_engine_arena_size() bytes.  The engine never allocates afterwards.
 *
 * Does no floating point.  All sequence slots start empty.
 * Return: 0, -CB_EINVAL (bad model or parameters) or -CB_ENOMEM (arena too
 * small).
 */
int cb_engine_init(struct cb_engine **out, const struct cb_model_config *cfg,
		   const struct cb_model_weights *w,
		   const struct cb_engine_params *p, void *arena,
		   cb_u64 arena_size);

/* Arena bytes actually used by init (high-water mark; constant afterwards). */
cb_u64 cb_engine_arena_used(const struct cb_engine *e);

/* Name of the ISA variant the engine runs ("scalar", "avx2", ...). */
const char *cb_engine_isa_name(const struct cb_engine *e);

/**
 * struct cb_batch - one forward call.
 * @n_tokens: tokens in this batch, 1..max_batch_tokens.
 * @tokens: [n_tokens] token ids.
 * @seq: [n_tokens] sequence slot of each token.
 * @pos: [n_tokens] position of each token in its sequence.  A slot's tokens
 *	must appear in increasing consecutive positions, and the first of them
 *	must be <= the slot's current length (a smaller value rewinds the slot:
 *	later positions are forgotten).  A prompt's prefill and one decode step
 *	of many slots may share one batch.
 * @logits_mask: [n_tokens] non-zero = write this token's logits; NULL means
 *	every token.
 * @logits: out, float[n_out][vocab_size] as raw f32 (n_out = tokens selected
 *	by the mask, in batch order).
 * @route_trace: optional out, cb_u32[n_tokens][n_layers][top_k][2]: expert id
 *	and f32 bits of its weight, in rank order; dense layers get
 *	CB_TRACE_NONE and 0.
 */
struct cb_batch {
	cb_u32 n_tokens;
	cb_u32 flags;			/* must be 0 */
	const cb_u32 *tokens;
	const cb_u32 *seq;
	const cb_u32 *pos;
	const cb_u8 *logits_mask;
	void *logits;
	cb_u32 *route_trace;
};

#define CB_TRACE_NONE 0xffffffffu

/**
 * cb_engine_forward() - run the model over one batch.
 *
 * Floating-point work happens inside @ex->parallel_for chunks, each planned
 * to at most about 100 us of the running variant (p->chunk_ns); an
 * attention chunk covers at most one split of a token's cached positions,
 * longer contexts are split and merged; between
 * steps the calling thread does only integer bookkeeping and calls
 * @ex->yield (if set); a non-zero return aborts with that value.  Slot
 * lengths change only when the whole batch succeeded; an aborted batch that
 * rewound a slot (first position < its length) leaves that slot's cache
 * inconsistent, so reset it.
 * Return: 0, -CB_EINVAL (bad batch) or the yield value.
 */
int cb_engine_forward(struct cb_engine *e, struct cb_exec *ex,
		      const struct cb_batch *b);

/* Forget sequence slot @seq (length back to 0).  Return: 0 or -CB_EINVAL. */
int cb_engine_seq_reset(struct cb_engine *e, cb_u32 seq);

/* Current length (positions filled) of slot @seq, or -CB_EINVAL. */
int cb_engine_seq_len(const struct cb_engine *e, cb_u32 seq);

/**
 * struct cb_sample_params - token sampling, integers only.
 * @temperature_milli: temperature * 1000; 0 = greedy (argmax).
 * @top_k: keep the k most likely tokens; 0 = no limit.
 * @top_p_ppm: nucleus mass in parts per million; 0 or >= 1000000 = off.
 * @seed: PRNG seed.  The draw for step n uses splitmix64(seed, n), so the
 *	same (seed, counter, logits) always gives the same token.
 */
struct cb_sample_params {
	cb_u32 temperature_milli;
	cb_u32 top_k;
	cb_u32 top_p_ppm;
	cb_u32 reserved;
	cb_u64 seed;
};

/* Scratch bytes cb_sample() needs for a vocabulary of n tokens. */
cb_u64 cb_sample_scratch_size(cb_u32 n);

/**
 * cb_sample_ex() - pick one token from a row of logits.
 * @ex: the executor the work runs on, in bounded chunks; NULL runs the same
 *	chunks one after another on the calling thread.
 * @logits: float[n] (raw f32).
 * @scratch: cb_sample_scratch_size(n) bytes, 8-byte aligned.
 * @counter: the draw number (e.g. the position), mixed with the seed.
 *
 * Greedy (temperature 0 or top_k 1) is the argmax, ties to the lower id.
 * Otherwise token i is drawn with probability w_i / (mass kept), w_i =
 * exp((logit_i - max) / T), over the kept set: the first top_k tokens of
 * the order (larger w first, then lower id), cut further to the shortest
 * prefix of that order whose mass reaches top_p of the mass top_k kept.
 * NaN logits are never drawn (all NaN: token 0); +inf logits, if any, share
 * the draw equally.  The token depends only on (seed, counter, logits),
 * never on the thread count.
 *
 * Every chunk is O(4096 tokens) of work; the calling thread does O(chunks)
 * between them and never calls ex->yield.  Kernel callers run it inside an
 * FPU section (parallel_for leaves and re-enters it as it needs).
 * Return: token id, or -CB_EINVAL.
 */
int cb_sample_ex(struct cb_exec *ex, const void *logits, cb_u32 n,
		 const struct cb_sample_params *p, cb_u64 counter, void *scratch);

/* cb_sample_ex() on the calling thread alone. */
int cb_sample(const void *logits, cb_u32 n, const struct cb_sample_params *p,
	      cb_u64 counter, void *scratch);

/*
 * cb_sample_ex() with the engine's own scratch (not thread safe per engine);
 * cb_engine_sample() is the same on the calling thread alone.
 */
int cb_engine_sample_ex(struct cb_engine *e, struct cb_exec *ex, const void *logits,
			const struct cb_sample_params *p, cb_u64 counter);
int cb_engine_sample(struct cb_engine *e, const void *logits,
		     const struct cb_sample_params *p, cb_u64 counter);

/*
 * Routed experts on another executor.
 *
 * In a MoE layer the engine groups the batch by expert.  When the host set
 * ex->experts_submit, the engine then describes each selected expert as one
 * task (in expert order) and calls experts_submit(ex, tasks, n) with every
 * task's state CB_TASK_CPU.  The host sets CB_TASK_TAKEN on the tasks it
 * hands elsewhere; the engine runs the others on the CPU meanwhile.  If any
 * was taken, the engine then calls experts_wait(ex, tasks, n): on return
 * every taken task is either CB_TASK_DONE (its @y rows are written) or back
 * to CB_TASK_CPU (it failed, was refused late or timed out: the engine runs
 * it on the CPU).  The weighted combination is the same either way, so an
 * executor that computes what cb_expert_ffn() computes leaves every logit
 * bit-identical.
 *
 * @x and @y point into the engine's scratch: valid from submit until wait
 * returns (or, if submit or wait fails, until that call returns), never
 * after.  A host whose executor may finish late must stage through its own
 * buffers.
 */
enum cb_task_state {
	CB_TASK_CPU = 0,	/* the engine runs it */
	CB_TASK_TAKEN = 1,	/* the host took it, wait() will say how it went */
	CB_TASK_DONE = 2,	/* the host wrote @y */
};

/**
 * struct cb_expert_task - one routed expert of one layer, for every token
 * of the batch routed to it.
 * @layer, @expert: which one.
 * @n_tokens: rows of @x and @y (>= 1).
 * @state: enum cb_task_state.
 * @w: its weights (gate, up: [expert_ffn, hidden]; down: [hidden, expert_ffn]).
 * @x: f32 [n_tokens][hidden]: the normed hidden states of its tokens.
 * @y: f32 [n_tokens][hidden]: out, down(silu(gate x) * up x), unweighted.
 * @tokens: [n_tokens] the batch index of each row (increasing).
 */
struct cb_expert_task {
	cb_u32 layer;
	cb_u32 expert;
	cb_u32 n_tokens;
	cb_u32 state;
	const struct cb_expert_weights *w;
	const void *x;
	void *y;
	const cb_u32 *tokens;
};

/*
 * Scratch bytes cb_expert_ffn() needs for up to @max_tokens rows of an
 * expert of this shape, or 0 if the shape is invalid or the size overflows.
 */
cb_u64 cb_expert_scratch_size(cb_u32 hidden, cb_u32 expert_ffn, cb_u32 max_tokens);

/**
 * cb_expert_ffn() - one routed expert over @n rows, computed exactly as the
 * engine computes it at the same ISA level (bit for bit).
 * @isa_max_level: cap for the ISA variant (enum cb_isa_level), as in
 *	struct cb_engine_params.
 * @w: the expert's tensors (shapes checked: hidden = gate.cols).
 * @n: rows, 1..the max_tokens the scratch was sized for.
 * @x: f32 [n][hidden] in; @y: f32 [n][hidden] out.
 * @scratch: cb_expert_scratch_size(hidden, expert_ffn, >= n) bytes,
 *	64-byte aligned.
 *
 * Single-threaded floating point: kernel callers run it inside an FPU
 * section (and bound @n to bound the section).
 * Return: 0 or -CB_EINVAL.
 */
int cb_expert_ffn(int isa_max_level, const struct cb_expert_weights *w, cb_u32 n,
		  const void *x, void *y, void *scratch);

#endif /* CB_ENGINE_H */

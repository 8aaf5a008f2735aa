/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * colibri_format.h - the .colibri model file, byte for byte.
 *
 * A .colibri file is one self-contained model: architecture config, tensor
 * directory, tokenizer and weights, laid out so that the weights can be
 * placed in memory by one copy (or one mmap) and used where they land.
 * docs/format.md describes it in prose; this header is the definition.
 *
 *   offset 0            struct colibri_file_header     (header_size bytes)
 *   dir_offset          struct colibri_file_tensor[n_tensors]
 *                       (dir_offset == header_size, 64 bytes per entry)
 *   tok_offset          tokenizer section (tok_size bytes, verbatim HF
 *                       tokenizer.json), anywhere between the end of the
 *                       directory and data_offset
 *   tmpl_offset         chat template section (optional, flag
 *                       COLIBRI_FILE_F_CHAT_TEMPLATE: tmpl_size bytes of the
 *                       model's Jinja chat template, UTF-8), likewise between
 *                       the directory and data_offset, not overlapping the
 *                       tokenizer
 *   data_offset         data region, data_offset % 4096 == 0, up to the end
 *                       of the file (data_offset + data_size == file_size);
 *                       tensor offsets are relative to data_offset and
 *                       multiples of data_align (>= 64)
 *
 * All integers little-endian.  Every reserved field and every unknown flag
 * bit must be zero; readers reject files where they are not, so that later
 * versions can give them a meaning.  Tensors appear in the directory in the
 * canonical order of docs/format.md (the order of enum colibri_tensor_role,
 * layer by layer, expert by expert), with non-decreasing offsets, so a reader
 * proves "each required tensor exactly once, no overlaps" in one pass.
 *
 * Checksums are CRC32C (Castagnoli, reflected polynomial 0x82F63B78, initial
 * value and final xor 0xFFFFFFFF; crc32c("123456789") == 0xE3069283):
 * header_crc32c covers bytes [0, dir_offset + n_tensors * 64) with the
 * header_crc32c field itself taken as zero; tok_crc32c covers the tokenizer
 * section; tmpl_crc32c covers the chat template section; each directory
 * entry's crc32c covers that tensor's bytes.
 *
 * Versioning: @version changes only on incompatible changes (readers refuse
 * versions they do not know).  Compatible additions use reserved fields or
 * flag bits, which old files have as zero.
 */
#ifndef _UAPI_LINUX_COLIBRI_FORMAT_H
#define _UAPI_LINUX_COLIBRI_FORMAT_H

/*
 * The freestanding engine (kmod/engine/format/cb_format.h) provides __u8..__u64
 * itself and defines COLIBRI_FORMAT_NO_LINUX_TYPES before including us.
 */
#ifndef COLIBRI_FORMAT_NO_LINUX_TYPES
#include <linux/types.h>
#endif

#define COLIBRI_FILE_MAGIC		"COLIBRI\0"	/* 8 bytes, with the NUL */
#define COLIBRI_FILE_MAGIC_LEN		8
#define COLIBRI_FILE_VERSION		1

#define COLIBRI_FILE_HEADER_SIZE	512
#define COLIBRI_FILE_TENSOR_SIZE	64
#define COLIBRI_FILE_CONFIG_SIZE	160

/* The data region starts on this boundary (a page: mmap and DMA friendly). */
#define COLIBRI_FILE_DATA_ALIGN		4096
/*
 * Every tensor starts on a multiple of data_align, which is a power of two
 * between these two bounds.
 */
#define COLIBRI_FILE_TENSOR_ALIGN_MIN	64
#define COLIBRI_FILE_TENSOR_ALIGN_MAX	(2u << 20)

#define COLIBRI_FILE_NAME_LEN		64	/* NUL-terminated, NUL-padded */

/* Limits a reader enforces (a writer never needs more). */
#define COLIBRI_FILE_MAX_SIZE		(1ULL << 48)	/* 256 TiB */
#define COLIBRI_FILE_MAX_TOKENIZER	(256u << 20)	/* 256 MiB */
#define COLIBRI_FILE_MAX_CHAT_TEMPLATE	(1u << 20)	/* 1 MiB */

/* "none" in colibri_file_tensor.layer/.expert and in the token ids. */
#define COLIBRI_FILE_NONE		0xffffffffu

/* colibri_file_header.flags */
/* The file has a chat template section (tmpl_offset, tmpl_size, tmpl_crc32c). */
#define COLIBRI_FILE_F_CHAT_TEMPLATE	(1ULL << 0)
#define COLIBRI_FILE_F_ALL		COLIBRI_FILE_F_CHAT_TEMPLATE

/* colibri_file_header.tok_kind */
#define COLIBRI_TOK_NONE		0	/* no tokenizer section */
#define COLIBRI_TOK_HF_JSON		1	/* Hugging Face tokenizer.json */

/* colibri_file_header.tok_flags */
#define COLIBRI_TOK_F_ADD_BOS		(1u << 0)	/* prompts start with bos_id */
#define COLIBRI_TOK_F_ADD_EOS		(1u << 1)	/* append eos_id to inputs */
#define COLIBRI_TOK_F_ALL		(COLIBRI_TOK_F_ADD_BOS | COLIBRI_TOK_F_ADD_EOS)

/*
 * The numbers of the enumerated fields.  They are ABI (files carry them);
 * the engine's own enums (kmod/engine/core/cb_engine.h, cb_quant.h) equal them,
 * which kmod/engine/format/cb_format.c asserts at compile time.
 */

/* colibri_file_tensor.dtype: weight types (layouts in docs/format.md) */
#define COLIBRI_DT_F32			0
#define COLIBRI_DT_F16			1	/* IEEE half */
#define COLIBRI_DT_BF16			2	/* bfloat16 */
#define COLIBRI_DT_Q8_0			3	/* GGUF Q8_0: 32 x s8, f16 scale */
#define COLIBRI_DT_Q4_0			4	/* GGUF Q4_0: 32 x 4 bits, f16 scale */
#define COLIBRI_DT_Q4_1			5	/* GGUF Q4_1: q4_0 with an f16 offset */
#define COLIBRI_DT_Q5_0			6	/* GGUF Q5_0: 32 x 5 bits, f16 scale */
#define COLIBRI_DT_Q5_1			7	/* GGUF Q5_1: q5_0 with an f16 offset */
#define COLIBRI_DT_IQ4_NL		8	/* GGUF IQ4_NL: 32 x 4-bit table index */
#define COLIBRI_DT_Q2_K			9	/* GGUF Q2_K: 256-weight super-block */
#define COLIBRI_DT_Q3_K			10	/* GGUF Q3_K */
#define COLIBRI_DT_Q4_K			11	/* GGUF Q4_K */
#define COLIBRI_DT_Q5_K			12	/* GGUF Q5_K */
#define COLIBRI_DT_Q6_K			13	/* GGUF Q6_K */
#define COLIBRI_DT_IQ4_XS		14	/* GGUF IQ4_XS: 256, iq4_nl's table */
#define COLIBRI_DT_MXFP4		15	/* GGUF MXFP4: 32 x E2M1, E8M0 scale */
/*
 * Numbers being assigned on other branches (none valid in a file yet):
 * tensor roles 70..79 GPT-OSS, 88..95 DeepSeek (reserved).
 */

/* colibri_file_config.arch: the Hugging Face class the model came from */
#define COLIBRI_ARCH_LLAMA		0	/* LlamaForCausalLM (dense) */
#define COLIBRI_ARCH_MIXTRAL		1	/* MixtralForCausalLM */
#define COLIBRI_ARCH_QWEN2_MOE		2	/* Qwen2MoeForCausalLM */
#define COLIBRI_ARCH_QWEN3_MOE		3	/* Qwen3MoeForCausalLM */
#define COLIBRI_ARCH_OLMOE		4	/* OlmoeForCausalLM */
#define COLIBRI_ARCH_GPT_OSS		5	/* GptOssForCausalLM (ext_gpt_oss) */
#define COLIBRI_ARCH_DEEPSEEK_V2	6	/* DeepseekV2ForCausalLM (MLA) */
#define COLIBRI_ARCH_DEEPSEEK_V3	7	/* DeepseekV3ForCausalLM (MLA) */
#define COLIBRI_ARCH_GLM4_MOE		8	/* Glm4MoeForCausalLM */
#define COLIBRI_ARCH_QWEN3_5_MOE	9	/* Qwen3_5MoeForConditionalGeneration (ext_delta) */
#define COLIBRI_ARCH_QWEN3_NEXT		10	/* Qwen3NextForCausalLM (ext_delta) */

/* colibri_file_mla.score_func: how the router scores experts */
#define COLIBRI_SCORE_SOFTMAX		0
#define COLIBRI_SCORE_SIGMOID		1

/* colibri_file_config.rope_layout: how RoPE pairs a head's dimensions */
#define COLIBRI_ROPE_NEOX		0	/* HF: (i, i + d/2), "rotate_half" */
#define COLIBRI_ROPE_INTERLEAVED	1	/* GGUF llama: (2i, 2i + 1) */

/* colibri_file_rope_scaling.kind */
#define COLIBRI_ROPE_SCALING_NONE	0	/* plain RoPE: every other word 0 */
#define COLIBRI_ROPE_SCALING_YARN	1	/* YaRN (HF rope_type "yarn") */

/* colibri_file_rope_scaling.flags */
/* HF truncate (default true): floor/ceil the YaRN correction range. */
#define COLIBRI_ROPE_F_TRUNCATE		(1u << 0)
/*
 * HF attention_factor was given: @mscale_bits holds it verbatim (the
 * factor that scales cos and sin) instead of the mscale of the formula.
 */
#define COLIBRI_ROPE_F_ATTN_FACTOR	(1u << 1)
#define COLIBRI_ROPE_F_ALL		(COLIBRI_ROPE_F_TRUNCATE | COLIBRI_ROPE_F_ATTN_FACTOR)

/* colibri_file_config.qk_norm: RMSNorm of q and k before RoPE */
#define COLIBRI_QK_NORM_NONE		0
#define COLIBRI_QK_NORM_HEAD		1	/* Qwen3: per head, [head_dim] */
#define COLIBRI_QK_NORM_FULL		2	/* OLMoE: whole projection */

/*
 * struct colibri_file_config - struct cb_model_config in fixed-width fields.
 *
 * Field for field the engine's config (kmod/engine/core/cb_engine.h), same
 * meaning; real numbers are IEEE-754 binary32 bit patterns.  Booleans are 0
 * or 1.  Bits of @mlp_only_layers at or above @n_layers must be zero.
 */
struct colibri_file_config {
	__u32 arch;			/* COLIBRI_ARCH_* */
	__u32 vocab_size;
	__u32 hidden;
	__u32 n_layers;
	__u32 n_heads;
	__u32 n_kv_heads;
	__u32 head_dim;
	__u32 expert_ffn;
	__u32 n_experts;		/* 0: dense model */
	__u32 top_k;
	__u32 norm_topk_prob;
	__u32 shared_ffn;
	__u32 shared_gate;
	__u32 dense_ffn;
	__u32 decoder_sparse_step;
	__u32 rope_layout;		/* COLIBRI_ROPE_* */
	__u32 rope_theta_bits;
	__u32 rms_eps_bits;
	__u32 clip_qkv_bits;		/* 0: no clipping */
	__u32 qkv_bias;
	__u32 qk_norm;			/* COLIBRI_QK_NORM_* */
	__u32 tied_embeddings;
	__u32 max_context;
	__u32 rope_dim;			/* rotated dims of a head, even; 0: head_dim */
	__u64 mlp_only_layers[4];	/* bitmap over 256 layers */
	__u32 reserved[8];		/* must be 0 */
};

/*
 * struct colibri_file_gpt_oss - the header's GPT-OSS words (ext_gpt_oss).
 *
 * All zero unless config.arch is COLIBRI_ARCH_GPT_OSS.  Bit l of
 * @sliding_layers (word l / 32, bit l % 32) set: layer l attends only the
 * last @sliding_window positions (itself included), HF layer_types
 * "sliding_attention"; clear: "full_attention".  Bits at or above n_layers
 * must be zero.  The experts' activation is the clamped SwiGLU with
 * @swiglu_limit_bits (HF swiglu_limit) and @swiglu_alpha_bits (1.702), f32
 * bit patterns, both finite and > 0.
 */
struct colibri_file_gpt_oss {
	__u32 sliding_window;		/* >= 1; <= config.max_context when set */
	__u32 swiglu_limit_bits;
	__u32 swiglu_alpha_bits;
	__u32 reserved;			/* must be 0 */
	__u32 sliding_layers[8];	/* bitmap over 256 layers */
};

/**
 * struct colibri_file_rope_scaling - RoPE frequency scaling (header 356..388).
 * @kind: COLIBRI_ROPE_SCALING_*; with NONE every other word is 0.
 * @factor_bits: f32 scaling factor, >= 1.
 * @orig_context: the pretrained context (HF original_max_position_embeddings),
 *	1 .. config max_context.
 * @beta_fast_bits: f32, > @beta_slow_bits (HF default 32).
 * @beta_slow_bits: f32, > 0 (HF default 1).
 * @mscale_bits: f32 >= 0 (HF default 1); with COLIBRI_ROPE_F_ATTN_FACTOR
 *	the attention factor itself, > 0.
 * @mscale_all_dim_bits: f32 >= 0 (HF default 0).
 * @flags: COLIBRI_ROPE_F_*; unknown bits must be 0.
 *
 * Field for field struct cb_rope_scaling of the engine; docs/format.md
 * gives the formulas.
 */
struct colibri_file_rope_scaling {
	__u32 kind;
	__u32 factor_bits;
	__u32 orig_context;
	__u32 beta_fast_bits;
	__u32 beta_slow_bits;
	__u32 mscale_bits;
	__u32 mscale_all_dim_bits;
	__u32 flags;
};

/**
 * struct colibri_file_mla - DeepSeek's multi-head latent attention and
 * routing (struct cb_mla_config in fixed-width fields; all zero for other
 * architectures).  docs/format.md, "MLA and DeepSeek routing".
 * @q_lora_rank: 0: q = Wq x; else q = Wq_b rmsnorm(Wq_a x).
 * @kv_lora_rank: width of the cached latent; non-zero exactly for MLA.
 * @qk_nope_dim: per-head query/key part without RoPE.
 * @qk_rope_dim: per-head query part and shared key with RoPE (even).
 * @v_head_dim: per-head value.
 * @attn_scale_bits: f32 softmax scale; 0 = 1 / sqrt(head_dim).
 * @score_func: COLIBRI_SCORE_*.
 * @n_group: expert groups (0 or 1: none); divides n_experts.
 * @topk_group: groups kept per token, 1..n_group (0 without groups).
 * @group_top: a group is ranked by the sum of its best group_top
 *	selection scores (DeepSeek-V2 1, V3 2; 0 without groups).
 * @sel_bias: 1: the router has a selection bias (tensor role ROUTER_SEL_BIAS).
 * @route_scale_bits: f32 factor of the routing weights; 0 = 1.
 */
struct colibri_file_mla {
	__u32 q_lora_rank;
	__u32 kv_lora_rank;
	__u32 qk_nope_dim;
	__u32 qk_rope_dim;
	__u32 v_head_dim;
	__u32 attn_scale_bits;
	__u32 score_func;
	__u32 n_group;
	__u32 topk_group;
	__u32 group_top;
	__u32 sel_bias;
	__u32 route_scale_bits;
};

/**
 * struct colibri_file_delta - the Gated DeltaNet layers of a hybrid model
 * (Qwen3.5/3.6-MoE: struct cb_delta_config in fixed-width fields; all zero
 * for the architectures without them).  docs/format.md, "Gated DeltaNet".
 * @k_heads: query/key heads of a DeltaNet layer (HF linear_num_key_heads).
 * @v_heads: value heads, a multiple of @k_heads; each key head serves
 *	v_heads / k_heads consecutive value heads.
 * @k_head_dim: dimension of a query/key head.
 * @v_head_dim: dimension of a value head.
 * @conv_kernel: taps of the causal depthwise convolution (HF
 *	linear_conv_kernel_dim), 2 .. 8.
 * @full_interval: layer l is full (gated) attention when (l + 1) %
 *	@full_interval == 0, else a DeltaNet layer; 2 .. n_layers.
 * @flags: COLIBRI_DELTA_F_*; unknown bits must be 0.
 */
struct colibri_file_delta {
	__u32 k_heads;
	__u32 v_heads;
	__u32 k_head_dim;
	__u32 v_head_dim;
	__u32 conv_kernel;
	__u32 full_interval;
	__u32 flags;
};

/*
 * The value heads' order (of delta_qkv's v rows, delta_z, delta_b,
 * delta_a, the conv's v channels, delta_decay, delta_dt_bias and
 * delta_out's columns): clear, HF's, value head h uses key head
 * h / (v_heads / k_heads); set, llama.cpp's GGUF (its converter tiles
 * them), key head h % k_heads.
 */
#define COLIBRI_DELTA_F_TILED		0x1u
#define COLIBRI_DELTA_F_ALL		0x1u

/**
 * struct colibri_file_header - the first COLIBRI_FILE_HEADER_SIZE bytes.
 * @magic: COLIBRI_FILE_MAGIC.
 * @version: COLIBRI_FILE_VERSION.
 * @header_size: sizeof(struct colibri_file_header) == 512.
 * @flags: COLIBRI_FILE_F_*; unknown bits must be 0.
 * @file_size: the file's exact length in bytes.
 * @dir_offset: start of the tensor directory; == @header_size.
 * @n_tensors: directory entries; exactly the number the config requires.
 * @tensor_entry_size: sizeof(struct colibri_file_tensor) == 64.
 * @tok_offset: start of the tokenizer section (0 when @tok_kind is NONE).
 * @tok_size: its length in bytes (0 when NONE).
 * @data_offset: start of the data region, a multiple of 4096.
 * @data_size: its length; @data_offset + @data_size == @file_size.
 * @data_align: every tensor offset is a multiple of this (power of 2,
 *	64 .. 2 MiB).
 * @tok_kind: COLIBRI_TOK_*.
 * @bos_id: beginning-of-sequence token, or -1.
 * @eos_id: end-of-sequence token, or -1.
 * @pad_id: padding token, or -1.
 * @tok_flags: COLIBRI_TOK_F_*.
 * @tok_crc32c: CRC32C of the tokenizer section (0 when NONE).
 * @header_crc32c: CRC32C of header and directory (this field as zero).
 * @name: model name, UTF-8 without control characters, NUL-terminated,
 *	zero after the NUL.
 * @config: the architecture.
 * @tmpl_offset: start of the chat template section (0 without
 *	COLIBRI_FILE_F_CHAT_TEMPLATE).
 * @tmpl_size: its length, 1 .. COLIBRI_FILE_MAX_CHAT_TEMPLATE (0 without).
 * @tmpl_crc32c: CRC32C of the chat template section (0 without).
 * @rope_scaling: RoPE scaling (YaRN), all 0 for plain RoPE.
 * @ext_gpt_oss: GPT-OSS attention and FFN (struct colibri_file_gpt_oss);
 *	all zero for the other architectures.
 * @ext_mla: DeepSeek MLA and routing (struct colibri_file_mla); all zero
 *	for the other architectures.
 * @ext_delta: Gated DeltaNet layers (struct colibri_file_delta); all zero
 *	for the architectures without them.
 */
struct colibri_file_header {
	__u8 magic[8];			/* 0 */
	__u32 version;			/* 8 */
	__u32 header_size;		/* 12 */
	__u64 flags;			/* 16 */
	__u64 file_size;		/* 24 */
	__u64 dir_offset;		/* 32 */
	__u32 n_tensors;		/* 40 */
	__u32 tensor_entry_size;	/* 44 */
	__u64 tok_offset;		/* 48 */
	__u64 tok_size;			/* 56 */
	__u64 data_offset;		/* 64 */
	__u64 data_size;		/* 72 */
	__u32 data_align;		/* 80 */
	__u32 tok_kind;			/* 84 */
	__s32 bos_id;			/* 88 */
	__s32 eos_id;			/* 92 */
	__s32 pad_id;			/* 96 */
	__u32 tok_flags;		/* 100 */
	__u32 tok_crc32c;		/* 104 */
	__u32 header_crc32c;		/* 108 */
	__u8 name[COLIBRI_FILE_NAME_LEN];	/* 112 */
	struct colibri_file_config config;	/* 176 */
	__u64 tmpl_offset;		/* 336 */
	__u64 tmpl_size;		/* 344 */
	__u32 tmpl_crc32c;		/* 352 */
	struct colibri_file_rope_scaling rope_scaling;	/* 356 .. 388 */

	struct colibri_file_gpt_oss ext_gpt_oss;	/* 388 .. 436 */

	struct colibri_file_mla ext_mla;	/* 436 .. 484 */

	struct colibri_file_delta ext_delta;	/* 484 .. 512 */
};

/* Byte offset of header_crc32c, for checksumming around it. */
#define COLIBRI_FILE_HEADER_CRC_OFFSET	108

/*
 * enum colibri_tensor_role - what a directory entry holds.
 *
 * Global tensors have layer == expert == COLIBRI_FILE_NONE; per-layer tensors
 * have expert == COLIBRI_FILE_NONE except the three routed-expert matrices.
 * Shapes are [rows, cols] (HF Linear layout: rows = out_features); vectors
 * have rows == 1.  The numbers are ABI, and their order is the canonical
 * directory order within a layer.
 */
enum colibri_tensor_role {
	COLIBRI_T_EMBED = 1,		/* [vocab, hidden] */
	COLIBRI_T_FINAL_NORM = 2,	/* [1, hidden] f32 */
	COLIBRI_T_LM_HEAD = 3,		/* [vocab, hidden]; absent if tied */

	COLIBRI_T_ATTN_NORM = 16,	/* [1, hidden] f32 */
	COLIBRI_T_WQ = 17,		/* [n_heads*head_dim, hidden] */
	COLIBRI_T_WK = 18,		/* [n_kv_heads*head_dim, hidden] */
	COLIBRI_T_WV = 19,		/* [n_kv_heads*head_dim, hidden] */
	COLIBRI_T_WO = 20,		/* [hidden, n_heads*head_dim] */
	COLIBRI_T_BQ = 21,		/* [1, n_heads*head_dim] f32, if qkv_bias */
	COLIBRI_T_BK = 22,		/* [1, n_kv_heads*head_dim] f32 */
	COLIBRI_T_BV = 23,		/* [1, n_kv_heads*head_dim] f32 */
	COLIBRI_T_Q_NORM = 24,		/* [1, head_dim] (HEAD) or [1, q dim] (FULL) f32 */
	COLIBRI_T_K_NORM = 25,		/* [1, head_dim] (HEAD) or [1, kv dim] (FULL) f32 */
	COLIBRI_T_FFN_NORM = 26,	/* [1, hidden] f32 */

	COLIBRI_T_ROUTER = 32,		/* [n_experts, hidden] (MoE layers) */
	COLIBRI_T_EXPERT_GATE = 33,	/* [expert_ffn, hidden], one per expert */
	COLIBRI_T_EXPERT_UP = 34,	/* [expert_ffn, hidden] */
	COLIBRI_T_EXPERT_DOWN = 35,	/* [hidden, expert_ffn] */
	COLIBRI_T_SHARED_GATE = 36,	/* [shared_ffn, hidden], if shared_ffn */
	COLIBRI_T_SHARED_UP = 37,	/* [shared_ffn, hidden] */
	COLIBRI_T_SHARED_DOWN = 38,	/* [hidden, shared_ffn] */
	COLIBRI_T_SHARED_EXPERT_GATE = 39,	/* [1, hidden], if shared_gate */

	COLIBRI_T_MLP_GATE = 48,	/* [dense_ffn, hidden] (dense layers) */
	COLIBRI_T_MLP_UP = 49,		/* [dense_ffn, hidden] */
	COLIBRI_T_MLP_DOWN = 50,	/* [hidden, dense_ffn] */

	/* GPT-OSS (every layer; all f32) */
	COLIBRI_T_ATTN_SINKS = 64,	/* [1, n_heads] sink logit of each head */
	COLIBRI_T_BO = 65,		/* [1, hidden] o_proj bias */
	COLIBRI_T_ROUTER_BIAS = 66,	/* [1, n_experts] */
	COLIBRI_T_EXPERT_GATE_BIAS = 67,	/* [n_experts, expert_ffn] */
	COLIBRI_T_EXPERT_UP_BIAS = 68,	/* [n_experts, expert_ffn] */
	COLIBRI_T_EXPERT_DOWN_BIAS = 69,	/* [n_experts, hidden] */
	/*
	 * MLA layers (kv_lora_rank != 0) replace wk and wv by these; wq is
	 * [n_heads*head_dim, hidden] without q LoRA, wo [hidden,
	 * n_heads*v_head_dim].  A layer's order: attn_norm, wq or (q_a,
	 * q_a_norm, q_b), kv_a, kv_a_norm, k_b, v_b, wo, ffn_norm.
	 */
	COLIBRI_T_MLA_Q_A = 80,		/* [q_lora_rank, hidden] */
	COLIBRI_T_MLA_Q_A_NORM = 81,	/* [1, q_lora_rank] f32 */
	COLIBRI_T_MLA_Q_B = 82,		/* [n_heads*head_dim, q_lora_rank] */
	COLIBRI_T_MLA_KV_A = 83,	/* [kv_lora_rank + qk_rope_dim, hidden] */
	COLIBRI_T_MLA_KV_A_NORM = 84,	/* [1, kv_lora_rank] f32 */
	/* HF kv_b_proj split per head: k_b[h] = W_uk[h]^T, v_b[h] = W_uv[h] */
	COLIBRI_T_MLA_K_B = 85,		/* [n_heads*kv_lora_rank, qk_nope_dim] */
	COLIBRI_T_MLA_V_B = 86,		/* [n_heads*v_head_dim, kv_lora_rank] */
	/* the last tensor of an MoE layer, when sel_bias */
	COLIBRI_T_ROUTER_SEL_BIAS = 87,	/* [1, n_experts] f32 */
	/*
	 * Gated DeltaNet layers (ext_delta) replace a layer's attention
	 * tensors by these, in this order between attn_norm and ffn_norm.
	 * Kd = k_heads*k_head_dim, Vd = v_heads*v_head_dim.  The model's
	 * full-attention layers have wq of [2*n_heads*head_dim, hidden]: per
	 * head, head_dim rows of q then head_dim rows of its output gate.
	 */
	COLIBRI_T_DELTA_QKV = 96,	/* [2*Kd + Vd, hidden]: q, k, v */
	COLIBRI_T_DELTA_Z = 97,		/* [Vd, hidden]: the output gate */
	COLIBRI_T_DELTA_B = 98,		/* [v_heads, hidden]: beta's logits */
	COLIBRI_T_DELTA_A = 99,		/* [v_heads, hidden]: the decay's input */
	COLIBRI_T_DELTA_CONV = 100,	/* [2*Kd + Vd, conv_kernel] f32 */
	COLIBRI_T_DELTA_DECAY = 101,	/* [1, v_heads] f32: -exp(A_log) */
	COLIBRI_T_DELTA_DT_BIAS = 102,	/* [1, v_heads] f32 */
	COLIBRI_T_DELTA_NORM = 103,	/* [1, v_head_dim] f32: the gated RMSNorm */
	COLIBRI_T_DELTA_OUT = 104,	/* [hidden, Vd] */
};

/**
 * struct colibri_file_tensor - one directory entry.
 * @role: enum colibri_tensor_role.
 * @layer: layer index, or COLIBRI_FILE_NONE for global tensors.
 * @expert: routed expert index, or COLIBRI_FILE_NONE.
 * @dtype: COLIBRI_DT_*.
 * @rows: rows (1 for a vector).
 * @cols: elements per row (a multiple of 32 for q8_0/q4_0).
 * @offset: from data_offset; a multiple of data_align.
 * @size: bytes; exactly rows * row_bytes(dtype, cols), rows contiguous.
 * @crc32c: CRC32C of the @size bytes.
 * @flags: none defined: must be 0.
 * @reserved: must be 0.
 */
struct colibri_file_tensor {
	__u32 role;			/* 0 */
	__u32 layer;			/* 4 */
	__u32 expert;			/* 8 */
	__u32 dtype;			/* 12 */
	__u32 rows;			/* 16 */
	__u32 cols;			/* 20 */
	__u64 offset;			/* 24 */
	__u64 size;			/* 32 */
	__u32 crc32c;			/* 40 */
	__u32 flags;			/* 44 */
	__u32 reserved[4];		/* 48 .. 64 */
};

#if defined(__cplusplus)
#define __COLIBRI_FMT_ASSERT(e, m) static_assert(e, m)
#else
#define __COLIBRI_FMT_ASSERT(e, m) _Static_assert(e, m)
#endif
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_config) == COLIBRI_FILE_CONFIG_SIZE,
		     "struct colibri_file_config");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_mla) == 48, "struct colibri_file_mla");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_header) == COLIBRI_FILE_HEADER_SIZE,
		     "struct colibri_file_header");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_gpt_oss) == 48, "struct colibri_file_gpt_oss");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_tensor) == COLIBRI_FILE_TENSOR_SIZE,
		     "struct colibri_file_tensor");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, header_crc32c) ==
		     COLIBRI_FILE_HEADER_CRC_OFFSET, "header_crc32c offset");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, config) == 176,
		     "config offset");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, tmpl_offset) == 336,
		     "tmpl_offset offset");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, rope_scaling) == 356,
		     "rope_scaling offset");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_rope_scaling) == 32,
		     "struct colibri_file_rope_scaling");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, ext_gpt_oss) == 388,
		     "ext_gpt_oss offset");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, ext_mla) == 436,
		     "ext_mla offset");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_header, ext_delta) == 484,
		     "ext_delta offset");
__COLIBRI_FMT_ASSERT(sizeof(struct colibri_file_delta) == 28, "struct colibri_file_delta");
__COLIBRI_FMT_ASSERT(__builtin_offsetof(struct colibri_file_tensor, offset) == 24,
		     "tensor offset");

#endif /* _UAPI_LINUX_COLIBRI_FORMAT_H */

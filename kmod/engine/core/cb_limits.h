/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_limits.h - the shapes the engine accepts, in one place.
 *
 * The one config check (cb_config.c) that model setup and the file
 * validator share reads these, and so do the converters and the CLI that
 * check their inputs before they write a file.  Integers only: any code,
 * FPU or not, may include this.
 */
#ifndef CB_LIMITS_H
#define CB_LIMITS_H

/*
 * Every real model fits: DeepSeek-V3 (hidden 7168, dense FFN 18432, 128
 * heads, head dims 192/128, vocab 129280, 256 experts top-8), Llama-3.1
 * 405B (hidden 16384, FFN 53248, 128 heads of 128), GPT-OSS (64 heads of
 * 64, 128 experts), Qwen3-235B (128 experts), Kimi-K2 (384 experts,
 * top-8), Qwen3-Next (512 experts, top-10).  Beyond that, a size is
 * limited by what one chunk of work may take: the smallest piece of work
 * the forward pass cannot cut (one row of a gemm for one token, one
 * split of attention for one head, ...) must fit the chunk budget of
 * 100 us of scalar code, because in the kernel a chunk runs with
 * preemption off (cb_engine_priv.h; cb_phase.c asserts each bound).
 */

/* Layers; also the size of the mlp_only_layers bitmap in the file (ABI). */
#define CB_MAX_LAYERS		256
/* Routed experts per MoE layer. */
#define CB_MAX_EXPERTS		512
/* Experts per token. */
#define CB_MAX_TOP_K		16
/* Vocabulary: the rows of the embedding and of lm_head (rows are cut). */
#define CB_MAX_VOCAB		16777216u
/* hidden_size: the k of most gemms, one row of RMSNorm's sum */
#define CB_MAX_HIDDEN		32768u
/* The intermediate size of an MLP (dense, shared or routed): the k of down. */
#define CB_MAX_FFN		65536u
/* Query heads, and the dimension of one head (even). */
#define CB_MAX_HEADS		1024
#define CB_MAX_HEAD_DIM		256
/* n_heads * head_dim: the k of Wo, the q of one kv head's RoPE chunk */
#define CB_MAX_QDIM		32768u

/* An engine instance (struct cb_engine_params). */
#define CB_MAX_BATCH_TOKENS	1048576u
#define CB_MAX_SEQS		1048576u
/* Positions per slot: also the splits one head's merge reads (2^20 / 128). */
#define CB_MAX_CONTEXT		1048576u

#endif /* CB_LIMITS_H */

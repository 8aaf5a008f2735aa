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

/* Layers; also the size of the mlp_only_layers bitmap in the file (ABI). */
#define CB_MAX_LAYERS		256
/* Routed experts per MoE layer. */
#define CB_MAX_EXPERTS		256
/* Experts per token. */
#define CB_MAX_TOP_K		16
/* Vocabulary: the rows of the embedding and of lm_head. */
#define CB_MAX_VOCAB		16777216u
/* hidden_size. */
#define CB_MAX_HIDDEN		1048576u
/* The intermediate size of an MLP: dense, shared expert, routed expert. */
#define CB_MAX_FFN		1048576u
/* Query heads, and the dimension of one head (even). */
#define CB_MAX_HEADS		1024
#define CB_MAX_HEAD_DIM		1024

/* An engine instance (struct cb_engine_params). */
#define CB_MAX_BATCH_TOKENS	1048576u
#define CB_MAX_SEQS		1048576u
#define CB_MAX_CONTEXT		16777216u

#endif /* CB_LIMITS_H */

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_format_same.h - the engine's numbers are uapi's: compile-time checks
 * that every enum and struct cb_format.c maps one to one between struct
 * cb_model_config and the file format (uapi/colibri_format.h) agree.
 * Included once, by cb_format.c.
 */
#ifndef CB_FORMAT_SAME_H
#define CB_FORMAT_SAME_H

#include "format/cb_format.h"
#include "arch/cb_gpt_oss.h"

#define CB_SAME(a, b) CB_STATIC_ASSERT((a) == (b), #a " is " #b)
CB_SAME(CB_DT_F32, COLIBRI_DT_F32);
CB_SAME(CB_DT_F16, COLIBRI_DT_F16);
CB_SAME(CB_DT_BF16, COLIBRI_DT_BF16);
CB_SAME(CB_DT_Q8_0, COLIBRI_DT_Q8_0);
CB_SAME(CB_DT_Q4_0, COLIBRI_DT_Q4_0);
CB_SAME(CB_DT_Q4_1, COLIBRI_DT_Q4_1);
CB_SAME(CB_DT_Q5_0, COLIBRI_DT_Q5_0);
CB_SAME(CB_DT_Q5_1, COLIBRI_DT_Q5_1);
CB_SAME(CB_DT_IQ4_NL, COLIBRI_DT_IQ4_NL);
CB_SAME(CB_DT_Q2_K, COLIBRI_DT_Q2_K);
CB_SAME(CB_DT_Q3_K, COLIBRI_DT_Q3_K);
CB_SAME(CB_DT_Q4_K, COLIBRI_DT_Q4_K);
CB_SAME(CB_DT_Q5_K, COLIBRI_DT_Q5_K);
CB_SAME(CB_DT_Q6_K, COLIBRI_DT_Q6_K);
CB_SAME(CB_DT_IQ4_XS, COLIBRI_DT_IQ4_XS);
CB_SAME(CB_DT_MXFP4, COLIBRI_DT_MXFP4);
CB_SAME(CB_DT__COUNT, COLIBRI_DT_MXFP4 + 1);	/* a new type needs its number */
CB_SAME(CB_ROPE_SCALING_NONE, COLIBRI_ROPE_SCALING_NONE);
CB_SAME(CB_ROPE_SCALING_YARN, COLIBRI_ROPE_SCALING_YARN);
CB_SAME(CB_ROPE_F_TRUNCATE, COLIBRI_ROPE_F_TRUNCATE);
CB_SAME(CB_ROPE_F_ATTN_FACTOR, COLIBRI_ROPE_F_ATTN_FACTOR);
CB_SAME(CB_ROPE_F_ALL, COLIBRI_ROPE_F_ALL);
CB_SAME(sizeof(struct cb_rope_scaling), sizeof(struct colibri_file_rope_scaling));
CB_SAME(sizeof(struct cb_gpt_oss_config), sizeof(struct colibri_file_gpt_oss));
CB_SAME(CB_ROPE_NEOX, COLIBRI_ROPE_NEOX);
CB_SAME(CB_ROPE_INTERLEAVED, COLIBRI_ROPE_INTERLEAVED);
CB_SAME(CB_QK_NORM_NONE, COLIBRI_QK_NORM_NONE);
CB_SAME(CB_QK_NORM_HEAD, COLIBRI_QK_NORM_HEAD);
CB_SAME(CB_QK_NORM_FULL, COLIBRI_QK_NORM_FULL);
CB_SAME(CB_MAX_LAYERS, 64 * CB_ARRAY_SIZE(((struct colibri_file_config *)0)->mlp_only_layers));

#endif /* CB_FORMAT_SAME_H */

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_arch_list.h - every architecture, one line each: its uapi number
 * (COLIBRI_ARCH_*, uapi/colibri_format.h) and its descriptor (arch_NAME.c).
 * The only list of them: cb_arch.h declares the descriptors from it and
 * cb_arch.c builds cb_archs[] from it.  Included with CB_ARCH() defined.
 */
CB_ARCH(COLIBRI_ARCH_LLAMA, cb_arch_llama)
CB_ARCH(COLIBRI_ARCH_MIXTRAL, cb_arch_mixtral)
CB_ARCH(COLIBRI_ARCH_QWEN2_MOE, cb_arch_qwen2_moe)
CB_ARCH(COLIBRI_ARCH_QWEN3_MOE, cb_arch_qwen3_moe)
CB_ARCH(COLIBRI_ARCH_OLMOE, cb_arch_olmoe)
CB_ARCH(COLIBRI_ARCH_GPT_OSS, cb_arch_gpt_oss)
CB_ARCH(COLIBRI_ARCH_DEEPSEEK_V2, cb_arch_deepseek_v2)
CB_ARCH(COLIBRI_ARCH_DEEPSEEK_V3, cb_arch_deepseek_v3)
CB_ARCH(COLIBRI_ARCH_GLM4_MOE, cb_arch_glm4_moe)
CB_ARCH(COLIBRI_ARCH_QWEN3_5_MOE, cb_arch_qwen3_5_moe)
CB_ARCH(COLIBRI_ARCH_QWEN3_NEXT, cb_arch_qwen3_next)

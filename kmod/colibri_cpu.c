// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_cpu.c - the engine's platform hooks in the kernel: CPU features.
 */
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>

#include "core/cb_platform.h"

/*
 * An ISA variant needs both the instructions and the kernel's support for
 * saving their register state: cpu_has_xfeatures() says the latter.
 */
static bool colibri_avx512_state(void)
{
	return cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
				 XFEATURE_MASK_AVX512, NULL);
}

static bool colibri_avx_state(void)
{
	return cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL);
}

int cb_cpu_has(enum cb_cpu_feature f)
{
	switch (f) {
	case CB_CPU_AVX2:
		return boot_cpu_has(X86_FEATURE_AVX2) && colibri_avx_state();
	case CB_CPU_FMA:
		return boot_cpu_has(X86_FEATURE_FMA) && colibri_avx_state();
	case CB_CPU_F16C:
		return boot_cpu_has(X86_FEATURE_F16C) && colibri_avx_state();
	case CB_CPU_AVX512F:
		return boot_cpu_has(X86_FEATURE_AVX512F) && colibri_avx512_state();
	case CB_CPU_AVX512BW:
		return boot_cpu_has(X86_FEATURE_AVX512BW) && colibri_avx512_state();
	case CB_CPU_AVX512VL:
		return boot_cpu_has(X86_FEATURE_AVX512VL) && colibri_avx512_state();
	case CB_CPU_AVX512VNNI:
		return boot_cpu_has(X86_FEATURE_AVX512_VNNI) && colibri_avx512_state();
	case CB_CPU_AVX512BF16:
		return boot_cpu_has(X86_FEATURE_AVX512_BF16) && colibri_avx512_state();
	default:
		return 0;
	}
}

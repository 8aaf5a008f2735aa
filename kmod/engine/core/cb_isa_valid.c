// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_isa_valid.c - the ISA variants' valid() hooks: does this CPU have
 * every feature a variant needs (cb_cpu_has(), the host's)?
 *
 * Integer only, built without SSE (Kbuild's cb-int-only-dirs): the module asks
 * them outside FPU sections, at load and in every cb_engine_init().  The
 * variants' tables (cb_ops_*.c) point here, and cb_isa.c, above them,
 * chooses among the tables.
 */
#include "ops/cb_ops.h"

int cb_isa_scalar_valid(void)
{
	return 1;
}

int cb_isa_avx2_valid(void)
{
	return cb_cpu_has(CB_CPU_AVX2) && cb_cpu_has(CB_CPU_FMA) && cb_cpu_has(CB_CPU_F16C);
}

int cb_isa_avx512_valid(void)
{
	/* the 256-bit parts and F16C conversions need AVX2/FMA/F16C too */
	return cb_cpu_has(CB_CPU_AVX512F) && cb_cpu_has(CB_CPU_AVX512BW) &&
	       cb_cpu_has(CB_CPU_AVX512VL) && cb_isa_avx2_valid();
}

int cb_isa_avx512_vnni_valid(void)
{
	return cb_isa_avx512_valid() && cb_cpu_has(CB_CPU_AVX512VNNI);
}

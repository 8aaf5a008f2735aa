// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * quantize.c - cb_quantize_row_fast() (quantize.h).
 *
 * Every variant's quantize_act[CB_ACT_Q8_0] op matches cb_quantize_row_q8_0_ref() byte
 * for byte (tests/unit/test_ops.c), so the file does not depend on the CPU
 * that wrote it.
 */
#include "ops/cb_ops.h"
#include "util/host.h"
#include "quant/quantize.h"

void cb_quantize_row_fast(unsigned int dt, void *dst, const float *x, int n)
{
	static const struct cb_isa_ops *ops;
	const struct cb_isa_ops *o = __atomic_load_n(&ops, __ATOMIC_ACQUIRE);

	if (dt != CB_DT_Q8_0) {
		cb_quantize_row(dt, dst, x, n);
		return;
	}
	if (!o) {
		o = cb_isa_select(cb_host_isa_cap());
		__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
	}
	o->quantize_act[CB_ACT_Q8_0](dst, x, n);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri - a mixture-of-experts inference engine in the kernel.
 *
 * colibri_main.c: load and unload: check the parameters, bring the parts up
 * in order and down in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/printk.h>

#include "colibri_internal.h"
#include "colibri_engine.h"
#include "colibri.h"

/* uapi owns the ISA numbers (GET_INFO, max_isa): the engine's equal them. */
static_assert(CB_ISA_SCALAR == COLIBRI_ISA_SCALAR);
static_assert(CB_ISA_AVX2 == COLIBRI_ISA_AVX2);
static_assert(CB_ISA_AVX512 == COLIBRI_ISA_AVX512);
static_assert(CB_ISA_AVX512_VNNI == COLIBRI_ISA_AVX512_VNNI);
static_assert(COLIBRI_ISA_AVX512_VNNI + 1 == CB_ISA__COUNT);

static int __init colibri_init(void)
{
	struct colibri_sched *sc;
	int ret;

	if (colibri_max_isa < -1 || colibri_max_isa > COLIBRI_ISA_AVX512_VNNI) {
		pr_err("max_isa=%d is not one of -1, 0, 1, 2, 3\n", colibri_max_isa);
		return -EINVAL;
	}
	/* Integer-only engine code (cb_isa.c): no FPU section needed. */
	colibri_caps.isa_level = colibri_engine_isa(colibri_max_isa < 0 ? INT_MAX :
						    colibri_max_isa,
						    &colibri_caps.isa_name);

	if (!colibri_fpu_slice_us || colibri_fpu_slice_us > 10000 ||
	    !colibri_default_context || colibri_default_context > COLIBRI_MAX_CONTEXT) {
		pr_err("fpu_slice_us must be 1..10000 and default_context 1..%u\n",
		       COLIBRI_MAX_CONTEXT);
		return -EINVAL;
	}

	/*
	 * A shared pass takes one decode step of each slot first: with no
	 * more slots than tokens, the oldest request always gets a token.
	 */
	if (!colibri_max_batch_tokens || colibri_max_batch_tokens > COLIBRI_MAX_BATCH ||
	    colibri_batch_slots > COLIBRI_MAX_SLOTS ||
	    colibri_batch_slots > colibri_max_batch_tokens) {
		pr_err("max_batch_tokens must be 1..%u and batch_slots 0..min(64, max_batch_tokens)\n",
		       COLIBRI_MAX_BATCH);
		return -EINVAL;
	}

	ret = colibri_mem_init(colibri_memmap);
	if (ret)
		return ret;
	/* So that no one user can take what all may share. */
	if (!colibri_max_sessions_per_user)
		colibri_max_sessions_per_user = max(colibri_max_sessions / 4, 1U);
	if (!colibri_mem_limit_per_user_mb)
		colibri_mem_limit_per_user_mb = max_t(u64, colibri_mem_limit() >> 22, 1);
	ret = colibri_models_init();
	if (ret)
		goto err_mem;
	colibri_accel_init();
	ret = colibri_sessions_init();
	if (ret)
		goto err_models;
	sc = colibri_sched_start();
	ret = PTR_ERR_OR_ZERO(sc);
	if (ret)
		goto err_sessions;
	ret = colibri_dev_register(sc);
	if (ret)
		goto err_sched;

	pr_info("loaded: ABI %u, engine %s, %d threads, %s memory, limit %llu MiB (per user %u MiB, %u sessions)\n",
		COLIBRI_ABI_VERSION, colibri_caps.isa_name, colibri_sched_nr_threads(sc),
		colibri_mem_provider() == COLIBRI_MEM_MEMMAP ? "memmap" : "pages",
		colibri_mem_limit() >> 20, colibri_mem_limit_per_user_mb,
		colibri_max_sessions_per_user);
	return 0;

err_sched:
	colibri_sched_stop(sc);
err_sessions:
	colibri_sessions_exit();
err_models:
	colibri_models_exit();
	colibri_accel_exit();
err_mem:
	colibri_mem_exit();
	return ret;
}

static void __exit colibri_exit(void)
{
	struct colibri_sched *sc;

	/*
	 * No file is open (each holds a module reference); revoked sessions
	 * may still be waiting to detach on colibri_wq.
	 */
	sc = colibri_dev_unregister();
	colibri_sessions_exit();
	colibri_sched_stop(sc);
	colibri_models_exit();
	colibri_accel_exit();
	colibri_mem_exit();
	pr_info("unloaded\n");
}

module_init(colibri_init);
module_exit(colibri_exit);

MODULE_DESCRIPTION("Colibri: mixture-of-experts language-model inference engine");
MODULE_AUTHOR("The Colibri developers");
MODULE_LICENSE("GPL");

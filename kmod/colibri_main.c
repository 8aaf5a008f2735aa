// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri - a mixture-of-experts inference engine in the kernel.
 *
 * colibri_main.c: module parameters, load and unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "colibri_internal.h"
#include "colibri_engine.h"
#include "colibri.h"

unsigned int colibri_mem_limit_mb;
module_param_named(mem_limit_mb, colibri_mem_limit_mb, uint, 0444);
MODULE_PARM_DESC(mem_limit_mb,
		 "Pinned memory (MiB) the module may use for models and sessions (default 0: half of RAM, or the whole memmap range)");

/* Writable: an administrator may raise or lower them at run time. */
unsigned int colibri_max_sessions_per_user;
module_param_named(max_sessions_per_user, colibri_max_sessions_per_user, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_user,
		 "Sessions one user (uid) may have attached; CAP_SYS_RESOURCE is exempt (default 0 at load: a quarter of max_sessions)");

unsigned int colibri_mem_limit_per_user_mb;
module_param_named(mem_limit_per_user_mb, colibri_mem_limit_per_user_mb, uint, 0644);
MODULE_PARM_DESC(mem_limit_per_user_mb,
		 "Pinned memory (MiB) one user's sessions may hold; CAP_SYS_RESOURCE is exempt (default 0 at load: a quarter of mem_limit_mb)");

unsigned int colibri_max_models = 8;
module_param_named(max_models, colibri_max_models, uint, 0444);
MODULE_PARM_DESC(max_models, "Maximum number of loaded models (default 8)");

unsigned int colibri_max_sessions = 64;
module_param_named(max_sessions, colibri_max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "Maximum number of attached sessions, all models together (default 64)");

unsigned int colibri_default_context = 2048;
module_param_named(default_context, colibri_default_context, uint, 0444);
MODULE_PARM_DESC(default_context,
		 "Context positions of a session that does not ask for a number (default 2048)");

unsigned int colibri_max_batch_tokens = 64;
module_param_named(max_batch_tokens, colibri_max_batch_tokens, uint, 0444);
MODULE_PARM_DESC(max_batch_tokens,
		 "Most tokens one forward pass of a model's shared engine carries, all its sessions together (default 64)");

unsigned int colibri_batch_slots = 8;
module_param_named(batch_slots, colibri_batch_slots, uint, 0444);
MODULE_PARM_DESC(batch_slots,
		 "Sessions that share a model's engine, and are batched together (0..64, at most max_batch_tokens; 0: every session has its own engine; default 8)");

unsigned int colibri_accel_timeout_ms = 1000;
module_param_named(accel_timeout_ms, colibri_accel_timeout_ms, uint, 0644);
MODULE_PARM_DESC(accel_timeout_ms,
		 "How long a forward pass waits for an accelerator's expert job before it runs it on the CPU (1..600000, default 1000)");

unsigned int colibri_fpu_slice_us = 200;
module_param_named(fpu_slice_us, colibri_fpu_slice_us, uint, 0444);
MODULE_PARM_DESC(fpu_slice_us,
		 "Longest time (us) a thread keeps the FPU, and preemption, off between engine chunks (default 200)");

int colibri_max_isa = -1;
module_param_named(max_isa, colibri_max_isa, int, 0444);
MODULE_PARM_DESC(max_isa,
		 "Highest engine ISA level to use: 0 scalar, 1 avx2, 2 avx512, 3 avx512 with VNNI; -1 best the CPU offers (default)");

char *colibri_memmap;
module_param_named(memmap, colibri_memmap, charp, 0444);
MODULE_PARM_DESC(memmap,
		 "SIZE@ADDR of a physical range reserved at boot (kernel memmap=SIZE$ADDR) to hold models and sessions; default: page allocations");

struct colibri_engine_caps colibri_caps;

/* uapi owns the ISA numbers (GET_INFO, max_isa): the engine's equal them. */
static_assert(CB_ISA_SCALAR == COLIBRI_ISA_SCALAR);
static_assert(CB_ISA_AVX2 == COLIBRI_ISA_AVX2);
static_assert(CB_ISA_AVX512 == COLIBRI_ISA_AVX512);
static_assert(CB_ISA_AVX512_VNNI == COLIBRI_ISA_AVX512_VNNI);
static_assert(COLIBRI_ISA_AVX512_VNNI + 1 == CB_ISA__COUNT);

static int __init colibri_init(void)
{
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
	ret = colibri_sessions_init();
	if (ret)
		goto err_models;
	ret = colibri_sched_start();
	if (ret)
		goto err_sessions;
	ret = colibri_dev_register();
	if (ret)
		goto err_sched;

	pr_info("loaded: ABI %u, engine %s, %d threads, %s memory, limit %llu MiB (per user %u MiB, %u sessions)\n",
		COLIBRI_ABI_VERSION, colibri_caps.isa_name, colibri_exec_nr_threads(),
		colibri_mem_provider() == COLIBRI_MEM_MEMMAP ? "memmap" : "pages",
		colibri_mem_limit() >> 20, colibri_mem_limit_per_user_mb,
		colibri_max_sessions_per_user);
	return 0;

err_sched:
	colibri_sched_stop();
err_sessions:
	colibri_sessions_exit();
err_models:
	colibri_models_exit();
err_mem:
	colibri_mem_exit();
	return ret;
}

static void __exit colibri_exit(void)
{
	/*
	 * No file is open (each holds a module reference); revoked sessions
	 * may still be waiting to detach on colibri_wq.
	 */
	colibri_dev_unregister();
	colibri_sessions_exit();
	colibri_sched_stop();
	colibri_models_exit();
	colibri_mem_exit();
	pr_info("unloaded\n");
}

module_init(colibri_init);
module_exit(colibri_exit);

MODULE_DESCRIPTION("Colibri: mixture-of-experts language-model inference engine");
MODULE_AUTHOR("The Colibri developers");
MODULE_LICENSE("GPL");

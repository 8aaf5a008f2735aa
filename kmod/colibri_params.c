// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_params.c - the module parameters, and the engine facts chosen
 * once at load (colibri_caps).  Every part of the module reads them; this
 * file calls nothing, so reading them makes no dependency on who loads
 * the module (colibri_main.c checks them and fills in the defaults).
 */
#include <linux/moduleparam.h>

#include "colibri_internal.h"

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

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

unsigned int colibri_mem_limit_mb = 1024;
module_param_named(mem_limit_mb, colibri_mem_limit_mb, uint, 0444);
MODULE_PARM_DESC(mem_limit_mb,
		 "Pinned memory (MiB) the module may use for models and sessions (default 1024)");

unsigned int colibri_max_models = 8;
module_param_named(max_models, colibri_max_models, uint, 0444);
MODULE_PARM_DESC(max_models, "Maximum number of loaded models (default 8)");

unsigned int colibri_max_sessions = 64;
module_param_named(max_sessions, colibri_max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "Maximum number of attached sessions, all models together (default 64)");

int colibri_max_isa = -1;
module_param_named(max_isa, colibri_max_isa, int, 0444);
MODULE_PARM_DESC(max_isa,
		 "Highest engine ISA level to use: 0 scalar, 1 avx2, 2 avx512; -1 best the CPU offers (default)");

struct colibri_engine_caps colibri_caps;

static int __init colibri_init(void)
{
	int ret;

	if (colibri_max_isa < -1 || colibri_max_isa > COLIBRI_ISA_AVX512) {
		pr_err("max_isa=%d is not one of -1, 0, 1, 2\n", colibri_max_isa);
		return -EINVAL;
	}
	colibri_caps.isa_level = colibri_engine_isa(colibri_max_isa < 0 ? INT_MAX :
						    colibri_max_isa,
						    &colibri_caps.isa_name);

	ret = colibri_dev_register();
	if (ret)
		return ret;

	pr_info("loaded: ABI %u, engine %s, memory limit %u MiB\n",
		COLIBRI_ABI_VERSION, colibri_caps.isa_name, colibri_mem_limit_mb);
	return 0;
}

static void __exit colibri_exit(void)
{
	colibri_dev_unregister();
	pr_info("unloaded\n");
}

module_init(colibri_init);
module_exit(colibri_exit);

MODULE_DESCRIPTION("Colibri: mixture-of-experts language-model inference engine");
MODULE_AUTHOR("The Colibri developers");
MODULE_LICENSE("GPL");

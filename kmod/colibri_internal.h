/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_internal.h - shared declarations of the colibri module.
 */
#ifndef COLIBRI_INTERNAL_H
#define COLIBRI_INTERNAL_H

#include <linux/types.h>

#define COLIBRI_NAME "colibri"

/* Module parameters (colibri_main.c); read-only after load. */
extern unsigned int colibri_mem_limit_mb;
extern unsigned int colibri_max_models;
extern unsigned int colibri_max_sessions;
extern int colibri_max_isa;

/* Engine facts chosen once at load (colibri_main.c). */
struct colibri_engine_caps {
	int isa_level;		/* COLIBRI_ISA_* */
	const char *isa_name;	/* static string owned by the engine */
};
extern struct colibri_engine_caps colibri_caps;

/* colibri_dev.c */
int colibri_dev_register(void);
void colibri_dev_unregister(void);

#endif /* COLIBRI_INTERNAL_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_engine.h - the module's view of the engine: integer and pointer
 * interfaces only, so that non-FPU objects may include it.
 */
#ifndef COLIBRI_ENGINE_H
#define COLIBRI_ENGINE_H

/*
 * kmod/engine/core/cb_isa.c (integer only, callable anywhere): the best ISA
 * level <= max_level valid on this CPU, and its name.
 */
int colibri_engine_isa(int max_level, const char **name);

#endif /* COLIBRI_ENGINE_H */

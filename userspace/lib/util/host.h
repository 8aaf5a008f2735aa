/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * host.h - the userspace host layer of the Colibri engine.
 *
 * The engine (kmod/engine/) reaches its host through cb_platform.h: a CPU
 * feature query, cb_cpu_has(), and an execution context, struct cb_exec.
 * The kernel module provides them on top of boot_cpu_has() and worker
 * kthreads; this file provides them on top of cpuid and pthreads, so that the
 * same engine code runs, and is tested, in an ordinary process.
 */
#ifndef COLIBRI_HOST_H
#define COLIBRI_HOST_H

#include "core/cb_platform.h"

/*
 * cb_cpu_has() (declared in cb_platform.h) answers from cpuid, also checks
 * that the OS saves the AVX / AVX-512 register state (xgetbv), and honours
 * the environment variable COLIBRI_ISA=scalar|avx2|avx512|avx512_vnni as a
 * cap, named as the ISA variants are: with "avx512" AVX512-VNNI reads as
 * absent, with "avx2" every AVX-512 feature does, with "scalar" every
 * feature does ("avx512novnni" is an old name of "avx512").  The
 * environment is read once, on the first call.
 */

/**
 * cb_host_isa_cap() - the ISA level cap from COLIBRI_ISA.
 *
 * Return: an enum cb_isa_level; CB_ISA__COUNT - 1 (no cap) when the
 * variable is unset.  An unknown value is reported once on stderr and treated
 * as unset.
 */
int cb_host_isa_cap(void);

/**
 * cb_host_exec_create() - a pthread execution context for the engine.
 * @nthreads: threads that run chunks, the caller included; <= 0 means one
 *	per online CPU.
 *
 * Starts nthreads - 1 persistent worker threads.  parallel_for() publishes
 * the job, hands out chunk indices dynamically (first come, first served)
 * to the workers and to the calling thread, and returns when every chunk
 * has finished.  Idle workers spin briefly, then sleep on a futex, so a
 * burst of short parallel_for() calls (a decode step) costs no thread
 * creation and no syscall per call while the workers are warm.
 *
 * parallel_for() on one context must not be called from two threads at
 * once, nor from inside a chunk.  ->yield is NULL.
 *
 * Return: the context, or NULL if memory or threads could not be had.
 */
struct cb_exec *cb_host_exec_create(int nthreads);

/**
 * cb_host_exec_destroy() - stop and join the workers, free the context.
 * @ex: a context from cb_host_exec_create(), or NULL.
 */
void cb_host_exec_destroy(struct cb_exec *ex);

#endif /* COLIBRI_HOST_H */

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * membw.h - the machine's memory read bandwidth, the yardstick for the
 * engine's benchmarks (DESIGN.md: report achieved bytes per second over
 * the measured read bandwidth, never a bare time).
 */
#ifndef COLIBRI_MEMBW_H
#define COLIBRI_MEMBW_H

#include <stddef.h>

#include "core/cb_platform.h"

/**
 * cb_measure_read_bw() - sustained read bandwidth in bytes per second.
 * @nthreads: reader threads (the caller included); <= 0 means one per CPU.
 * @bytes: buffer size; use well over the last-level cache (>= 1 GiB).
 *
 * Allocates and fills the buffer, then reads it with the widest vector
 * loads the CPU offers (AVX-512, AVX2 or SSE2, honouring COLIBRI_ISA),
 * each thread streaming one slice; returns the best of a few passes.
 *
 * Return: bytes per second, or a negative errno value.
 */
double cb_measure_read_bw(int nthreads, size_t bytes);

/**
 * cb_read_bw_fit() - the buffer a read-bandwidth measure should use.
 * @l3: the last-level cache in bytes (<= 0: unknown).
 * @avail: bytes of memory available now (0: unknown).
 *
 * max(1 GiB, 4 x @l3), so the reads come from memory, not from the cache;
 * but at most half of @avail, so that the yardstick (and the model next to
 * it) fits a small machine, a 1 GiB VM for one; rounded down to 2 MiB.
 * Return: the size, at least 2 MiB.
 */
size_t cb_read_bw_fit(long l3, unsigned long long avail);

/*
 * cb_read_bw_default() - cb_read_bw_fit() for this machine: the L3 from
 * sysconf(), MemAvailable from /proc/meminfo.
 */
size_t cb_read_bw_default(void);

/**
 * cb_read_bytes() - read @len bytes at @p with the same loads, as the
 * reference "bare read" kernel; returns a value that depends on the data
 * so the compiler keeps the loads.
 */
cb_u64 cb_read_bytes(const void *p, size_t len);

#endif /* COLIBRI_MEMBW_H */

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * membw.c - measure memory read bandwidth (see membw.h).
 *
 * Each pass hands the buffer out as chunks of 2 MiB through the host
 * parallel_for, so the same thread pool that runs the engine does the
 * reading; the loop keeps 4 independent OR-accumulators so it is limited
 * by memory, not by a dependency chain.
 */
#include <errno.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/host.h"
#include "bench/membw.h"

#define CHUNK (2u << 20)

__attribute__((target("avx512f")))
static cb_u64 read_avx512(const char *p, size_t len)
{
	__m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
	size_t i;

	for (i = 0; i + 256 <= len; i += 256) {
		a = _mm512_or_si512(a, _mm512_load_si512((const void *)(p + i)));
		b = _mm512_or_si512(b, _mm512_load_si512((const void *)(p + i + 64)));
		c = _mm512_or_si512(c, _mm512_load_si512((const void *)(p + i + 128)));
		d = _mm512_or_si512(d, _mm512_load_si512((const void *)(p + i + 192)));
	}
	a = _mm512_or_si512(_mm512_or_si512(a, b), _mm512_or_si512(c, d));
	return (cb_u64)_mm512_reduce_or_epi64(a);
}

__attribute__((target("avx2")))
static cb_u64 read_avx2(const char *p, size_t len)
{
	__m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
	size_t i;

	for (i = 0; i + 128 <= len; i += 128) {
		a = _mm256_or_si256(a, _mm256_load_si256((const __m256i *)(p + i)));
		b = _mm256_or_si256(b, _mm256_load_si256((const __m256i *)(p + i + 32)));
		c = _mm256_or_si256(c, _mm256_load_si256((const __m256i *)(p + i + 64)));
		d = _mm256_or_si256(d, _mm256_load_si256((const __m256i *)(p + i + 96)));
	}
	a = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
	return (cb_u64)_mm256_extract_epi64(a, 0) | (cb_u64)_mm256_extract_epi64(a, 1) |
	       (cb_u64)_mm256_extract_epi64(a, 2) | (cb_u64)_mm256_extract_epi64(a, 3);
}

static cb_u64 read_sse2(const char *p, size_t len)
{
	__m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
	size_t i;

	for (i = 0; i + 64 <= len; i += 64) {
		a = _mm_or_si128(a, _mm_load_si128((const __m128i *)(p + i)));
		b = _mm_or_si128(b, _mm_load_si128((const __m128i *)(p + i + 16)));
		c = _mm_or_si128(c, _mm_load_si128((const __m128i *)(p + i + 32)));
		d = _mm_or_si128(d, _mm_load_si128((const __m128i *)(p + i + 48)));
	}
	a = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
	return (cb_u64)_mm_cvtsi128_si64(a) | (cb_u64)_mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a));
}

/* p must be 64-byte aligned; len a multiple of 256 for the full count. */
cb_u64 cb_read_bytes(const void *p, size_t len)
{
	if (cb_cpu_has(CB_CPU_AVX512F))
		return read_avx512(p, len);
	if (cb_cpu_has(CB_CPU_AVX2))
		return read_avx2(p, len);
	return read_sse2(p, len);
}

struct bw_job {
	const char *buf;
	size_t bytes;
	cb_u64 sink[64];	/* per chunk % 64; only to keep the loads */
};

static void bw_chunk(void *arg, int chunk)
{
	struct bw_job *j = arg;
	size_t off = (size_t)chunk * CHUNK;
	size_t len = j->bytes - off < CHUNK ? j->bytes - off : CHUNK;

	j->sink[chunk % 64] ^= cb_read_bytes(j->buf + off, len);
}

static void fill_chunk(void *arg, int chunk)
{
	struct bw_job *j = arg;
	size_t off = (size_t)chunk * CHUNK;
	size_t len = j->bytes - off < CHUNK ? j->bytes - off : CHUNK;

	memset((char *)j->buf + off, chunk | 1, len);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

size_t cb_read_bw_fit(long l3, unsigned long long avail)
{
	unsigned long long want = 1ull << 30;

	if (l3 > 0 && 4ull * (unsigned long long)l3 > want)
		want = 4ull * (unsigned long long)l3;
	if (avail && want > avail / 2)
		want = avail / 2;
	want &= ~(unsigned long long)(CHUNK - 1);
	return want < CHUNK ? CHUNK : (size_t)want;
}

/* MemAvailable in bytes, or 0 when /proc/meminfo does not say. */
static unsigned long long mem_available(void)
{
	unsigned long long kib = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024;
}

size_t cb_read_bw_default(void)
{
	return cb_read_bw_fit(sysconf(_SC_LEVEL3_CACHE_SIZE), mem_available());
}

double cb_measure_read_bw(int nthreads, size_t bytes)
{
	struct cb_exec *ex;
	struct bw_job j;
	double best = 0;
	void *buf;
	int pass, nchunks;

	bytes &= ~(size_t)255;
	if (bytes < CHUNK)
		return -EINVAL;
	nchunks = (int)((bytes + CHUNK - 1) / CHUNK);
	if (posix_memalign(&buf, CHUNK, bytes))
		return -ENOMEM;
	madvise(buf, bytes, MADV_HUGEPAGE);
	ex = cb_host_exec_create(nthreads);
	if (!ex) {
		free(buf);
		return -ENOMEM;
	}
	memset(&j, 0, sizeof(j));
	j.buf = buf;
	j.bytes = bytes;
	ex->parallel_for(ex, fill_chunk, &j, nchunks);	/* fault it in */
	for (pass = 0; pass < 4; pass++) {
		double t0 = now_s(), t;

		ex->parallel_for(ex, bw_chunk, &j, nchunks);
		t = now_s() - t0;
		if (bytes / t > best)
			best = bytes / t;
	}
	cb_host_exec_destroy(ex);
	free(buf);
	return best;
}

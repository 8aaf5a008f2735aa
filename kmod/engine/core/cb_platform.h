/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_platform.h - the only thing the Colibri engine includes from outside.
 *
 * The engine is freestanding C: no libc, no kernel headers.  Fixed-width types
 * come from the compiler's own predefined macros, so the same sources build
 * unchanged in the kernel module (-nostdinc) and in userspace.
 *
 * Services the engine needs from its host (CPU feature checks, running work in
 * parallel, yielding the CPU) are reached through small function tables that the
 * host fills in: kmod/ provides the kernel ones, userspace/ the pthread ones.
 *
 * Rule for the FPU boundary: every function declared in a header that non-FPU
 * kernel code includes (cb_engine.h, this file) takes and returns only integers
 * and pointers.  Floating point types appear only behind those pointers.
 */
#ifndef CB_PLATFORM_H
#define CB_PLATFORM_H

typedef __UINT8_TYPE__ cb_u8;
typedef __UINT16_TYPE__ cb_u16;
typedef __UINT32_TYPE__ cb_u32;
typedef __UINT64_TYPE__ cb_u64;
typedef __INT8_TYPE__ cb_s8;
typedef __INT16_TYPE__ cb_s16;
typedef __INT32_TYPE__ cb_s32;
typedef __INT64_TYPE__ cb_s64;
typedef __SIZE_TYPE__ cb_size;
typedef __UINTPTR_TYPE__ cb_uptr;

#define CB_NULL ((void *)0)
#define CB_ALIGN(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define CB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CB_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CB_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#define CB_LIKELY(x) __builtin_expect(!!(x), 1)
/*
 * Attributes by their GCC names: the freestanding engine does not rely on
 * the kernel's compiler_types.h (which kbuild force-includes, userspace
 * builds do not).
 */
#define CB_ALWAYS_INLINE __attribute__((__always_inline__))
#define CB_NOINLINE __attribute__((__noinline__))
#define CB_ALIGNED(n) __attribute__((__aligned__(n)))
#define CB_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Errors are negative errno values, so the kernel can pass them straight up. */
#define CB_EINVAL 22
#define CB_ENOMEM 12
#define CB_ENOSPC 28
#define CB_ERANGE 34
#define CB_EOVERFLOW 75
#define CB_ENOTSUP 95

/* Two NUL-terminated strings are equal (the engine has no libc); NULL equals nothing. */
static inline int cb_streq(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* CPU features an ISA variant may need.  The host answers cb_cpu_has(). */
enum cb_cpu_feature {
	CB_CPU_AVX2,
	CB_CPU_FMA,
	CB_CPU_F16C,
	CB_CPU_AVX512F,
	CB_CPU_AVX512BW,
	CB_CPU_AVX512VL,
	CB_CPU_AVX512VNNI,
	CB_CPU_AVX512BF16,
	CB_CPU__COUNT
};

/*
 * Provided by the host: kmod/ answers from boot_cpu_has(), userspace from
 * cpuid.  Userspace may also cap the answer (COLIBRI_ISA=scalar|avx2|avx512)
 * so that tests can pin the ISA level the kernel will use.
 */
int cb_cpu_has(enum cb_cpu_feature f);

/*
 * Parallel execution.  The engine splits each step into independent chunks
 * (disjoint outputs, no shared accumulators), so the result never depends on
 * which thread ran a chunk.  The host runs fn(arg, i) for every i in
 * [0, nchunks) and returns when all have finished.
 *
 * In the kernel each chunk runs inside kernel_fpu_begin/end on a worker
 * kthread; chunks are sized by the engine to stay short (see CB_CHUNK_PS
 * in cb_engine_priv.h).
 *
 * yield() is called by the engine on the calling thread between steps: the
 * kernel host leaves the FPU section there, calls cond_resched() and enters
 * it again; userspace may leave it NULL.  A non-zero return from yield()
 * aborts the forward pass (the request was cancelled) with that error.
 *
 * experts_submit() and experts_wait(), both optional, let the host hand
 * routed experts to another executor (an accelerator); see struct
 * cb_expert_task in cb_engine.h for the protocol.  Both are called on the
 * calling thread between steps, like yield(); a non-zero return aborts the
 * forward pass with that value.
 *
 * weight_local(), optional, is asked inside a gemm chunk (on the thread
 * running it) for the address to read the model's weight bytes at @w from:
 * the host may keep copies of the weights on several NUMA nodes and answer
 * with the one on the calling CPU's node, or with @w for a pointer that is
 * not into its weights.  Every copy holds the same bytes, so no result
 * changes; NULL reads @w.
 */
struct cb_expert_task;

struct cb_exec {
	void (*parallel_for)(struct cb_exec *ex, void (*fn)(void *arg, int chunk),
			     void *arg, int nchunks);
	int (*yield)(struct cb_exec *ex);
	int (*experts_submit)(struct cb_exec *ex, struct cb_expert_task *tasks, int n);
	int (*experts_wait)(struct cb_exec *ex, struct cb_expert_task *tasks, int n);
	const void *(*weight_local)(struct cb_exec *ex, const void *w);
	int nthreads;		/* chunks are planned for this many threads */
	void *host;		/* host private */
};

#endif /* CB_PLATFORM_H */

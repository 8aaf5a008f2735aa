/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * colibri.h - the userspace ABI of /dev/colibri.
 *
 * Conventions, shared by every command:
 *
 * - Each command is an ioctl encoded with _IOWR('C', nr, struct ...); the
 *   same numbers serve as io_uring URING_CMD cmd_op values.  The kernel
 *   decodes the command from its type and number and ignores the size bits
 *   of the encoding: the size of the argument is the struct's own @size
 *   field, so a program built against an older or newer header keeps working.
 * - Every argument struct begins with __u32 @size (set by the caller to
 *   sizeof(its struct)) and __u32 @flags.  The kernel accepts a smaller
 *   struct down to the first published version of it (the *_SIZE_VER0
 *   constants) and a larger one whose extra bytes are all zero, the way
 *   copy_struct_from_user() does; anything else is -EINVAL.
 * - Unknown bits in @flags and non-zero @reserved fields are -EINVAL, so
 *   that they can be given a meaning later.
 * - Pointers travel as __u64.  A bad pointer is -EFAULT.
 * - Output structs are written back up to min(caller size, kernel size);
 *   fields the kernel does not know stay as the caller passed them (zero).
 */
#ifndef _UAPI_LINUX_COLIBRI_H
#define _UAPI_LINUX_COLIBRI_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on incompatible changes only; additions extend structs instead. */
#define COLIBRI_ABI_VERSION	1

#define COLIBRI_DEVICE_PATH	"/dev/colibri"
#define COLIBRI_IOC_MAGIC	'C'

/* Engine ISA levels (struct colibri_info.isa_level). */
#define COLIBRI_ISA_SCALAR	0	/* portable C, the reference */
#define COLIBRI_ISA_AVX2	1	/* AVX2 + FMA + F16C */
#define COLIBRI_ISA_AVX512	2	/* AVX-512 F/BW/VL (+VNNI when present) */

/* Memory providers (struct colibri_info.mem_provider). */
#define COLIBRI_MEM_PAGES	0	/* high-order page allocations */
#define COLIBRI_MEM_MEMMAP	1	/* a range reserved at boot (memmap=) */

/**
 * struct colibri_info - COLIBRI_IOC_GET_INFO: what the module is and has.
 * @size: in: sizeof(struct colibri_info) as the caller knows it.
 * @flags: in: must be 0 (no flags are defined).
 * @abi_version: out: COLIBRI_ABI_VERSION of the running module.
 * @isa_level: out: COLIBRI_ISA_* the engine uses on this CPU.
 * @mem_provider: out: COLIBRI_MEM_* used for models and arenas.
 * @reserved0: must be zero on input; zero on output.
 * @mem_limit: out: bytes of pinned memory the module may use in all.
 * @mem_total: out: bytes the provider holds now (reserved or allocated).
 * @mem_used: out: bytes of that in use by models and sessions.
 * @max_models: out: limit on loaded models.
 * @max_sessions: out: limit on attached sessions, all models together.
 * @nr_models: out: models loaded now.
 * @nr_sessions: out: sessions attached now.
 * @isa_name: out: NUL-terminated name of the ISA variant, e.g. "avx2".
 * @reserved: must be zero on input; zero on output.
 *
 * Anyone who may open the device may call it.  Errors: -EINVAL for a bad
 * @size, unknown @flags or non-zero @reserved; -EFAULT for a bad pointer.
 */
struct colibri_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 isa_level;
	__u32 mem_provider;
	__u32 reserved0;
	__u64 mem_limit;
	__u64 mem_total;
	__u64 mem_used;
	__u32 max_models;
	__u32 max_sessions;
	__u32 nr_models;
	__u32 nr_sessions;
	char isa_name[16];
	__u64 reserved[4];
};

#define COLIBRI_INFO_SIZE_VER0	112	/* first published size */

#define COLIBRI_IOC_GET_INFO	_IOWR(COLIBRI_IOC_MAGIC, 0x00, struct colibri_info)

/* Sizes are ABI: a change here is a new struct version, never an edit. */
#if defined(__cplusplus)
#define __COLIBRI_ABI_ASSERT(e, m) static_assert(e, m)
#else
#define __COLIBRI_ABI_ASSERT(e, m) _Static_assert(e, m)
#endif
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_info) == COLIBRI_INFO_SIZE_VER0,
		     "struct colibri_info");

#endif /* _UAPI_LINUX_COLIBRI_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * colibri.h - the userspace ABI of /dev/colibri.
 *
 * Conventions, shared by every command:
 *
 * - Each command is an ioctl encoded with _IOWR(COLIBRI_IOC_MAGIC, nr,
 *   struct ...); the same numbers serve as io_uring URING_CMD cmd_op values.
 *   The magic, 0xC1, is free in the kernel's ioctl-number.rst registry
 *   (ABI version 1 used 'C', which soundcard.h, capi.h and cosa.h share).  The kernel
 *   decodes the command from its type and number and ignores the size bits
 *   of the encoding: the size of the argument is the struct's own @size
 *   field, so a program built against an older or newer header keeps working.
 * - Every argument struct begins with __u32 @size (set by the caller to
 *   sizeof(its struct)) and __u32 @flags.  The kernel accepts a smaller
 *   struct down to the first published version of it (the *_SIZE_VER0
 *   constants) and a larger one whose extra bytes are all zero, the way
 *   copy_struct_from_user() does.  A larger struct with a non-zero byte
 *   past the kernel's size is -E2BIG (as openat2() and clone3() answer); a
 *   size below the first version or above a page is -EINVAL.
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
#define COLIBRI_ABI_VERSION	2

#define COLIBRI_DEVICE_PATH	"/dev/colibri"
#define COLIBRI_IOC_MAGIC	0xC1

/*
 * Engine ISA levels (struct colibri_info.isa_level, and the module's
 * max_isa): the engine's enum cb_isa_level equals them (asserted in
 * kmod/colibri_main.c).
 */
#define COLIBRI_ISA_SCALAR	0	/* portable C, the reference */
#define COLIBRI_ISA_AVX2	1	/* AVX2 + FMA + F16C */
#define COLIBRI_ISA_AVX512	2	/* AVX-512 F/BW/VL */
#define COLIBRI_ISA_AVX512_VNNI	3	/* AVX-512 F/BW/VL + VNNI */

/* Memory providers (struct colibri_info.mem_provider). */
#define COLIBRI_MEM_PAGES	0	/* high-order page allocations */
#define COLIBRI_MEM_MEMMAP	1	/* a range reserved at boot (memmap=) */

/*
 * Where a model's weights live on a NUMA machine (struct
 * colibri_model_entry.numa; chosen by COLIBRI_LOAD_NUMA_* flags).
 */
#define COLIBRI_NUMA_LOCAL	0	/* where the loading task's memory policy says */
#define COLIBRI_NUMA_INTERLEAVE	1	/* every node with memory in turn, 64 KiB each */
#define COLIBRI_NUMA_REPLICATE	2	/* a copy per node; each CPU reads its own */

/**
 * struct colibri_info - COLIBRI_IOC_GET_INFO: what the module is and has.
 * @size: in: sizeof(struct colibri_info) as the caller knows it.
 * @flags: in: must be 0 (no flags are defined).
 * @abi_version: out: COLIBRI_ABI_VERSION of the running module.
 * @isa_level: out: COLIBRI_ISA_* the engine uses on this CPU.
 * @mem_provider: out: COLIBRI_MEM_* used for models and arenas.
 * @numa_nodes: in: must be zero; out: NUMA nodes with memory (1 on a
 *	machine that is not NUMA).  Was @reserved0, always zero, before.
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
	__u32 numa_nodes;
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

#define COLIBRI_NAME_LEN	32	/* model names, NUL-terminated */

/**
 * struct colibri_load - COLIBRI_IOC_LOAD: pin a .colibri model in the kernel.
 * @size: in: sizeof(struct colibri_load).
 * @flags: in: 0, or one of COLIBRI_LOAD_NUMA_INTERLEAVE and
 *	COLIBRI_LOAD_NUMA_REPLICATE: where the weights go on a NUMA machine.
 *	Without either they come from where the calling task's memory
 *	policy says (COLIBRI_NUMA_LOCAL).  INTERLEAVE takes them from every
 *	node with memory in turn, 64 KiB at a time; REPLICATE pins one copy
 *	per node with memory, each on its node, and the engine's threads read
 *	the copy of their own node.  On a machine with one node both give
 *	one copy on it.  The memmap provider refuses both (-EINVAL: its
 *	reserved range is one block of physical memory).
 * @fd: in: a file descriptor of the .colibri file, open for reading.
 * @reserved0: must be zero.
 * @name: in: the name to publish the model under (NUL-terminated; letters,
 *	digits, '.', '_' and '-'); an empty name takes the file's own name.
 *	out: the name used.
 * @bytes: out: bytes of pinned memory the model occupies, every copy of
 *	its weights counted (all of them count against mem_limit_mb).
 * @reserved: must be zero.
 *
 * Needs CAP_SYS_ADMIN.  The file is validated in full (header, directory,
 * every offset, size and shape, every checksum) before the model is
 * published.  Errors: -EPERM without the capability; -EBADF for a bad @fd;
 * -EINVAL for a bad struct or name, or a file that fails validation (the
 * reason is logged, rate-limited); -EEXIST if the name is taken; -ENOSPC if
 * max_models are loaded; -ENOMEM if the memory limit would be exceeded (or
 * a node has not the memory for its copy).  Unknown flags, or both NUMA
 * flags, are -EINVAL.
 */
struct colibri_load {
	__u32 size;
	__u32 flags;
#define COLIBRI_LOAD_NUMA_INTERLEAVE	(1U << 0)	/* spread over every node */
#define COLIBRI_LOAD_NUMA_REPLICATE	(1U << 1)	/* a copy on every node */
#define COLIBRI_LOAD_FLAGS_ALL	(COLIBRI_LOAD_NUMA_INTERLEAVE | COLIBRI_LOAD_NUMA_REPLICATE)
	__s32 fd;
	__u32 reserved0;
	char name[COLIBRI_NAME_LEN];
	__u64 bytes;
	__u64 reserved[4];
};

#define COLIBRI_LOAD_SIZE_VER0	88

/**
 * struct colibri_unload - COLIBRI_IOC_UNLOAD: remove a loaded model.
 * @size: in: sizeof(struct colibri_unload).
 * @flags: in: COLIBRI_UNLOAD_WAIT or 0.
 * @name: in: the model's name.
 * @reserved: must be zero.
 *
 * Needs CAP_SYS_ADMIN.  The model is unpublished at once: no LIST,
 * ATTACH, GET_TOKENIZER or EXPORT_DMABUF finds it any more.  Without
 * COLIBRI_UNLOAD_WAIT a model with attached sessions is refused with -EBUSY
 * (and one that succeeds leaves no session of it).  With it, every session
 * of the model is revoked: a step it has in flight ends with -ENODEV at the
 * end of its pass, every later SUBMIT on it says -ENODEV, and its pinned
 * memory is released without waiting for its file to close (the file may
 * ATTACH again).  The call waits, interruptibly, until that is done for
 * every session, which takes at most the rest of the passes in flight: no
 * session holder can hold it off.  The model's own memory goes then, or
 * with the last dma-buf of it (COLIBRI_IOC_EXPORT_DMABUF).
 *
 * Errors: -EPERM without the capability; -EINVAL for a bad struct, flag or
 * name; -ENOENT if no model has that name; -EBUSY without WAIT while
 * sessions are attached; -EDEADLK with WAIT from a file that is itself
 * attached to that model (the call would revoke the caller's own session:
 * close it, or unload from another file); -EINTR if a signal interrupted
 * the wait (the model stays unloaded and its sessions revoked; their memory
 * goes as their last steps end).
 */
struct colibri_unload {
	__u32 size;
	__u32 flags;
#define COLIBRI_UNLOAD_WAIT	(1U << 0)	/* revoke the sessions, wait for them */
#define COLIBRI_UNLOAD_FLAGS_ALL	COLIBRI_UNLOAD_WAIT
	char name[COLIBRI_NAME_LEN];
	__u64 reserved[2];
};

#define COLIBRI_UNLOAD_SIZE_VER0	56

/**
 * struct colibri_attach - COLIBRI_IOC_ATTACH: bind this open file to a model.
 * @size: in: sizeof(struct colibri_attach).
 * @flags: in: must be 0.
 * @name: in: the model's name.
 * @max_context: in: positions this session may hold (0: the module's
 *	default_context); out: the value used.
 * @max_batch: in: most tokens one forward pass of this session carries
 *	(0: 64); longer submissions are split.  out: the value used.
 * @bytes: out: bytes the session alone holds: its io buffers (tokens,
 *	logits, routing trace; unpinned kernel memory) and, on an engine of
 *	its own, that engine's pinned KV cache and scratch; a session on its
 *	model's shared engine (one sequence slot of it) counts only its io
 *	buffers, the engine shows in /sys/kernel/colibri/models/NAME/shared_bytes.
 *	GET_INFO's mem_used counts the pinned part only.
 * @vocab_size: out: the model's vocabulary size (length of a logits row).
 * @n_layers: out: layers (for the routing trace).
 * @top_k: out: experts per token (for the routing trace).
 * @reserved: must be zero.
 *
 * Any process that may open the device may attach.  One attach per open
 * file; a file whose session was revoked by an UNLOAD may attach again.
 *
 * What the session alone holds (@bytes) is charged to the attaching task:
 * to its user's RLIMIT_MEMLOCK (the user's locked_vm, as io_uring counts
 * it; not with CAP_IPC_LOCK), to its memory cgroup, and to its user's
 * share of the module (the max_sessions_per_user and mem_limit_per_user_mb
 * module parameters; not with CAP_SYS_RESOURCE).  The context is never
 * more than the model's (default_context for a model file that does not
 * say).
 *
 * Errors: -EBUSY if this file is attached already (or its revoked session
 * still has a step in flight); -ENOENT if no model has that name (or it is
 * being unloaded); -ENOSPC when max_sessions are attached; -EDQUOT when
 * the user is at max_sessions_per_user or would be over
 * mem_limit_per_user_mb (logged, rate-limited, with the uid); -ENOMEM when
 * the module's memory limit, the user's RLIMIT_MEMLOCK or the memory
 * cgroup's limit would be exceeded, or the memory cannot be had; -EINTR
 * if a fatal signal came while the memory was being allocated; -EINVAL
 * for a bad struct, a context beyond the model's or a batch beyond 4096.
 */
struct colibri_attach {
	__u32 size;
	__u32 flags;
	char name[COLIBRI_NAME_LEN];
	__u32 max_context;
	__u32 max_batch;
	__u64 bytes;
	__u32 vocab_size;
	__u32 n_layers;
	__u32 top_k;
	__u32 reserved0;
	__u64 reserved[4];
};

#define COLIBRI_ATTACH_SIZE_VER0	104

/**
 * struct colibri_submit - COLIBRI_IOC_SUBMIT: append tokens, get the next one.
 * @size: in: sizeof(struct colibri_submit).
 * @flags: in: COLIBRI_SUBMIT_* below.
 * @tokens: in: user pointer to __u32 token ids.
 * @n_tokens: in: how many (0 is allowed only with COLIBRI_SUBMIT_RESET).
 * @temperature_milli: in: sampling temperature x 1000; 0 = greedy.
 * @top_k: in: keep the k most likely tokens; 0 = all.
 * @top_p_ppm: in: nucleus mass in parts per million; 0 = off.
 * @seed: in: sampling seed; the draw for position p uses (seed, p).
 * @logits: in: user pointer to float[@logits_len] for the logits of the
 *	last position (with COLIBRI_SUBMIT_LOGITS).
 * @logits_len: in: capacity of @logits in floats, >= the vocabulary size.
 * @trace_len: in: capacity of @trace in __u32 (with COLIBRI_SUBMIT_TRACE),
 *	>= n_tokens * n_layers * top_k * 2.
 * @trace: in: user pointer to __u32 [n_tokens][n_layers][top_k][2]: expert
 *	id and the f32 bits of its routing weight, per token, layer and rank;
 *	dense layers hold 0xffffffff and 0.
 * @token: out: the sampled next token.
 * @n_past: out: the sequence's length after this call.
 * @reserved: must be zero.
 *
 * Needs an attached session.  The call sleeps until the scheduler has run
 * the tokens through the model; a signal interrupts it (-EINTR), and then
 * the session's sequence is reset.  Errors: -ENOTCONN if not attached;
 * -EINVAL for bad flags, counts, lengths or token ids; -ENOSPC if the
 * sequence would exceed the session's max_context; -EFAULT for bad
 * pointers; -ENODEV once the model was unloaded with COLIBRI_UNLOAD_WAIT,
 * which revokes its sessions (also for a step in flight then; the file
 * can only be closed or ATTACHed again).
 */
struct colibri_submit {
	__u32 size;
	__u32 flags;
#define COLIBRI_SUBMIT_RESET	(1U << 0)	/* forget the sequence first */
#define COLIBRI_SUBMIT_LOGITS	(1U << 1)	/* copy out the last logits */
#define COLIBRI_SUBMIT_TRACE	(1U << 2)	/* copy out the routing trace */
#define COLIBRI_SUBMIT_FLAGS_ALL	(COLIBRI_SUBMIT_RESET | COLIBRI_SUBMIT_LOGITS | \
					 COLIBRI_SUBMIT_TRACE)
	__u64 tokens;
	__u32 n_tokens;
	__u32 temperature_milli;
	__u32 top_k;
	__u32 top_p_ppm;
	__u64 seed;
	__u64 logits;
	__u32 logits_len;
	__u32 trace_len;
	__u64 trace;
	__s32 token;
	__u32 n_past;
	__u64 reserved[4];
};

#define COLIBRI_SUBMIT_SIZE_VER0	104

/**
 * struct colibri_uring_cmd - COLIBRI_IOC_SUBMIT through io_uring: the
 *	payload of an IORING_OP_URING_CMD SQE (its 16-byte cmd area).
 * @submit: user pointer to a struct colibri_submit, read and written back
 *	exactly as the ioctl does.
 * @reserved: must be zero.
 *
 * The SQE: opcode IORING_OP_URING_CMD, fd an attached /dev/colibri file (or
 * its fixed-file index with IOSQE_FIXED_FILE), cmd_op COLIBRI_IOC_SUBMIT,
 * uring_cmd_flags 0, and this struct at the start of sqe->cmd.  On a ring
 * with IORING_SETUP_SQE128 the other 64 bytes of the cmd area must be zero.
 * The kernel reads the payload, the struct colibri_submit and the tokens
 * while the SQE is submitted, so the SQE may be reused at once; @submit and
 * the buffers it names must stay valid until the completion arrives, which
 * writes @token, @n_past, the logits and the trace back in the submitting
 * task, as the ioctl does.
 *
 * The CQE's res is the sampled token (>= 0), 0 for a reset-only submission
 * (n_tokens 0 with COLIBRI_SUBMIT_RESET, completed at once), or -errno: the
 * ioctl's errors, plus -EBUSY when this file already has a submission in
 * flight (one step at a time per session, by io_uring or ioctl; an ioctl
 * SUBMIT meanwhile is -EBUSY too), -EOPNOTSUPP for any other cmd_op, and
 * -ECANCELED when the request was cancelled.  With IORING_SETUP_CQE32,
 * big_cqe[0] holds @n_past.  An error after the tokens were queued resets
 * the session's sequence, as an interrupted ioctl does.
 *
 * Cancellation: IORING_OP_ASYNC_CANCEL never reaches a uring_cmd (it
 * answers -ENOENT, or -EALREADY, and the submission completes normally).
 * The submitting task's exit cancels its submissions in flight (their
 * CQEs, if anyone reads them, say -ECANCELED), and so does closing the ring
 * on kernels that cancel uring_cmds (6.7 and later); on 6.1 a closed ring's
 * submission runs to its end first.  Closing the /dev/colibri file cancels
 * nothing: a submission keeps the file open until its completion.
 */
struct colibri_uring_cmd {
	__u64 submit;
	__u64 reserved;
};

#define COLIBRI_URING_CMD_SIZE	16

/**
 * struct colibri_model_entry - one model in COLIBRI_IOC_LIST's answer.
 * @name: the model's name.
 * @arch: architecture, COLIBRI_ARCH_* (colibri_format.h).
 * @sessions: sessions attached now.
 * @bytes: pinned bytes of its weights, every copy counted.
 * @tokens: tokens run through it since it was loaded.
 * @vocab_size: vocabulary size.
 * @n_layers: layers.
 * @n_experts: routed experts (0 for a dense model).
 * @top_k: experts per token.
 * @numa: COLIBRI_NUMA_*: where its weights live.
 * @numa_copies: copies of its weights (1, or one per node with REPLICATE).
 * @reserved: zero.
 *
 * @numa and @numa_copies were reserved (zero) before: an entry of the
 * first version's size holds them.
 */
struct colibri_model_entry {
	char name[COLIBRI_NAME_LEN];
	__u32 arch;
	__u32 sessions;
	__u64 bytes;
	__u64 tokens;
	__u32 vocab_size;
	__u32 n_layers;
	__u32 n_experts;
	__u32 top_k;
	__u32 numa;
	__u32 numa_copies;
	__u64 reserved[1];
};

/**
 * struct colibri_list - COLIBRI_IOC_LIST: the loaded models.
 * @size: in: sizeof(struct colibri_list).
 * @flags: in: must be 0.
 * @entries: in: user pointer to struct colibri_model_entry[@capacity].
 * @capacity: in: entries the array holds (0 to only count).
 * @count: out: models loaded; min(@count, @capacity) entries were written.
 * @entry_size: in: sizeof(struct colibri_model_entry) as the caller knows
 *	it (>= the first version's 88); out: the size the kernel wrote.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 *
 * Anyone who may open the device may call it.
 */
struct colibri_list {
	__u32 size;
	__u32 flags;
	__u64 entries;
	__u32 capacity;
	__u32 count;
	__u32 entry_size;
	__u32 reserved0;
	__u64 reserved[2];
};

#define COLIBRI_LIST_SIZE_VER0		48
#define COLIBRI_MODEL_ENTRY_SIZE_VER0	88

/**
 * struct colibri_export - COLIBRI_IOC_EXPORT_DMABUF: a model's weights as a
 *	dma-buf, for an accelerator driver (or any dma-buf importer) to use.
 * @size: in: sizeof(struct colibri_export).
 * @flags: in: must be 0.  The dma-buf is always read-only: weights are
 *	sealed once loaded and shared by every session.
 * @name: in: the model's name.
 * @fd: out: the dma-buf's file descriptor, open O_RDONLY | O_CLOEXEC.
 * @reserved0: must be zero.
 * @bytes: out: the dma-buf's size: the model file's data region (its
 *	data_offset .. end of file), rounded up to whole pages with zeros.
 * @reserved: must be zero.
 *
 * Needs CAP_SYS_ADMIN.  Each call makes a new, independent dma-buf.  The
 * dma-buf holds the model: unloading it unpublishes it, and its pinned
 * memory is freed only when the last dma-buf (and the last session and
 * mapping) is gone.  The dma-buf can be mapped read-only (mmap without
 * PROT_WRITE), and devices get a DMA_TO_DEVICE mapping.  Errors: -EPERM
 * without the capability; -EINVAL for a bad struct or name; -ENOENT if no
 * model has that name; -EMFILE/-ENFILE without a free descriptor; -ENOMEM.
 */
struct colibri_export {
	__u32 size;
	__u32 flags;
	char name[COLIBRI_NAME_LEN];
	__s32 fd;
	__u32 reserved0;
	__u64 bytes;
	__u64 reserved[4];
};

#define COLIBRI_EXPORT_SIZE_VER0	88

/**
 * struct colibri_tokenizer - COLIBRI_IOC_GET_TOKENIZER: a loaded model's
 *	tokenizer or chat template, so that a process can use a model pinned
 *	by name alone.
 * @size: in: sizeof(struct colibri_tokenizer).
 * @flags: in: 0 for the tokenizer section, COLIBRI_TOKENIZER_CHAT_TEMPLATE
 *	for the chat template section.
 * @name: in: the model's name.
 * @buf: in: user pointer to @buf_len bytes for the section (may be 0 when
 *	@buf_len is 0, to ask for the size only).
 * @buf_len: in: capacity of @buf in bytes.
 * @section_size: out: bytes of the section asked for, exactly as the model
 *	file holds it (the tokenizer: for COLIBRI_TOK_HF_JSON a Hugging Face
 *	tokenizer.json; the chat template: its Jinja source, UTF-8); 0 when
 *	the model has none.  The section was copied to @buf only when
 *	@buf_len >= @section_size: a caller with a smaller buffer gets the
 *	size and calls again, as with COLIBRI_IOC_LIST.
 * @tok_kind: out: COLIBRI_TOK_* of colibri_format.h.
 * @tok_flags: out: COLIBRI_TOK_F_* of colibri_format.h.
 * @bos_id: out: beginning-of-sequence token, or -1.
 * @eos_id: out: end-of-sequence token, or -1.
 * @pad_id: out: padding token, or -1.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 *
 * Anyone who may open the device may call it.  Both sections were verified
 * against the file's checksums at LOAD and are kept, unpinned, with the
 * model.  Errors: -EINVAL for a bad struct, flag or name; -ENOENT if no
 * model has that name; -EFAULT for a bad pointer.
 */
struct colibri_tokenizer {
	__u32 size;
	__u32 flags;
#define COLIBRI_TOKENIZER_CHAT_TEMPLATE	(1U << 0)	/* the chat template section */
#define COLIBRI_TOKENIZER_FLAGS_ALL	COLIBRI_TOKENIZER_CHAT_TEMPLATE
	char name[COLIBRI_NAME_LEN];
	__u64 buf;
	__u64 buf_len;
	__u64 section_size;
	__u32 tok_kind;
	__u32 tok_flags;
	__s32 bos_id;
	__s32 eos_id;
	__s32 pad_id;
	__u32 reserved0;
	__u64 reserved[4];
};

#define COLIBRI_TOKENIZER_SIZE_VER0	120

#define COLIBRI_IOC_LOAD	_IOWR(COLIBRI_IOC_MAGIC, 0x01, struct colibri_load)
#define COLIBRI_IOC_UNLOAD	_IOWR(COLIBRI_IOC_MAGIC, 0x02, struct colibri_unload)
#define COLIBRI_IOC_ATTACH	_IOWR(COLIBRI_IOC_MAGIC, 0x03, struct colibri_attach)
#define COLIBRI_IOC_SUBMIT	_IOWR(COLIBRI_IOC_MAGIC, 0x04, struct colibri_submit)
#define COLIBRI_IOC_LIST	_IOWR(COLIBRI_IOC_MAGIC, 0x05, struct colibri_list)
#define COLIBRI_IOC_GET_TOKENIZER	_IOWR(COLIBRI_IOC_MAGIC, 0x06, struct colibri_tokenizer)
#define COLIBRI_IOC_EXPORT_DMABUF	_IOWR(COLIBRI_IOC_MAGIC, 0x10, struct colibri_export)

/* Sizes are ABI: a change here is a new struct version, never an edit. */
#if defined(__cplusplus)
#define __COLIBRI_ABI_ASSERT(e, m) static_assert(e, m)
#else
#define __COLIBRI_ABI_ASSERT(e, m) _Static_assert(e, m)
#endif
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_info) == COLIBRI_INFO_SIZE_VER0,
		     "struct colibri_info");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_load) == COLIBRI_LOAD_SIZE_VER0,
		     "struct colibri_load");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_unload) == COLIBRI_UNLOAD_SIZE_VER0,
		     "struct colibri_unload");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_attach) == COLIBRI_ATTACH_SIZE_VER0,
		     "struct colibri_attach");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_submit) == COLIBRI_SUBMIT_SIZE_VER0,
		     "struct colibri_submit");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_uring_cmd) == COLIBRI_URING_CMD_SIZE,
		     "struct colibri_uring_cmd");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_list) == COLIBRI_LIST_SIZE_VER0,
		     "struct colibri_list");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_model_entry) == COLIBRI_MODEL_ENTRY_SIZE_VER0,
		     "struct colibri_model_entry");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_export) == COLIBRI_EXPORT_SIZE_VER0,
		     "struct colibri_export");
__COLIBRI_ABI_ASSERT(sizeof(struct colibri_tokenizer) == COLIBRI_TOKENIZER_SIZE_VER0,
		     "struct colibri_tokenizer");

#endif /* _UAPI_LINUX_COLIBRI_H */

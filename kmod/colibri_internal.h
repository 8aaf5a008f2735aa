/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_internal.h - shared declarations of the colibri module.
 */
#ifndef COLIBRI_INTERNAL_H
#define COLIBRI_INTERNAL_H

#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "colibri.h"
#include "core/cb_engine.h"

#define COLIBRI_NAME "colibri"

/* Sanity bounds on what a session may ask for. */
#define COLIBRI_MAX_CONTEXT	(1U << 20)	/* printed with %u */
#define COLIBRI_MAX_BATCH	4096U
#define COLIBRI_MAX_SLOTS	64	/* sessions on one engine: a u64 bitmap */

/*
 * Module parameters (colibri_params.c); read-only after load but for the
 * per-user limits (READ_ONCE).
 */
extern unsigned int colibri_mem_limit_mb;
extern unsigned int colibri_max_sessions_per_user;
extern unsigned int colibri_mem_limit_per_user_mb;
extern unsigned int colibri_max_models;
extern unsigned int colibri_max_sessions;
extern unsigned int colibri_default_context;
extern unsigned int colibri_max_batch_tokens;
extern unsigned int colibri_batch_slots;
extern unsigned int colibri_fpu_slice_us;
extern int colibri_max_isa;
extern char *colibri_memmap;

/* Engine facts chosen once at load (colibri_params.c, set by colibri_main.c). */
struct colibri_engine_caps {
	int isa_level;		/* COLIBRI_ISA_* */
	const char *isa_name;	/* static string owned by the engine */
};

extern struct colibri_engine_caps colibri_caps;

/* colibri_mem.c: pinned buffers, accounted against mem_limit_mb. */
struct colibri_chunk {
	phys_addr_t phys;		/* start of a physically contiguous run */
	u64 len;			/* its length */
	struct page *page;		/* pages provider: the allocation */
	unsigned int order;		/* ... and its order */
};

struct colibri_buf {
	void *vaddr;			/* kernel mapping of the whole buffer */
	u64 size;			/* bytes, page aligned */
	struct page **pages;		/* pages provider: every page; else NULL */
	struct colibri_chunk *chunks;	/* physically contiguous runs */
	unsigned int nr_chunks;
};

/* colibri_buf_alloc_node()'s @node: every node with memory in turn */
#define COLIBRI_NODE_INTERLEAVE	(-2)

int colibri_buf_alloc(struct colibri_buf *buf, u64 size, bool account);
int colibri_buf_alloc_node(struct colibri_buf *buf, u64 size, bool account, int node);
void colibri_buf_free(struct colibri_buf *buf);
int colibri_buf_seal(struct colibri_buf *buf);
u64 colibri_mem_used(void);
u64 colibri_mem_limit(void);
u64 colibri_mem_total(void);
int colibri_mem_provider(void);
int colibri_mem_init(const char *spec);
void colibri_mem_exit(void);

/*
 * colibri_acct.c: what a session is charged to its user: a session count
 * and bytes per uid, RLIMIT_MEMLOCK through the user's locked_vm.
 */
struct colibri_user;
struct user_struct;

struct colibri_charge {
	kuid_t uid;			/* the attaching task's real uid */
	struct colibri_user *user;	/* per-user counts; NULL if exempt */
	struct user_struct *locked;	/* RLIMIT_MEMLOCK charge; NULL if none */
	unsigned long pages;		/* ... of this many pages */
	u64 bytes;			/* charged to ->user */
};

int colibri_charge_session(struct colibri_charge *c);
int colibri_charge_bytes(struct colibri_charge *c, u64 bytes);
void colibri_uncharge(struct colibri_charge *c);

/* colibri_exec.c: worker kthreads running engine chunks. */
struct cb_exec *colibri_exec_start(int (*yield)(struct cb_exec *ex), void *host);
void colibri_exec_stop(struct cb_exec *ex);

/**
 * struct colibri_numa - where a model's weights live (colibri_numa.c).
 * @policy: COLIBRI_NUMA_* of uapi/colibri.h.
 * @nr_copies: copies of the weights: 1, or with COLIBRI_NUMA_REPLICATE one
 *	per node with memory.
 * @copy_node: [nr_copies] the node each copy is on; NUMA_NO_NODE for a
 *	single copy that is not bound to one.
 * @base: [nr_copies] each copy's kernel mapping; base[0] is ->mem.vaddr.
 * @replicas: [nr_copies - 1] the copies besides ->mem.
 * @node_copy: [nr_node_ids] the copy each node's CPUs read.
 * @reads: per CPU, [nr_copies] weight reads (gemm chunks) each copy served.
 *
 * All set before the model is published, and constant until it is freed.
 */
struct colibri_numa {
	u32 policy;
	u32 nr_copies;
	int *copy_node;
	const void **base;
	struct colibri_buf *replicas;
	u16 *node_copy;
	u64 __percpu *reads;
};

/**
 * struct colibri_section - a section of a model's file kept in unpinned
 * kernel memory (its tokenizer, its chat template), verified and then
 * immutable.  Counted apart from the model, so that GET_TOKENIZER copies
 * it out holding the section only: a copy that faults for ever then holds
 * no model memory pinned past its UNLOAD.
 */
struct colibri_section {
	struct kref ref;
	u64 size;
	u8 data[];
};

struct colibri_section *colibri_section_get(struct colibri_section *sec);
void colibri_section_put(struct colibri_section *sec);

/**
 * struct colibri_model - a loaded, sealed model shared by its sessions.
 *
 * Lifetime: the kobject's reference count.  The registry holds one
 * reference while the model is published; every session holds one.  The
 * release function frees the pinned memory.
 */
struct colibri_model {
	struct kobject kobj;
	struct list_head node;		/* protected by colibri_models_lock */
	char name[COLIBRI_NAME_LEN];
	/*
	 * Its sessions (struct colibri_session.model_node); no session is
	 * added once ->dying (set when it is unpublished), so an UNLOAD
	 * that saw none leaves none, and one that revokes them all sees
	 * every one.  ->nr_sessions changes under the lock too.
	 */
	struct mutex sessions_lock;
	struct list_head sessions;	/* protected by ->sessions_lock */
	bool dying;			/* protected by ->sessions_lock */
	struct colibri_buf mem;		/* the file's tensor data, sealed */
	struct colibri_numa numa;	/* ->mem's placement, and its replicas */
	void *bind;			/* layer/expert tables (kvmalloc) */
	struct cb_model_config cfg;
	struct cb_model_weights w;
	u64 file_size;
	/* the file's tokenizer and chat template, verified; or NULL */
	struct colibri_section *tok;
	struct colibri_section *tmpl;
	u32 tok_kind, tok_flags;
	s32 bos_id, eos_id, pad_id;
	atomic_t nr_sessions;		/* sessions holding memory and a reference */
	wait_queue_head_t sessions_wq;	/* woken when nr_sessions drops to 0 */
	atomic64_t tokens;		/* tokens run through the model */
	atomic64_t forwards;		/* forward passes */
	/* the engine its sessions share (colibri_session.c) */
	struct mutex batch_lock;
	struct colibri_batcher *shared;	/* protected by ->batch_lock */
	atomic_t shared_sessions;	/* sessions on ->shared (sysfs) */
	atomic64_t shared_bytes;	/* ->shared's pinned bytes (sysfs) */
	atomic_t batch_max;		/* most requests in one forward pass */
	/* expert offload (colibri_accel.c); protected by colibri_models_publish_lock */
	struct kobject *accel_kobj;	/* sysfs .../NAME/accel/ */
	struct list_head bindings;	/* struct colibri_binding */
	atomic64_t experts_cpu;		/* expert jobs run on the CPU */
	atomic64_t experts_offloaded;	/* ... and completed by accelerators */
};

/* colibri_numa.c: NUMA placement of a model's weights. */
int colibri_numa_alloc(struct colibri_model *m, u64 size, u32 policy, char *why);
int colibri_numa_replicate(struct colibri_model *m, char *why);
void colibri_numa_free(struct colibri_model *m);
const void *colibri_numa_local(struct colibri_model *m, const void *w);
u64 colibri_numa_bytes(const struct colibri_model *m);
u32 colibri_numa_nodes(void);
const char *colibri_numa_name(u32 policy);
ssize_t colibri_numa_pages_show(struct colibri_model *m, char *buf);
ssize_t colibri_numa_reads_show(struct colibri_model *m, char *buf);

/* colibri_model.c */
int colibri_models_init(void);
void colibri_models_exit(void);
int colibri_model_load(struct file *src, const char *name, u32 numa,
		       struct colibri_model **out);
int colibri_model_unload(const char *name, bool wait, const struct colibri_model *own,
			 struct colibri_model **out);
int colibri_model_wait_sessions(struct colibri_model *m);
int colibri_model_add_session(struct colibri_model *m, struct list_head *node);
void colibri_model_drop_session(struct colibri_model *m, struct list_head *node);
struct colibri_model *colibri_model_find(const char *name);
void colibri_model_put(struct colibri_model *m);
unsigned int colibri_models_count(void);
u32 colibri_models_list(struct colibri_model_entry *ents, u32 cap);
int colibri_name_valid(const char *name, size_t len);
struct colibri_model **colibri_models_snapshot(unsigned int *n);

/*
 * Who wants to know of models coming and going (the accelerators,
 * colibri_accel.c).  ->added() runs right after a model is published,
 * ->gone() while it is being unpublished, before it leaves sysfs; both
 * under colibri_models_publish_lock, the outer lock of the registry, so
 * an observer that takes it too sees the published models stand still.
 */
struct colibri_model_observer {
	struct list_head node;		/* colibri_models_publish_lock */
	void (*added)(struct colibri_model *m);
	void (*gone)(struct colibri_model *m);	/* may sleep */
};

extern struct mutex colibri_models_publish_lock;
void colibri_models_observe(struct colibri_model_observer *o);
void colibri_models_unobserve(struct colibri_model_observer *o);

/**
 * struct colibri_batcher - an engine instance and the scratch the scheduler
 * assembles a forward pass in: one per model, shared by up to @n_slots
 * sessions (one sequence slot each), or private to one session.
 *
 * Everything lives in ->buf (pinned) and ->reqs (kmalloc), allocated when
 * the batcher is made; the scheduler thread alone uses the scratch.
 */
struct colibri_batcher {
	struct colibri_buf buf;		/* engine, KV cache, scratch */
	struct cb_engine *eng;
	struct colibri_model *model;	/* its sessions hold the references */
	u32 max_tokens;			/* tokens per forward pass */
	u32 n_slots;			/* sequence slots (sessions) */
	u32 max_context;		/* positions per slot */
	u64 slots;			/* bitmap of taken slots; model->batch_lock */
	/* scratch of one pass, [max_tokens] (logits: [n_slots][vocab]) */
	u32 *tokens, *seq, *pos;
	u8 *mask;
	void *logits;
	u32 *trace;
	/* the requests of the running pass and their token counts */
	struct colibri_req **reqs;	/* [n_slots] */
	u32 *take;			/* [n_slots] */
	u32 nr;
};

/**
 * struct colibri_session - one attached open file: a sequence slot of an
 * engine instance (the model's shared one, or its own), and the buffers
 * its requests use, in pinned memory.
 *
 * Lifetime: ->ref.  The file holds one; a request holds one until it is
 * finished, so a request that outlives its caller (killed, interrupted)
 * never runs on freed memory.
 *
 * Revocation: an UNLOAD with COLIBRI_UNLOAD_WAIT revokes every session of
 * its model (colibri_sched_revoke()).  From then on no new request is
 * made; once no request holds the session (->nr_reqs), it is detached:
 * its pinned memory, its slot and its model reference go, though the
 * struct lives on with its file.  Code outside the scheduler touches the
 * session's engine slot and model (->bat, ->model) only under ->lock,
 * after checking ->revoked, and never holds ->lock across an access to
 * user memory or a wait: revocation takes it with mutex_lock().  The
 * scheduler touches them only through a request, which ->nr_reqs counts.
 *
 * The io buffers (->io) are the file's mailbox, not revocable memory:
 * unpinned, freed with the struct.  Whoever owns the session's next
 * submission (the file's ->lock holder, or its ->uop) fills the tokens
 * and reads the results with no lock held, so a user copy that faults
 * for ever holds nobody else up; the scheduler reads and writes them only
 * while that submission's request is in flight.
 */
struct colibri_session {
	struct kref ref;
	u64 id;				/* names it in the tracepoints */
	struct mutex lock;		/* the memory, against revocation */
	bool revoked;			/* set once, under ->lock */
	bool detached;			/* memory and model gone; ->lock */
	atomic_t nr_reqs;		/* requests made and not yet finished */
	struct work_struct detach_work;	/* detaches once the last request ends */
	struct list_head model_node;	/* in model->sessions */
	struct colibri_model *model;	/* a reference until detached */
	void *io;			/* io buffers (kvmalloc): see above */
	struct colibri_batcher *bat;	/* the model's shared one, or ours */
	u32 slot;			/* our sequence slot in bat->eng */
	bool shared;			/* bat is the model's */
	u64 bytes;			/* pinned bytes of its own (ATTACH.bytes) */
	struct colibri_charge charge;	/* what its user is charged for it */
	u32 max_context;
	u32 max_batch;
	u32 vocab;
	u32 trace_per_token;		/* u32s of trace per token */
	/* io buffers inside ->io */
	u32 *tokens;			/* [max_batch] */
	u32 *seq;			/* [max_batch], all 0 */
	u32 *pos;			/* [max_batch] */
	u8 *logits_mask;		/* [max_batch] */
	void *logits;			/* f32 [vocab] */
	u32 *trace;			/* [max_batch * trace_per_token] */
	/* at most one request in flight; protected by the file's lock */
	struct colibri_req *inflight;
	/* who attached it, for sysfs session_owners: a reference to its tgid */
	struct pid *owner;
	kuid_t uid;
	char comm[TASK_COMM_LEN];	/* the process's (its group leader's) */
};

/**
 * struct colibri_req - one forward pass (and maybe a sample) for a session.
 *
 * Owned by the submitting ioctl until queued; then shared with the
 * scheduler through ->ref.  The scheduler writes only into session memory
 * (never user memory) and completes ->done.
 */
struct colibri_req {
	struct kref ref;
	struct list_head node;		/* in the scheduler queue */
	struct colibri_session *sess;	/* holds a session reference */
	struct cb_batch batch;		/* logits_mask must be set */
	u32 ran;			/* tokens of ->batch run so far */
	bool sample;
	struct cb_sample_params sp;
	u64 counter;
	bool cancelled;			/* set by the caller, read by yield */
	int ret;			/* result: token >= 0 or -errno */
	struct completion done;
	/* asynchronous callers (colibri_uring.c); NULL for ioctl */
	void (*end)(struct colibri_req *req);	/* once, when finished */
	void *end_data;				/* ->end's */
	struct task_struct *owner;	/* a reference; stop if it dies */
	u64 queued_ns;			/* ktime_get_ns() at colibri_sched_queue() */
};

/* colibri_session.c */
int colibri_sessions_init(void);
void colibri_sessions_exit(void);
struct colibri_session *colibri_session_create(struct colibri_model *m,
					       u32 max_context, u32 max_batch);
void colibri_session_put(struct colibri_session *s);
unsigned int colibri_sessions_count(void);
u32 colibri_model_context(const struct colibri_model *m);
int colibri_session_lock(struct colibri_session *s);
struct colibri_model *colibri_session_model_get(struct colibri_session *s);
void colibri_session_revoke(struct colibri_session *s);
void colibri_session_revoked_idle(struct colibri_session *s);
struct colibri_session *colibri_session_get_live(struct colibri_model *m);
void colibri_session_req_done(struct colibri_session *s);

static inline void colibri_session_unlock(struct colibri_session *s)
{
	mutex_unlock(&s->lock);
}

/* The session's sequence: forget it; its length.  Under a live ->lock. */
static inline void colibri_session_reset(struct colibri_session *s)
{
	lockdep_assert_held(&s->lock);
	cb_engine_seq_reset(s->bat->eng, s->slot);
}

static inline u32 colibri_session_len(struct colibri_session *s)
{
	lockdep_assert_held(&s->lock);
	return cb_engine_seq_len(s->bat->eng, s->slot);
}

/* colibri_sched.c */
struct colibri_sched;
struct colibri_sched *colibri_sched_start(void);
void colibri_sched_stop(struct colibri_sched *sc);
int colibri_sched_nr_threads(const struct colibri_sched *sc);
int colibri_sched_wait(struct colibri_req *req);
void colibri_sched_queue(struct colibri_sched *sc, struct colibri_req *req);
void colibri_sched_cancel(struct colibri_sched *sc, struct colibri_req *req);
void colibri_sched_revoke(struct colibri_sched *sc, struct colibri_model *m);

/*
 * One open file: at most one session, and one ioctl at a time working on it
 * (->lock), so a session never has two requests in flight.  An io_uring
 * submission owns the session from its issue to its completion (->uop);
 * meanwhile every other SUBMIT on the file is -EBUSY.
 */
struct colibri_file {
	struct colibri_sched *sched;	/* the device's: runs its requests */
	struct mutex lock;		/* serialises ATTACH and SUBMIT */
	struct colibri_session *sess;	/* protected by ->lock */
	bool need_reset;		/* protected by ->lock */
	/* set under ->lock; cleared (store-release) by its completion */
	struct colibri_uop *uop;
};

/* colibri_req.c */
int colibri_submit_begin(struct colibri_file *cf, const struct colibri_submit *a, bool wait,
			 u32 *pos);
struct colibri_req *colibri_piece_req(struct colibri_session *s, const struct colibri_submit *a,
				      u32 n, u32 first_pos, bool last);
void colibri_req_end(struct colibri_req *req);
void colibri_req_put(struct colibri_req *req);
int colibri_file_idle(struct colibri_file *cf, bool wait);
int colibri_wait_done(struct completion *done);

/* colibri_dev.c */
int colibri_dev_register(struct colibri_sched *sc);
struct colibri_sched *colibri_dev_unregister(void);

/* colibri_ioctl.c */
long colibri_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int colibri_copy_arg(void *karg, size_t ksize, size_t ver0, void __user *uarg, u32 *usize);

/* colibri_uring.c */
struct io_uring_cmd;
int colibri_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* colibri_dmabuf.c */
struct dma_buf;
struct dma_buf *colibri_dmabuf_export(const struct colibri_buf *buf, struct kobject *owner,
				      const char *name, bool writable);

/*
 * colibri_accel.c: accelerators (colibri_accel.h), an observer of the model
 * registry, so a model is bound to every registered accelerator exactly
 * while it is published.
 */
extern unsigned int colibri_accel_timeout_ms;
void colibri_accel_init(void);
void colibri_accel_exit(void);

/*
 * The running pass (the scheduler's, struct colibri_sched; its thread
 * only): its model, and the job taken for each task of the current layer.
 */
struct colibri_bjob;
struct colibri_accel_pass {
	struct colibri_model *m;
	struct colibri_bjob *job[CB_MAX_EXPERTS];
	int n;				/* entries of job[] in use */
	unsigned long deadline;		/* jiffies */
};

void colibri_accel_pass_begin(struct colibri_accel_pass *pass, struct colibri_model *m);
void colibri_accel_pass_end(struct colibri_accel_pass *pass);
int colibri_accel_experts_submit(struct colibri_accel_pass *pass, struct cb_expert_task *t, int n);
int colibri_accel_experts_wait(struct colibri_accel_pass *pass, struct cb_expert_task *t, int n);

#endif /* COLIBRI_INTERNAL_H */

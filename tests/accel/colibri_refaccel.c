// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_refaccel.c - the reference accelerator of colibri's expert-offload
 * interface (kmod/colibri_accel.h): a complete driver whose "device" is a
 * kernel thread computing on the CPU.
 *
 * It does what a real driver does, in the way a real driver must do it:
 *
 * - a struct device of its own (a platform device with a 64-bit DMA mask,
 *   standing in for a PCI function) to attach to the model's dma-bufs;
 * - bind() imports the weights and the activation staging buffer with the
 *   standard dma-buf calls only: attach, map the attachment (and check that
 *   the scatter list covers the buffer, reading only sg_dma_address() and
 *   sg_dma_len(): memmap memory has no struct pages), and vmap them for the
 *   CPU that plays the device.  It never looks behind colibri's pointers;
 * - submit() never sleeps: it queues the job and wakes the worker;
 * - the worker computes each job with the engine's own cb_expert_ffn() at
 *   colibri's CPU ISA level (so the bits are those the CPU path gives), a
 *   few rows per FPU section, and completes it.
 *
 * Module parameters, writable at run time, let a test misbehave on purpose:
 * refuse_every=N refuses every Nth offered job (-EBUSY), fail_every=N
 * completes every Nth job with -EIO after filling its output rows with NaN
 * (colibri must ignore them and run the job on the CPU), delay_ms=N sleeps
 * that long before each job (to exceed colibri's accel_timeout_ms).  The
 * read-only counters jobs_done, jobs_failed and jobs_refused say what it
 * did, for comparison with colibri's own counters.
 *
 * The engine objects it links (cb_expert.c and what it needs) are built
 * with the FPU enabled, as in colibri.ko (tests/accel/Kbuild), and run only
 * between kernel_fpu_begin() and kernel_fpu_end().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/iosys-map.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <asm/fpu/api.h>

#include "colibri_accel.h"
#include "core/cb_engine.h"

/*
 * dma_buf_attach() and friends live in the DMA_BUF symbol namespace; see
 * kmod/colibri_dmabuf.c for why this spelling works on every kernel.
 */
MODULE_INFO(import_ns, "DMA_BUF");

#define REFACCEL_NAME	"refaccel"

/* Most rows of one job computed in one FPU section. */
#define REFACCEL_MAX_ROWS	16u

static unsigned int refuse_every;
module_param(refuse_every, uint, 0644);
MODULE_PARM_DESC(refuse_every, "Refuse every Nth offered job with -EBUSY (0: never)");

static unsigned int fail_every;
module_param(fail_every, uint, 0644);
MODULE_PARM_DESC(fail_every,
		 "Complete every Nth job with -EIO after writing NaN into its output (0: never)");

static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Sleep this long before each job (0: no delay)");

/* Counters: written under refaccel.lock, read through sysfs. */
static unsigned long jobs_done;
module_param(jobs_done, ulong, 0444);
MODULE_PARM_DESC(jobs_done, "Jobs completed successfully");

static unsigned long jobs_failed;
module_param(jobs_failed, ulong, 0444);
MODULE_PARM_DESC(jobs_failed, "Jobs completed with an error (injected or not)");

static unsigned long jobs_refused;
module_param(jobs_refused, ulong, 0444);
MODULE_PARM_DESC(jobs_refused, "Jobs refused by submit()");

/**
 * struct refaccel_binding - one model imported by the device.
 * @m: colibri's description of the model (valid until unbind() returns).
 * @w_att: the device's attachment to the weights dma-buf.
 * @io_att: ... and to the io dma-buf.
 * @w_sgt: the weights' DMA mapping (what a DMA engine would be given).
 * @io_sgt: the io buffer's DMA mapping.
 * @w_map: the CPU mapping of the weights the worker computes from.
 * @io_map: the CPU mapping of the io buffer it reads and writes rows in.
 * @scratch_mem: the allocation @scratch lies in.
 * @scratch: cb_expert_ffn()'s scratch for @rows rows, 64-byte aligned.
 * @rows: rows per FPU section.
 */
struct refaccel_binding {
	struct colibri_accel_model *m;
	struct dma_buf_attachment *w_att, *io_att;
	struct sg_table *w_sgt, *io_sgt;
	struct iosys_map w_map, io_map;
	void *scratch_mem, *scratch;
	u32 rows;
};

/**
 * struct refaccel - the driver's state (one device).
 * @acc: what colibri knows of us.
 * @pdev: the device the dma-bufs are attached to.
 * @lock: protects @queue, @offered, @taken and the counters.
 * @queue: taken jobs not yet started (struct colibri_expert_job.node).
 * @wq: the worker waits here for jobs.
 * @worker: the kthread that plays the device.
 * @offered: jobs offered to submit(), for refuse_every.
 * @taken: jobs started by the worker, for fail_every.
 */
struct refaccel {
	struct colibri_accel acc;
	struct platform_device *pdev;
	spinlock_t lock;	/* the queue, offered, taken, counters */
	struct list_head queue;
	wait_queue_head_t wq;
	struct task_struct *worker;
	unsigned long offered;
	unsigned long taken;
};

static struct refaccel refaccel;

static struct device *refaccel_dev(void)
{
	return &refaccel.pdev->dev;
}

/* Map an attachment: 6.1's dma_buf_map_attachment() takes no lock itself. */
static struct sg_table *refaccel_map(struct dma_buf_attachment *att,
				     enum dma_data_direction dir)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return dma_buf_map_attachment_unlocked(att, dir);
#else
	return dma_buf_map_attachment(att, dir);
#endif
}

static void refaccel_unmap(struct dma_buf_attachment *att, struct sg_table *sgt,
			   enum dma_data_direction dir)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	dma_buf_unmap_attachment_unlocked(att, sgt, dir);
#else
	dma_buf_unmap_attachment(att, sgt, dir);
#endif
}

/* From 6.2 dma_buf_vmap() wants the reservation lock held; 6.1 takes its own. */
static int refaccel_vmap(struct dma_buf *buf, struct iosys_map *map)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return dma_buf_vmap_unlocked(buf, map);
#else
	return dma_buf_vmap(buf, map);
#endif
}

static void refaccel_vunmap(struct dma_buf *buf, struct iosys_map *map)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	dma_buf_vunmap_unlocked(buf, map);
#else
	dma_buf_vunmap(buf, map);
#endif
}

/*
 * Imports one dma-buf: attach the device, map the attachment and check
 * that the DMA segments cover @need bytes, then vmap it for the CPU.  Only
 * sg_dma_address()/sg_dma_len() are read: a memmap range has no struct
 * pages, so sg_page() means nothing there.
 */
static int refaccel_import(struct dma_buf *buf, u64 need, enum dma_data_direction dir,
			   struct dma_buf_attachment **att_out, struct sg_table **sgt_out,
			   struct iosys_map *map)
{
	struct dma_buf_attachment *att;
	struct scatterlist *sg;
	struct sg_table *sgt;
	u64 covered = 0;
	unsigned int i;
	int ret;

	if (need > buf->size)
		return -EINVAL;
	att = dma_buf_attach(buf, refaccel_dev());
	if (IS_ERR(att))
		return PTR_ERR(att);
	sgt = refaccel_map(att, dir);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_detach;
	}
	for_each_sgtable_dma_sg(sgt, sg, i) {
		/* A device would program one DMA window per segment here. */
		if (!sg_dma_len(sg) || sg_dma_address(sg) == DMA_MAPPING_ERROR) {
			ret = -EINVAL;
			goto err_unmap;
		}
		covered += sg_dma_len(sg);
	}
	if (covered < buf->size) {
		dev_err(refaccel_dev(), "DMA segments cover %llu of %zu bytes\n", covered,
			buf->size);
		ret = -EINVAL;
		goto err_unmap;
	}
	ret = refaccel_vmap(buf, map);
	if (ret)
		goto err_unmap;
	/* The worker dereferences the mapping: it must be system memory. */
	if (map->is_iomem || !map->vaddr) {
		ret = -EOPNOTSUPP;
		goto err_vunmap;
	}
	*att_out = att;
	*sgt_out = sgt;
	return 0;

err_vunmap:
	refaccel_vunmap(buf, map);
err_unmap:
	refaccel_unmap(att, sgt, dir);
err_detach:
	dma_buf_detach(buf, att);
	return ret;
}

static void refaccel_release(struct dma_buf *buf, struct dma_buf_attachment *att,
			     struct sg_table *sgt, struct iosys_map *map,
			     enum dma_data_direction dir)
{
	refaccel_vunmap(buf, map);
	refaccel_unmap(att, sgt, dir);
	dma_buf_detach(buf, att);
}

/* Rows per FPU section: about one engine chunk of work, 1..REFACCEL_MAX_ROWS. */
static u32 refaccel_rows(const struct colibri_accel_model *m)
{
	u64 macs = 3ULL * m->hidden * m->expert_ffn;
	u64 rows = macs ? div64_u64(CB_CHUNK_TARGET_FLOPS, macs) : 1;

	rows = clamp_t(u64, rows, 1, REFACCEL_MAX_ROWS);
	return min_t(u32, rows, m->max_tokens ? m->max_tokens : 1);
}

static int refaccel_bind(struct colibri_accel *acc, struct colibri_accel_model *m)
{
	struct refaccel_binding *b;
	u64 scratch;
	int ret;

	if (!m->hidden || !m->expert_ffn || !m->max_tokens || !m->weights || !m->io)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->m = m;
	b->rows = refaccel_rows(m);
	/* Integer-only code (cb_sizes.c): no FPU section needed. */
	scratch = cb_expert_scratch_size(m->hidden, m->expert_ffn, b->rows);
	if (!scratch || scratch > SZ_256M) {
		ret = -EINVAL;
		goto err_free;
	}
	b->scratch_mem = kvmalloc(scratch + 63, GFP_KERNEL);
	if (!b->scratch_mem) {
		ret = -ENOMEM;
		goto err_free;
	}
	b->scratch = PTR_ALIGN(b->scratch_mem, 64);

	/* The device only reads the weights; it reads and writes io. */
	ret = refaccel_import(m->weights, 0, DMA_TO_DEVICE, &b->w_att, &b->w_sgt, &b->w_map);
	if (ret)
		goto err_scratch;
	ret = refaccel_import(m->io, m->io_bytes, DMA_BIDIRECTIONAL, &b->io_att, &b->io_sgt,
			      &b->io_map);
	if (ret)
		goto err_weights;
	m->priv = b;
	dev_dbg(refaccel_dev(), "bound %s: %zu weight bytes, %llu io bytes, %u rows per section\n",
		m->name, m->weights->size, m->io_bytes, b->rows);
	return 0;

err_weights:
	refaccel_release(m->weights, b->w_att, b->w_sgt, &b->w_map, DMA_TO_DEVICE);
err_scratch:
	kvfree(b->scratch_mem);
err_free:
	kfree(b);
	dev_warn(refaccel_dev(), "cannot bind %s: %d\n", m->name, ret);
	return ret;
}

static void refaccel_unbind(struct colibri_accel *acc, struct colibri_accel_model *m)
{
	struct refaccel_binding *b = m->priv;

	refaccel_release(m->io, b->io_att, b->io_sgt, &b->io_map, DMA_BIDIRECTIONAL);
	refaccel_release(m->weights, b->w_att, b->w_sgt, &b->w_map, DMA_TO_DEVICE);
	kvfree(b->scratch_mem);
	kfree(b);
	m->priv = NULL;
	dev_dbg(refaccel_dev(), "unbound %s\n", m->name);
}

/* Called by colibri's scheduler with its accelerator lock held: no sleeping. */
static int refaccel_submit(struct colibri_accel *acc, struct colibri_expert_job *job)
{
	unsigned int every = READ_ONCE(refuse_every);
	unsigned long flags;

	spin_lock_irqsave(&refaccel.lock, flags);
	refaccel.offered++;
	if (every && refaccel.offered % every == 0) {
		jobs_refused++;
		spin_unlock_irqrestore(&refaccel.lock, flags);
		return -EBUSY;
	}
	list_add_tail(&job->node, &refaccel.queue);
	spin_unlock_irqrestore(&refaccel.lock, flags);
	wake_up(&refaccel.wq);
	return 0;
}

static bool refaccel_in(u64 off, u64 len, u64 size)
{
	return off <= size && len <= size - off;
}

/* A tensor of the job: the shape colibri promised, inside the weights. */
static int refaccel_tensor(const struct refaccel_binding *b, const struct colibri_accel_tensor *t,
			   u32 rows, u32 cols, struct cb_tensor *out)
{
	/* enum colibri_accel_dtype is the engine's enum cb_dtype */
	u64 rb = cb_dtype_row_bytes(t->dtype, cols);

	if (t->rows != rows || t->cols != cols || !rb || t->bytes != rb * rows ||
	    !refaccel_in(t->offset, t->bytes, b->m->weights->size))
		return -EINVAL;
	out->data = (const u8 *)b->w_map.vaddr + t->offset;
	out->dtype = t->dtype;
	out->rows = rows;
	out->cols = cols;
	out->reserved = 0;
	return 0;
}

/* Checks @job and builds its weights; 0 or -EINVAL. */
static int refaccel_check(const struct refaccel_binding *b, const struct colibri_expert_job *job,
			  struct cb_expert_weights *w)
{
	const struct colibri_accel_model *m = b->m;
	u64 row = (u64)m->hidden * sizeof(u32), len = row * job->n_tokens;

	if (!job->n_tokens || job->n_tokens > m->max_tokens ||
	    !IS_ALIGNED(job->in_offset, 4) || !IS_ALIGNED(job->out_offset, 4) ||
	    !refaccel_in(job->in_offset, len, m->io_bytes) ||
	    !refaccel_in(job->out_offset, len, m->io_bytes))
		return -EINVAL;
	if (refaccel_tensor(b, &job->gate, m->expert_ffn, m->hidden, &w->gate) ||
	    refaccel_tensor(b, &job->up, m->expert_ffn, m->hidden, &w->up) ||
	    refaccel_tensor(b, &job->down, m->hidden, m->expert_ffn, &w->down))
		return -EINVAL;
	return 0;
}

/*
 * The device's work: y = down(silu(gate x) * up x), b->rows rows per FPU
 * section.  A row's result does not depend on the rows computed with it,
 * so the slices give the bits of one call over all rows.
 */
static int refaccel_compute(const struct refaccel_binding *b,
			    const struct colibri_expert_job *job, const struct cb_expert_weights *w)
{
	const struct colibri_accel_model *m = b->m;
	u64 row = (u64)m->hidden * sizeof(u32);
	u8 *io = b->io_map.vaddr;
	u32 t, n;
	int ret = 0;

	for (t = 0; t < job->n_tokens && !ret; t += n) {
		n = min(job->n_tokens - t, b->rows);
		kernel_fpu_begin();
		ret = cb_expert_ffn(m->cpu_isa_level, w, n, io + job->in_offset + t * row,
				    io + job->out_offset + t * row, b->scratch);
		kernel_fpu_end();
		cond_resched();
	}
	return ret;
}

/* One job, start to completion. */
static void refaccel_run(struct colibri_expert_job *job)
{
	const struct refaccel_binding *b = job->model->priv;
	unsigned int every = READ_ONCE(fail_every), delay = READ_ONCE(delay_ms);
	struct cb_expert_weights w;
	unsigned long nr, flags;
	int ret;

	if (delay)
		msleep(delay);
	spin_lock_irqsave(&refaccel.lock, flags);
	nr = ++refaccel.taken;
	spin_unlock_irqrestore(&refaccel.lock, flags);

	ret = refaccel_check(b, job, &w);
	if (ret) {
		dev_warn_ratelimited(refaccel_dev(), "%s: bad job (layer %u expert %u)\n",
				     job->model->name, job->layer, job->expert);
	} else if (every && nr % every == 0) {
		/* Garbage in the output rows: colibri must not use them. */
		memset32((u32 *)((u8 *)b->io_map.vaddr + job->out_offset), 0x7fc00000,
			 (size_t)job->n_tokens * job->model->hidden);
		ret = -EIO;
	} else {
		ret = refaccel_compute(b, job, &w);
	}

	spin_lock_irqsave(&refaccel.lock, flags);
	if (ret)
		jobs_failed++;
	else
		jobs_done++;
	spin_unlock_irqrestore(&refaccel.lock, flags);
	/* The job is colibri's again from here on. */
	colibri_accel_complete(job, ret);
}

static struct colibri_expert_job *refaccel_next(void)
{
	struct colibri_expert_job *job;
	unsigned long flags;

	spin_lock_irqsave(&refaccel.lock, flags);
	job = list_first_entry_or_null(&refaccel.queue, struct colibri_expert_job, node);
	if (job)
		list_del_init(&job->node);
	spin_unlock_irqrestore(&refaccel.lock, flags);
	return job;
}

static bool refaccel_pending(void)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&refaccel.lock, flags);
	ret = !list_empty(&refaccel.queue);
	spin_unlock_irqrestore(&refaccel.lock, flags);
	return ret;
}

/*
 * The device.  It keeps completing jobs until it is stopped, and it is
 * stopped only after colibri_accel_unregister() returned, when colibri has
 * no job of ours left in flight.
 */
static int refaccel_worker(void *data)
{
	struct colibri_expert_job *job;

	while (!kthread_should_stop()) {
		wait_event_interruptible(refaccel.wq,
					 refaccel_pending() || kthread_should_stop());
		while ((job = refaccel_next()))
			refaccel_run(job);
	}
	return 0;
}

static const struct colibri_accel_ops refaccel_ops = {
	.bind = refaccel_bind,
	.unbind = refaccel_unbind,
	.submit = refaccel_submit,
};

static int __init refaccel_init(void)
{
	int ret;

	spin_lock_init(&refaccel.lock);
	INIT_LIST_HEAD(&refaccel.queue);
	init_waitqueue_head(&refaccel.wq);

	/* A stand-in for a PCI function: any address, segments of any size. */
	refaccel.pdev = platform_device_register_simple(KBUILD_MODNAME, PLATFORM_DEVID_NONE,
							NULL, 0);
	if (IS_ERR(refaccel.pdev))
		return PTR_ERR(refaccel.pdev);
	ret = dma_coerce_mask_and_coherent(refaccel_dev(), DMA_BIT_MASK(64));
	if (ret)
		goto err_pdev;
	dma_set_max_seg_size(refaccel_dev(), UINT_MAX);

	refaccel.worker = kthread_run(refaccel_worker, NULL, "colibri-refaccel");
	if (IS_ERR(refaccel.worker)) {
		ret = PTR_ERR(refaccel.worker);
		goto err_pdev;
	}

	refaccel.acc.name = REFACCEL_NAME;
	refaccel.acc.owner = THIS_MODULE;
	refaccel.acc.ops = &refaccel_ops;
	refaccel.acc.max_tokens = 0;
	ret = colibri_accel_register(&refaccel.acc);
	if (ret)
		goto err_worker;
	return 0;

err_worker:
	kthread_stop(refaccel.worker);
err_pdev:
	platform_device_unregister(refaccel.pdev);
	return ret;
}

static void __exit refaccel_exit(void)
{
	/* Returns once every job we took is completed: the worker still runs. */
	colibri_accel_unregister(&refaccel.acc);
	kthread_stop(refaccel.worker);
	WARN_ON(!list_empty(&refaccel.queue));
	platform_device_unregister(refaccel.pdev);
}

module_init(refaccel_init);
module_exit(refaccel_exit);

MODULE_DESCRIPTION("Colibri reference accelerator: routed experts on a kernel thread");
MODULE_AUTHOR("The Colibri developers");
MODULE_LICENSE("GPL");

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_accel.h - the expert-offload interface colibri.ko offers other
 * kernel modules: an accelerator driver registers, is bound to every loaded
 * model (it imports the model's weights and an activation staging buffer as
 * dma-bufs), and is handed routed-expert jobs by colibri's scheduler, which
 * it completes asynchronously.  docs/accel.md explains it with an example;
 * tests/accel/colibri_refaccel.c is a complete driver.
 *
 * Contract, in short:
 *
 * - bind() is called once per (accelerator, loaded model), in process
 *   context, may sleep; it imports m->weights and m->io with the standard
 *   dma-buf calls (dma_buf_attach(), dma_buf_map_attachment*(), and for CPU
 *   access dma_buf_vmap*()).  A non-zero return leaves that model on the
 *   CPU for this accelerator.  unbind() undoes it; it is called once no job
 *   of that binding is in the accelerator's hands any more.
 * - submit() offers one job.  It is called from colibri's scheduler thread
 *   with colibri's accelerator lock held: it must not sleep and must not
 *   call back into this API except colibri_accel_complete().  Return 0 to
 *   take the job, or an error (-EBUSY, -EOPNOTSUPP, ...) to refuse it: the
 *   CPU then runs it.  A taken job must be completed exactly once, with
 *   colibri_accel_complete(), from any context (also from inside submit()).
 * - A job reads its input rows from m->io at ->in_offset and writes its
 *   output rows to m->io at ->out_offset (both f32, [n_tokens][hidden]);
 *   the weights are the tensors ->gate, ->up, ->down of m->weights.  It
 *   computes y = down(silu(gate x) * up x) per row, unweighted: colibri
 *   does the routing and the weighted sum.
 * - A job that fails (status != 0) or does not complete within colibri's
 *   accel_timeout_ms runs on the CPU instead; a late completion is then
 *   ignored, but the job still belongs to the accelerator until it
 *   completes it (its io rows stay reserved).
 * - colibri_accel_unregister() stops new jobs, waits until every taken job
 *   is completed (so the driver must keep completing them while it waits),
 *   unbinds every model and returns; from then on colibri never calls the
 *   driver again.  Inference goes on meanwhile (on the CPU and on other
 *   accelerators); loading and unloading models wait.  Unload order is then
 *   free: colibri.ko itself cannot be unloaded while a driver using these
 *   symbols is loaded.
 */
#ifndef COLIBRI_ACCEL_H
#define COLIBRI_ACCEL_H

#include <linux/list.h>
#include <linux/types.h>

#include "colibri_format.h"

struct dma_buf;
struct module;

/* Bumped when a structure below changes incompatibly. */
#define COLIBRI_ACCEL_API_VERSION	1

/*
 * Weight types: the .colibri dtypes of uapi/colibri_format.h, whose
 * numbers the engine's dtypes equal (so a tensor's dtype is passed as is);
 * layouts in docs/format.md; q8_0 and q4_0 are GGUF's blocks of 32.
 */
enum colibri_accel_dtype {
	COLIBRI_ACCEL_F32 = COLIBRI_DT_F32,
	COLIBRI_ACCEL_F16 = COLIBRI_DT_F16,
	COLIBRI_ACCEL_BF16 = COLIBRI_DT_BF16,
	COLIBRI_ACCEL_Q8_0 = COLIBRI_DT_Q8_0,
	COLIBRI_ACCEL_Q4_0 = COLIBRI_DT_Q4_0,
};

/**
 * struct colibri_accel_tensor - one weight matrix inside the weights dma-buf.
 * @offset: byte offset in the dma-buf (the tensor's offset in the file's
 *	data region: see docs/accel.md).
 * @bytes: its size: @rows rows of @cols elements of @dtype, row-major.
 * @dtype: enum colibri_accel_dtype.
 * @rows: output features.
 * @cols: input features.
 */
struct colibri_accel_tensor {
	u64 offset;
	u64 bytes;
	u32 dtype;
	u32 rows;
	u32 cols;
	u32 reserved;
};

/**
 * struct colibri_accel_model - one model, as bound to one accelerator.
 * @name: the model's name (for messages).
 * @weights: the model's weights, read-only (the data region of its file).
 * @io: activation staging, read-write, @io_bytes long: each job's rows.
 * @hidden: hidden size (the length of an input and an output row).
 * @expert_ffn: intermediate size of a routed expert.
 * @n_layers: layers; @n_experts: routed experts per MoE layer; @top_k:
 *	experts per token.
 * @max_tokens: most rows one job carries.
 * @cpu_isa_level: the ISA level colibri's CPU engine runs at (COLIBRI_ISA_*:
 *	0 scalar, 1 AVX2, 2 AVX-512, 3 AVX-512 with VNNI).  A driver that
 *	emulates the CPU path on the CPU (like the reference one) runs at this
 *	level to give identical bits.
 * @priv: the driver's, set in bind().
 *
 * Everything is valid from bind() until unbind() returns.
 */
struct colibri_accel_model {
	const char *name;
	struct dma_buf *weights;
	struct dma_buf *io;
	u64 io_bytes;
	u32 hidden;
	u32 expert_ffn;
	u32 n_layers;
	u32 n_experts;
	u32 top_k;
	u32 max_tokens;
	u32 cpu_isa_level;
	void *priv;
};

/**
 * struct colibri_expert_job - one routed expert of one layer, over the
 * tokens of one forward pass that were routed to it.
 * @model: the binding it belongs to.
 * @layer: the layer; @expert: the expert in it.
 * @n_tokens: rows, 1..model->max_tokens.
 * @gate, @up: [expert_ffn, hidden]; @down: [hidden, expert_ffn].
 * @in_offset: input rows, f32 [n_tokens][hidden], in model->io.
 * @out_offset: output rows to write, f32 [n_tokens][hidden], in model->io.
 * @node: the driver's to use (a queue) until it completes the job.
 * @priv: the driver's.
 *
 * Owned by colibri; the driver may use it from a successful submit() until
 * its colibri_accel_complete() call, not after.
 */
struct colibri_expert_job {
	struct colibri_accel_model *model;
	u32 layer;
	u32 expert;
	u32 n_tokens;
	u32 reserved;
	struct colibri_accel_tensor gate;
	struct colibri_accel_tensor up;
	struct colibri_accel_tensor down;
	u64 in_offset;
	u64 out_offset;
	struct list_head node;
	void *priv;
};

struct colibri_accel;

/**
 * struct colibri_accel_ops - what colibri calls in a driver.
 * @bind: import a model (process context, may sleep); 0 or -errno.
 * @unbind: let go of it (process context, may sleep).
 * @submit: take a job (0) or refuse it (-errno); must not sleep.
 */
struct colibri_accel_ops {
	int (*bind)(struct colibri_accel *acc, struct colibri_accel_model *m);
	void (*unbind)(struct colibri_accel *acc, struct colibri_accel_model *m);
	int (*submit)(struct colibri_accel *acc, struct colibri_expert_job *job);
};

/**
 * struct colibri_accel - an accelerator, embedded in the driver's state.
 * @name: unique among registered accelerators; [a-z0-9_-], 1..31 chars
 *	(it names a sysfs directory).
 * @owner: THIS_MODULE (for messages; colibri takes no module reference:
 *	unregistering before the module goes is what makes unloading safe).
 * @ops: callbacks.
 * @max_tokens: most rows the driver takes in one job (0: no limit of its
 *	own).
 * @node, @priv: colibri's.
 */
struct colibri_accel {
	const char *name;
	struct module *owner;
	const struct colibri_accel_ops *ops;
	u32 max_tokens;
	struct list_head node;
	void *priv;
};

int colibri_accel_register(struct colibri_accel *acc);
void colibri_accel_unregister(struct colibri_accel *acc);
void colibri_accel_complete(struct colibri_expert_job *job, int status);

#endif /* COLIBRI_ACCEL_H */

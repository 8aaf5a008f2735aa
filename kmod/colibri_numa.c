// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_numa.c - where a model's weights live on a NUMA machine.
 *
 * LOAD chooses per model (struct colibri_load.flags, docs/kernel.md):
 *
 * - local (the default): the pages come from where the loading task's
 *   memory policy says, normally its own node.  Every CPU of the other
 *   nodes reads them across the interconnect.
 * - interleave: the pages come from every node with memory in turn, 64 KiB
 *   at a time (colibri_mem.c), so a weight matrix streamed by all workers
 *   draws on every node's memory channels at once.  One copy.
 * - replicate: one copy per node with memory, each from that node only.
 *   ->mem is the copy on the first node: the file is read into it, checked
 *   and bound there; the other copies are made from it once it is sealed.
 *   A gemm chunk reads its weight rows from the copy of the node its CPU
 *   is on: the engine asks (struct cb_exec.weight_local, answered by
 *   colibri_numa_local()), within the chunk, where preemption is off.  A
 *   CPU of a node without memory reads the copy of its nearest node with
 *   memory (numa_mem_id()).  The small vectors the engine reads outside
 *   gemm chunks (norms, biases, an embedding row per token) come from ->mem.
 *
 * Every copy is charged to mem_limit_mb; the model's bytes (LOAD, LIST,
 * sysfs) count them all.  On a machine with one node replicate makes one
 * copy and interleave places as local does.  The memmap provider's single
 * reserved range cannot be split between nodes: it refuses interleave and
 * replicate (-EINVAL, with the reason logged).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/topology.h>

#include "colibri_internal.h"
#include "format/cb_format.h"

static const char *const colibri_numa_names[] = {
	[COLIBRI_NUMA_LOCAL] = "local",
	[COLIBRI_NUMA_INTERLEAVE] = "interleave",
	[COLIBRI_NUMA_REPLICATE] = "replicate",
};

const char *colibri_numa_name(u32 policy)
{
	return policy < ARRAY_SIZE(colibri_numa_names) ? colibri_numa_names[policy] : "unknown";
}

/* Nodes with memory: GET_INFO's numa_nodes. */
u32 colibri_numa_nodes(void)
{
	return num_node_state(N_MEMORY);
}

/* Bytes pinned for the model's weights, every copy. */
u64 colibri_numa_bytes(const struct colibri_model *m)
{
	return m->mem.size * max(m->numa.nr_copies, 1U);
}

/**
 * colibri_numa_alloc() - allocate a model's ->mem as @policy places it.
 * @m: the model being built.
 * @size: bytes of weights.
 * @policy: COLIBRI_NUMA_*.
 * @why: CB_FORMAT_WHY_LEN bytes for the reason of a refusal.
 *
 * The copies besides ->mem come later, from colibri_numa_replicate().
 * Return: 0 or -errno (colibri_buf_alloc_node()'s); what was allocated
 * is freed with the model (colibri_numa_free()).
 */
int colibri_numa_alloc(struct colibri_model *m, u64 size, u32 policy, char *why)
{
	struct colibri_numa *nu = &m->numa;
	int node = NUMA_NO_NODE, nid, ret;
	u32 n = 0;

	if (policy != COLIBRI_NUMA_LOCAL && colibri_mem_provider() == COLIBRI_MEM_MEMMAP) {
		snprintf(why, CB_FORMAT_WHY_LEN,
			 "numa %s: the memmap provider's reserved range cannot be spread over nodes",
			 colibri_numa_name(policy));
		return -EINVAL;
	}
	nu->policy = policy;
	nu->nr_copies = policy == COLIBRI_NUMA_REPLICATE ? max(colibri_numa_nodes(), 1U) : 1;
	nu->copy_node = kcalloc(nu->nr_copies, sizeof(*nu->copy_node), GFP_KERNEL);
	nu->base = kcalloc(nu->nr_copies, sizeof(*nu->base), GFP_KERNEL);
	nu->replicas = kcalloc(nu->nr_copies, sizeof(*nu->replicas), GFP_KERNEL);
	nu->node_copy = kcalloc(nr_node_ids, sizeof(*nu->node_copy), GFP_KERNEL);
	nu->reads = __alloc_percpu(nu->nr_copies * sizeof(u64), __alignof__(u64));
	if (!nu->copy_node || !nu->base || !nu->replicas || !nu->node_copy || !nu->reads) {
		nu->nr_copies = 0;
		return -ENOMEM;
	}
	nu->copy_node[0] = NUMA_NO_NODE;
	if (policy == COLIBRI_NUMA_INTERLEAVE) {
		node = COLIBRI_NODE_INTERLEAVE;
	} else if (policy == COLIBRI_NUMA_REPLICATE) {
		/* A node that gains memory meanwhile gets no copy: its CPUs read copy 0. */
		for_each_node_state(nid, N_MEMORY) {
			if (n == nu->nr_copies)
				break;
			nu->copy_node[n++] = nid;
		}
		nu->nr_copies = max(n, 1U);
		node = nu->copy_node[0];
	}
	ret = colibri_buf_alloc_node(&m->mem, size, false, node);
	if (ret)
		snprintf(why, CB_FORMAT_WHY_LEN,
			 "%llu bytes of pinned memory not available%s (limit %llu, used %llu)",
			 (unsigned long long)size, node >= 0 ? " on the first node" : "",
			 colibri_mem_limit(), colibri_mem_used());
	return ret;
}

/* Copies the sealed ->mem into @dst, in bounded pieces, killable. */
static int colibri_numa_copy(struct colibri_buf *dst, const struct colibri_buf *src)
{
	u64 done = 0;

	while (done < src->size) {
		u64 n = min_t(u64, src->size - done, SZ_4M);

		if (fatal_signal_pending(current))
			return -EINTR;
		memcpy((u8 *)dst->vaddr + done, (const u8 *)src->vaddr + done, n);
		done += n;
		cond_resched();
	}
	return 0;
}

/**
 * colibri_numa_replicate() - make the copies besides ->mem and say which
 *	one each node reads.
 * @m: the model being built; ->mem is final and sealed (its mapping is the
 *	one the engine's tensors point into).
 * @why: CB_FORMAT_WHY_LEN bytes for the reason of a refusal.
 *
 * Return: 0, -ENOMEM (a copy's memory, on its node, or the limit), -EINTR.
 */
int colibri_numa_replicate(struct colibri_model *m, char *why)
{
	struct colibri_numa *nu = &m->numa;
	u32 c;
	int nid, ret;

	nu->base[0] = m->mem.vaddr;
	for (c = 1; c < nu->nr_copies; c++) {
		struct colibri_buf *r = &nu->replicas[c - 1];

		ret = colibri_buf_alloc_node(r, m->mem.size, false, nu->copy_node[c]);
		if (ret) {
			snprintf(why, CB_FORMAT_WHY_LEN,
				 "numa replicate: copy %u: %llu bytes of pinned memory not available on node %d (limit %llu, used %llu)",
				 c, m->mem.size, nu->copy_node[c], colibri_mem_limit(),
				 colibri_mem_used());
			return ret;
		}
		ret = colibri_numa_copy(r, &m->mem);
		if (!ret)
			ret = colibri_buf_seal(r);
		if (ret)
			return ret;
		nu->base[c] = r->vaddr;
	}
	/* Every other node, memoryless ones included, reads copy 0. */
	for (c = 1; c < nu->nr_copies; c++) {
		nid = nu->copy_node[c];
		if (nid >= 0 && nid < nr_node_ids)
			nu->node_copy[nid] = c;
	}
	return 0;
}

void colibri_numa_free(struct colibri_model *m)
{
	struct colibri_numa *nu = &m->numa;
	u32 c;

	for (c = 1; c < nu->nr_copies; c++)
		colibri_buf_free(&nu->replicas[c - 1]);
	free_percpu(nu->reads);
	kfree(nu->node_copy);
	kfree(nu->replicas);
	kfree(nu->base);
	kfree(nu->copy_node);
	memset(nu, 0, sizeof(*nu));
}

/**
 * colibri_numa_local() - where the running CPU reads weight bytes @w of @m.
 * @m: a published model (its copies are final).
 * @w: a pointer the engine holds, into ->mem or not.
 *
 * Called in a gemm chunk: preemption is off, so the CPU and its node
 * cannot change under the caller.  Counts the read for its copy.
 * Return: @w moved into this node's copy, or @w itself when it does not
 * point into ->mem.
 */
const void *colibri_numa_local(struct colibri_model *m, const void *w)
{
	const struct colibri_numa *nu = &m->numa;
	unsigned long off = (unsigned long)w - (unsigned long)m->mem.vaddr;
	unsigned int c;

	if (off >= m->mem.size || !nu->nr_copies)
		return w;
	c = nu->nr_copies > 1 ? nu->node_copy[numa_mem_id()] : 0;
	this_cpu_inc(nu->reads[c]);
	return (const u8 *)nu->base[c] + off;
}

/* --- sysfs: .../models/NAME/numa_pages, numa_reads -------------------------- */

/*
 * One line per copy: the node whose CPUs read it ("*": every node's), then
 * N<node>=<pages> for each node holding pages of it, counted now with
 * page_to_nid() over the copy's pages ("memmap" for the reserved range,
 * which may have no struct pages).
 */
ssize_t colibri_numa_pages_show(struct colibri_model *m, char *buf)
{
	const struct colibri_numa *nu = &m->numa;
	unsigned long *count, i;
	ssize_t len = 0;
	u32 c;
	int nid;

	count = kcalloc(nr_node_ids, sizeof(*count), GFP_KERNEL);
	if (!count)
		return -ENOMEM;
	for (c = 0; c < nu->nr_copies; c++) {
		const struct colibri_buf *b = c ? &nu->replicas[c - 1] : &m->mem;

		if (nu->nr_copies == 1)
			len += sysfs_emit_at(buf, len, "*");
		else
			len += sysfs_emit_at(buf, len, "%d", nu->copy_node[c]);
		if (!b->pages) {
			len += sysfs_emit_at(buf, len, " memmap\n");
			continue;
		}
		memset(count, 0, nr_node_ids * sizeof(*count));
		for (i = 0; i < b->size >> PAGE_SHIFT; i++)
			count[page_to_nid(b->pages[i])]++;
		for (nid = 0; nid < nr_node_ids; nid++)
			if (count[nid])
				len += sysfs_emit_at(buf, len, " N%d=%lu", nid, count[nid]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	kfree(count);
	return len;
}

/* The weight reads (gemm chunks) each copy served, in copy order. */
ssize_t colibri_numa_reads_show(struct colibri_model *m, char *buf)
{
	const struct colibri_numa *nu = &m->numa;
	ssize_t len = 0;
	int cpu;
	u32 c;

	for (c = 0; c < nu->nr_copies; c++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(nu->reads, cpu)[c];
		len += sysfs_emit_at(buf, len, "%s%llu", c ? " " : "", sum);
	}
	return len + sysfs_emit_at(buf, len, "\n");
}

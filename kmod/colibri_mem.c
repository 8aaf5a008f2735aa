// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_mem.c - the memory provider: pinned buffers for models and
 * sessions, accounted against the mem_limit_mb module parameter.
 *
 * Two providers, chosen at load:
 *
 * - memmap: a physical range the administrator reserved at boot with the
 *   kernel's memmap=SIZE$ADDR and named with our memmap=SIZE@ADDR module
 *   parameter.  It is claimed with request_mem_region(), mapped write-back
 *   with memremap() and carved page by page (first fit over a bitmap).  A
 *   buffer is one physically contiguous range.  Such a range may have no
 *   struct pages, so nothing here assumes it has.
 *
 * - pages (the default): the highest-order page allocations the buddy
 *   allocator will give (order 10 down to 0), mapped into one kernel
 *   virtual range with vmap().  The pages are ours until freed: never
 *   swapped, never migrated.  No allocation here may push the machine
 *   into the OOM killer: high orders give up at once (__GFP_NORETRY),
 *   order 0 after reclaim has tried (__GFP_RETRY_MAYFAIL), and the loop
 *   stops on a fatal signal.  A session's pages are charged to the
 *   attaching task's memory cgroup (__GFP_ACCOUNT; see colibri_acct.c).
 *
 * Either way a buffer keeps its list of physically contiguous chunks, for a
 * short scatter list when a dma-buf exporter needs one.
 *
 * NUMA (pages provider only): a buffer's pages come from where the
 * allocating task's memory policy says (NUMA_NO_NODE, the default), from
 * one node only (__GFP_THISNODE: a model's replica, colibri_numa.c), or
 * from every node with memory in turn, COLIBRI_INTERLEAVE_ORDER pages at
 * a time (COLIBRI_NODE_INTERLEAVE).  The memmap provider's range is where
 * it is: it takes NUMA_NO_NODE only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "colibri_internal.h"

static atomic64_t colibri_mem_used_bytes = ATOMIC64_INIT(0);

/* The buddy allocator's largest order on x86-64 in 6.1 and 6.12 (4 MiB). */
#define COLIBRI_MAX_ORDER	10
/*
 * Interleaved buffers change node every 64 KiB: a weight matrix (megabytes)
 * is spread over every node, so the threads streaming it draw on every
 * node's memory channels at once.
 */
#define COLIBRI_INTERLEAVE_ORDER	4

/* The memmap provider, when configured. */
static struct {
	phys_addr_t base;
	u64 size;
	void *vaddr;
	struct resource *res;
	unsigned long *bitmap;		/* one bit per page; protected by lock */
	unsigned long nr_pages;
	struct mutex lock;		/* guards ->bitmap */
} colibri_region;

u64 colibri_mem_used(void)
{
	return atomic64_read(&colibri_mem_used_bytes);
}

u64 colibri_mem_limit(void)
{
	u64 limit = (u64)colibri_mem_limit_mb << 20;

	return colibri_region.vaddr ? min(limit, colibri_region.size) : limit;
}

int colibri_mem_provider(void)
{
	return colibri_region.vaddr ? COLIBRI_MEM_MEMMAP : COLIBRI_MEM_PAGES;
}

/* What the provider holds: the whole region, or what is allocated. */
u64 colibri_mem_total(void)
{
	return colibri_region.vaddr ? colibri_region.size : colibri_mem_used();
}

/*
 * mem_limit_mb=0 (the default): half of RAM for the pages provider (pinned
 * memory no reclaim can take back; the rest keeps the machine alive), the
 * whole reserved range for memmap (which is not RAM).  Written back, so
 * that the parameter shows the limit in force.
 */
static void colibri_mem_default_limit(u64 region)
{
	if (colibri_mem_limit_mb)
		return;
	if (region)
		colibri_mem_limit_mb = max_t(u64, region >> 20, 1);
	else
		colibri_mem_limit_mb = max_t(u64, ((u64)totalram_pages() << PAGE_SHIFT) >> 21, 1);
}

/* Charge @bytes against the limit, or say -ENOMEM without charging. */
static int colibri_mem_charge(u64 bytes)
{
	u64 old = atomic64_read(&colibri_mem_used_bytes), new;

	do {
		if (check_add_overflow(old, bytes, &new) || new > colibri_mem_limit())
			return -ENOMEM;
	} while (!atomic64_try_cmpxchg(&colibri_mem_used_bytes, &old, new));
	return 0;
}

static void colibri_mem_uncharge(u64 bytes)
{
	atomic64_sub(bytes, &colibri_mem_used_bytes);
}

/* --- pages provider --------------------------------------------------------- */

static void colibri_pages_free(struct colibri_buf *buf)
{
	unsigned int i;

	for (i = 0; i < buf->nr_chunks; i++)
		__free_pages(buf->chunks[i].page, buf->chunks[i].order);
	kvfree(buf->chunks);
	kvfree(buf->pages);
	buf->chunks = NULL;
	buf->pages = NULL;
	buf->nr_chunks = 0;
}

/*
 * One allocation of 2^@order pages for a buffer placed at @nid: a node
 * (only that node), or NUMA_NO_NODE (the task's memory policy).
 */
static struct page *colibri_pages_get(gfp_t gfp, unsigned int order, int nid)
{
	gfp |= __GFP_ZERO | __GFP_NOWARN | (order ? __GFP_NORETRY : __GFP_RETRY_MAYFAIL);
	if (nid == NUMA_NO_NODE)
		return alloc_pages(gfp, order);
	return alloc_pages_node(nid, gfp | __GFP_THISNODE, order);
}

static int colibri_pages_alloc(struct colibri_buf *buf, unsigned long nr_pages, gfp_t gfp,
			       int node)
{
	bool interleave = node == COLIBRI_NODE_INTERLEAVE;
	unsigned int top = interleave ? COLIBRI_INTERLEAVE_ORDER : COLIBRI_MAX_ORDER;
	unsigned int order = top, i;
	int nid = interleave ? first_node(node_states[N_MEMORY]) : node;
	unsigned long done = 0;
	int ret = -ENOMEM;

	/* The worst case is one chunk per page. */
	buf->pages = kvmalloc_array(nr_pages, sizeof(*buf->pages), gfp | __GFP_RETRY_MAYFAIL);
	buf->chunks = kvmalloc_array(nr_pages, sizeof(*buf->chunks), gfp | __GFP_RETRY_MAYFAIL);
	if (!buf->pages || !buf->chunks)
		goto err_free;

	while (done < nr_pages) {
		struct colibri_chunk *c;
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free;
		}
		while (order && (1UL << order) > nr_pages - done)
			order--;
		page = colibri_pages_get(gfp, order, nid);
		if (!page) {
			if (!order)
				goto err_free;
			order--;
			continue;
		}
		c = &buf->chunks[buf->nr_chunks++];
		c->page = page;
		c->order = order;
		c->phys = page_to_phys(page);
		c->len = PAGE_SIZE << order;
		for (i = 0; i < (1U << order); i++)
			buf->pages[done++] = page + i;
		if (interleave) {
			/* the next node starts again from the top order */
			nid = next_node_in(nid, node_states[N_MEMORY]);
			order = top;
		}
		cond_resched();
	}

	buf->vaddr = vmap(buf->pages, nr_pages, VM_MAP, PAGE_KERNEL);
	if (!buf->vaddr)
		goto err_free;
	return 0;

err_free:
	colibri_pages_free(buf);
	return ret;
}

/* --- memmap provider -------------------------------------------------------- */

static int colibri_region_alloc(struct colibri_buf *buf, unsigned long nr_pages)
{
	unsigned long first;

	buf->chunks = kzalloc(sizeof(*buf->chunks), GFP_KERNEL);
	if (!buf->chunks)
		return -ENOMEM;
	mutex_lock(&colibri_region.lock);
	first = bitmap_find_next_zero_area(colibri_region.bitmap, colibri_region.nr_pages,
					   0, nr_pages, 0);
	if (first >= colibri_region.nr_pages) {
		mutex_unlock(&colibri_region.lock);
		kfree(buf->chunks);
		buf->chunks = NULL;
		return -ENOMEM;
	}
	bitmap_set(colibri_region.bitmap, first, nr_pages);
	mutex_unlock(&colibri_region.lock);

	buf->vaddr = colibri_region.vaddr + (first << PAGE_SHIFT);
	buf->chunks[0].phys = colibri_region.base + (first << PAGE_SHIFT);
	buf->chunks[0].len = nr_pages << PAGE_SHIFT;
	buf->nr_chunks = 1;
	/* The pages provider hands out zeroed memory; so does this one. */
	memset(buf->vaddr, 0, nr_pages << PAGE_SHIFT);
	return 0;
}

static void colibri_region_free(struct colibri_buf *buf)
{
	unsigned long first = (buf->vaddr - colibri_region.vaddr) >> PAGE_SHIFT;

	mutex_lock(&colibri_region.lock);
	bitmap_clear(colibri_region.bitmap, first, buf->size >> PAGE_SHIFT);
	mutex_unlock(&colibri_region.lock);
	kfree(buf->chunks);
}

/**
 * colibri_mem_init() - set up the provider named by the memmap parameter.
 * @spec: "SIZE@ADDR" or "SIZE$ADDR" (memparse syntax), or empty for pages.
 *
 * The range must be page aligned, outside System RAM (reserved at boot
 * with the kernel's memmap=SIZE$ADDR) and not claimed by anyone else.
 * Return: 0 or -errno, with the reason logged.
 */
int colibri_mem_init(const char *spec)
{
	char *end;
	u64 size, base;

	mutex_init(&colibri_region.lock);
	if (!spec || !*spec) {
		colibri_mem_default_limit(0);
		return 0;
	}
	size = memparse(spec, &end);
	if (*end != '@' && *end != '$')
		goto bad_spec;
	base = memparse(end + 1, &end);
	if (*end || !size || !PAGE_ALIGNED(size) || !PAGE_ALIGNED(base) ||
	    base + size < base)
		goto bad_spec;
	if (region_intersects(base, size, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT) {
		pr_err("memmap=%s overlaps System RAM: reserve it at boot with memmap=SIZE$ADDR\n",
		       spec);
		return -EINVAL;
	}
	colibri_region.res = request_mem_region(base, size, "colibri");
	if (!colibri_region.res) {
		pr_err("memmap=%s: the range is in use\n", spec);
		return -EBUSY;
	}
	colibri_region.nr_pages = size >> PAGE_SHIFT;
	colibri_region.bitmap = bitmap_zalloc(colibri_region.nr_pages, GFP_KERNEL);
	colibri_region.vaddr = memremap(base, size, MEMREMAP_WB);
	if (!colibri_region.bitmap || !colibri_region.vaddr) {
		pr_err("memmap=%s: cannot map the range\n", spec);
		colibri_mem_exit();
		return -ENOMEM;
	}
	colibri_region.base = base;
	colibri_region.size = size;
	colibri_mem_default_limit(size);
	pr_info("memory provider: reserved range %pa + %llu MiB\n", &colibri_region.base,
		size >> 20);
	return 0;

bad_spec:
	pr_err("memmap=%s is not SIZE@ADDR (page aligned)\n", spec);
	return -EINVAL;
}

void colibri_mem_exit(void)
{
	if (colibri_region.vaddr)
		memunmap(colibri_region.vaddr);
	bitmap_free(colibri_region.bitmap);
	if (colibri_region.res)
		release_mem_region(colibri_region.res->start, resource_size(colibri_region.res));
	memset(&colibri_region, 0, offsetof(typeof(colibri_region), lock));
}

/* --- buffers ---------------------------------------------------------------- */

/**
 * colibri_buf_alloc_node() - allocate a pinned, zeroed, virtually contiguous
 *	buffer, its pages from a chosen place.
 * @buf: the buffer to fill in.
 * @size: bytes wanted; rounded up to whole pages.
 * @account: charge the pages to the calling task's memory cgroup (a
 *	session's memory, colibri_acct.c), not to the kernel (a model's).
 * @node: NUMA_NO_NODE (where the task's memory policy says), a node with
 *	memory (that node only), or COLIBRI_NODE_INTERLEAVE (every node with
 *	memory in turn).  The memmap provider takes NUMA_NO_NODE only.
 *
 * Return: 0, -EINVAL for a zero size or a placement the provider cannot
 * give, -ENOMEM when the memory limit would be exceeded or the memory
 * cannot be had (there), -EINTR when the caller got a fatal signal
 * meanwhile.  On error nothing is held.
 */
int colibri_buf_alloc_node(struct colibri_buf *buf, u64 size, bool account, int node)
{
	unsigned long nr_pages;
	int ret;

	memset(buf, 0, sizeof(*buf));
	if (!size || (colibri_region.vaddr && node != NUMA_NO_NODE))
		return -EINVAL;
	if (size > colibri_mem_limit())
		return -ENOMEM;
	size = PAGE_ALIGN(size);
	nr_pages = size >> PAGE_SHIFT;
	ret = colibri_mem_charge(size);
	if (ret)
		return ret;
	if (colibri_region.vaddr)
		ret = colibri_region_alloc(buf, nr_pages);
	else
		ret = colibri_pages_alloc(buf, nr_pages,
					  account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL, node);
	if (ret) {
		colibri_mem_uncharge(size);
		return ret;
	}
	buf->size = size;
	return 0;
}

/**
 * colibri_buf_alloc() - colibri_buf_alloc_node() where the task's memory
 *	policy says (NUMA_NO_NODE).
 * @buf: the buffer to fill in.
 * @size: bytes wanted.
 * @account: charge the calling task's memory cgroup.
 *
 * Return: as colibri_buf_alloc_node().
 */
int colibri_buf_alloc(struct colibri_buf *buf, u64 size, bool account)
{
	return colibri_buf_alloc_node(buf, size, account, NUMA_NO_NODE);
}

/**
 * colibri_buf_free() - release a buffer from colibri_buf_alloc().
 * @buf: the buffer; may be all zero (never allocated).
 */
void colibri_buf_free(struct colibri_buf *buf)
{
	if (!buf->vaddr)
		return;
	if (buf->pages) {
		vunmap(buf->vaddr);
		colibri_pages_free(buf);
	} else {
		colibri_region_free(buf);
	}
	colibri_mem_uncharge(buf->size);
	memset(buf, 0, sizeof(*buf));
}

/**
 * colibri_buf_seal() - make a buffer read-only in the kernel's mapping.
 * @buf: an allocated buffer whose content is final.
 *
 * Pages-provider buffers get a read-only vmap alias, so a stray write
 * faults instead of silently corrupting a model every session shares.  A
 * memmap range has one write-back mapping for the whole region, which this
 * leaves as it is.
 *
 * Return: 0 or -ENOMEM.
 */
int colibri_buf_seal(struct colibri_buf *buf)
{
	void *ro;

	if (!buf->pages)
		return 0;
	ro = vmap(buf->pages, buf->size >> PAGE_SHIFT, VM_MAP, PAGE_KERNEL_RO);
	if (!ro)
		return -ENOMEM;
	vunmap(buf->vaddr);
	buf->vaddr = ro;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_dmabuf.c - a loaded model's weights as a read-only dma-buf (and,
 * for accelerators bound through colibri_accel.c, an activation staging
 * buffer as a read-write one).
 *
 * colibri_dmabuf_export() wraps a sealed, pinned buffer (struct colibri_buf),
 * for COLIBRI_IOC_EXPORT_DMABUF (colibri_ioctl.c) a model's: the file's data
 * region, so that an accelerator driver can DMA from the very memory the CPU
 * engine runs on, and userspace can mmap it read-only.  Nothing is copied.
 *
 * Lifetime: every dma-buf holds a reference on the model's kobject, taken
 * at export and dropped by ->release.  Unloading the model only unpublishes
 * it; the memory goes when the last session and the last dma-buf let go.
 * A user mapping or an importer's attachment holds the dma-buf's file, so
 * it holds the model too; the file holds this module (exp_info.owner).
 *
 * Scatter list: one entry per physically contiguous chunk of the buffer
 * (split only past COLIBRI_SG_MAX, since an entry's length is 32 bits).
 * Pages-provider chunks have struct pages and are mapped for the device with
 * dma_map_sgtable().  A memmap range reserved at boot usually has no struct
 * pages: its entries carry DMA addresses only (dma_map_resource()), and
 * sg_page() of them is meaningless, so an importer must use only
 * sg_dma_address()/sg_dma_len(), as the dma-buf rules say it should.
 *
 * Read-only: the file is O_RDONLY, user mappings without write permission
 * (VM_MAYWRITE cleared, so mprotect() cannot add it), CPU write access via
 * DMA_BUF_IOCTL_SYNC refused, and device mappings are always made
 * DMA_TO_DEVICE whatever direction the importer asks for: behind an IOMMU
 * the device gets a read-only mapping.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "colibri_internal.h"
#include "colibri_compat.h"

/*
 * dma_buf_export() and friends live in the DMA_BUF symbol namespace.
 * MODULE_IMPORT_NS() takes a bare word up to 6.12 and a string literal from
 * 6.13 on; both expand to this, which every kernel accepts.
 */
MODULE_INFO(import_ns, "DMA_BUF");

/* Largest scatter list entry: page aligned and within sg's 32-bit length. */
#define COLIBRI_SG_MAX	SZ_2G

/* One exported dma-buf. */
struct colibri_dmabuf {
	const struct colibri_buf *buf;	/* the memory; lives as long as ->owner */
	struct kobject *owner;		/* a model or a binding: held */
	bool writable;			/* activation staging, not weights */
	bool has_pages;			/* every chunk has struct pages */
	unsigned int nr_ents;		/* scatter list entries */
};

/* One importer's attachment: its scatter list, mapped or not. */
struct colibri_dmabuf_attach {
	struct sg_table sgt;
	enum dma_data_direction dir;	/* of the mapping */
	bool mapped;
};

/*
 * pfn_valid() answers per memory subsection (2 MiB on x86-64): asking once
 * per subsection a range touches is asking for every page.
 */
#ifdef PAGES_PER_SUBSECTION
#define COLIBRI_PFN_STEP	PAGES_PER_SUBSECTION
#else
#define COLIBRI_PFN_STEP	1UL
#endif

/*
 * Does every page of @buf have a struct page?  True for the pages provider;
 * for a memmap range it depends on how the kernel set up the reserved
 * range (usually not), so ask pfn_valid(), once, at export.
 */
static bool colibri_buf_has_pages(const struct colibri_buf *buf)
{
	unsigned long pfn, end;
	unsigned int i;

	if (buf->pages)
		return true;
	for (i = 0; i < buf->nr_chunks; i++) {
		pfn = PHYS_PFN(buf->chunks[i].phys);
		end = PHYS_PFN(buf->chunks[i].phys + buf->chunks[i].len);
		for (; pfn < end; pfn = ALIGN(pfn + 1, COLIBRI_PFN_STEP))
			if (!pfn_valid(pfn))
				return false;
	}
	return true;
}

static unsigned int colibri_buf_nr_ents(const struct colibri_buf *buf)
{
	unsigned int i, n = 0;

	for (i = 0; i < buf->nr_chunks; i++)
		n += DIV_ROUND_UP_ULL(buf->chunks[i].len, COLIBRI_SG_MAX);
	return n;
}

/*
 * Attach: build the importer's scatter list now (not yet DMA mapped), so
 * that mapping is only the DMA part.  Entries with struct pages get their
 * page; entries without get only their length here and their DMA address
 * at map time.
 */
static int colibri_dmabuf_attach(struct dma_buf *dmabuf, struct dma_buf_attachment *att)
{
	struct colibri_dmabuf *cd = dmabuf->priv;
	const struct colibri_buf *buf = cd->buf;
	struct colibri_dmabuf_attach *a;
	struct scatterlist *sg;
	unsigned int i;
	u64 off, len;
	int ret;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	ret = sg_alloc_table(&a->sgt, cd->nr_ents, GFP_KERNEL);
	if (ret) {
		kfree(a);
		return ret;
	}
	sg = a->sgt.sgl;
	for (i = 0; i < buf->nr_chunks; i++) {
		for (off = 0; off < buf->chunks[i].len; off += len) {
			phys_addr_t phys = buf->chunks[i].phys + off;

			len = min_t(u64, buf->chunks[i].len - off, COLIBRI_SG_MAX);
			if (cd->has_pages)
				sg_set_page(sg, pfn_to_page(PHYS_PFN(phys)), len, 0);
			else
				sg->length = len;	/* no page: DMA address at map */
			sg = sg_next(sg);
		}
	}
	att->priv = a;
	return 0;
}

static void colibri_dmabuf_detach(struct dma_buf *dmabuf, struct dma_buf_attachment *att)
{
	struct colibri_dmabuf_attach *a = att->priv;

	/* An importer must unmap before it detaches; the core warns if not. */
	sg_free_table(&a->sgt);
	kfree(a);
	att->priv = NULL;
}

/* Unmaps the first @n entries of a page-less scatter list. */
static void colibri_unmap_resources(struct device *dev, struct sg_table *sgt, unsigned int n,
				    enum dma_data_direction dir)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (i >= n)
			break;
		dma_unmap_resource(dev, sg_dma_address(sg), sg_dma_len(sg), dir, 0);
	}
}

static struct sg_table *colibri_dmabuf_map(struct dma_buf_attachment *att,
					   enum dma_data_direction dir)
{
	struct colibri_dmabuf *cd = att->dmabuf->priv;
	const struct colibri_buf *buf = cd->buf;
	struct colibri_dmabuf_attach *a = att->priv;
	struct sg_table *sgt = &a->sgt;
	struct scatterlist *sg;
	unsigned int i, n = 0;
	u64 off, len;
	int ret;

	/* One mapping per attachment; an importer wanting two attaches twice. */
	if (a->mapped)
		return ERR_PTR(-EBUSY);
	/*
	 * Whatever @dir says, a device only ever reads weights: DMA_TO_DEVICE,
	 * so an IOMMU maps them read-only for it.  (DRM's PRIME import asks
	 * for DMA_BIDIRECTIONAL by default.)  Staging buffers go both ways.
	 */
	a->dir = cd->writable ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	if (cd->has_pages) {
		ret = dma_map_sgtable(att->dev, sgt, a->dir, 0);
		if (ret)
			return ERR_PTR(ret);
		a->mapped = true;
		return sgt;
	}

	sg = sgt->sgl;
	for (i = 0; i < buf->nr_chunks; i++) {
		for (off = 0; off < buf->chunks[i].len; off += len) {
			dma_addr_t addr;

			len = min_t(u64, buf->chunks[i].len - off, COLIBRI_SG_MAX);
			addr = dma_map_resource(att->dev, buf->chunks[i].phys + off, len,
						a->dir, 0);
			if (dma_mapping_error(att->dev, addr)) {
				sgt->nents = n;
				colibri_unmap_resources(att->dev, sgt, n, a->dir);
				sgt->nents = 0;
				return ERR_PTR(-ENOMEM);
			}
			sg_dma_address(sg) = addr;
			sg_dma_len(sg) = len;
			n++;
			sg = sg_next(sg);
		}
	}
	sgt->nents = n;
	a->mapped = true;
	return sgt;
}

static void colibri_dmabuf_unmap(struct dma_buf_attachment *att, struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	struct colibri_dmabuf *cd = att->dmabuf->priv;
	struct colibri_dmabuf_attach *a = att->priv;

	if (WARN_ON_ONCE(sgt != &a->sgt || !a->mapped))
		return;
	if (cd->has_pages)
		dma_unmap_sgtable(att->dev, sgt, a->dir, 0);
	else
		colibri_unmap_resources(att->dev, sgt, sgt->nents, a->dir);
	a->mapped = false;
}

/* The last reference to the dma-buf is gone: let go of its owner. */
static void colibri_dmabuf_release(struct dma_buf *dmabuf)
{
	struct colibri_dmabuf *cd = dmabuf->priv;

	kobject_put(cd->owner);
	kfree(cd);
}

/*
 * A read-only user mapping.  remap_pfn_range() for both providers: memmap
 * pages may have no struct page, and the pages provider's high-order
 * allocations are not compound, so their tail pages must not be refcounted
 * the way vm_insert_page() would.  The core has checked that the range
 * lies inside the dma-buf.
 */
static int colibri_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct colibri_dmabuf *cd = dmabuf->priv;
	const struct colibri_buf *buf = cd->buf;
	u64 skip = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long addr = vma->vm_start;
	unsigned int i;
	int ret;

	if (!cd->writable) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		/* Not even a private copy-on-write: so no mprotect(PROT_WRITE). */
		colibri_vma_clear_maywrite(vma);
	}

	for (i = 0; i < buf->nr_chunks && addr < vma->vm_end; i++) {
		const struct colibri_chunk *c = &buf->chunks[i];
		u64 len;

		if (skip >= c->len) {
			skip -= c->len;
			continue;
		}
		len = min_t(u64, c->len - skip, vma->vm_end - addr);
		ret = remap_pfn_range(vma, addr, PHYS_PFN(c->phys + skip), len,
				      vma->vm_page_prot);
		if (ret)
			return ret;
		addr += len;
		skip = 0;
	}
	return addr == vma->vm_end ? 0 : -EINVAL;
}

/* The kernel mapping exists for the buffer's whole life: hand it out. */
static int colibri_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct colibri_dmabuf *cd = dmabuf->priv;

	iosys_map_set_vaddr(map, cd->buf->vaddr);
	return 0;
}

static void colibri_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	/* The mapping belongs to the buffer; nothing to undo. */
}

/*
 * CPU access: the weights never change after the model is sealed, and
 * devices only read them, so there is no device write to make visible to
 * the CPU and no CPU cache to flush for the device (x86 DMA is coherent).
 * Asking for CPU write access to a read-only buffer is a mistake: -EPERM.
 */
static int colibri_dmabuf_begin_cpu_access(struct dma_buf *dmabuf,
					   enum dma_data_direction dir)
{
	struct colibri_dmabuf *cd = dmabuf->priv;

	return cd->writable || dir == DMA_FROM_DEVICE ? 0 : -EPERM;
}

static int colibri_dmabuf_end_cpu_access(struct dma_buf *dmabuf,
					 enum dma_data_direction dir)
{
	struct colibri_dmabuf *cd = dmabuf->priv;

	return cd->writable || dir == DMA_FROM_DEVICE ? 0 : -EPERM;
}

static const struct dma_buf_ops colibri_dmabuf_ops = {
	.attach = colibri_dmabuf_attach,
	.detach = colibri_dmabuf_detach,
	.map_dma_buf = colibri_dmabuf_map,
	.unmap_dma_buf = colibri_dmabuf_unmap,
	.release = colibri_dmabuf_release,
	.mmap = colibri_dmabuf_mmap,
	.vmap = colibri_dmabuf_vmap,
	.vunmap = colibri_dmabuf_vunmap,
	.begin_cpu_access = colibri_dmabuf_begin_cpu_access,
	.end_cpu_access = colibri_dmabuf_end_cpu_access,
};

/**
 * colibri_dmabuf_export() - a new dma-buf over a pinned buffer.
 * @buf: the memory; it must live as long as @owner does.
 * @owner: the kobject owning @buf (a model, a binding); the dma-buf holds
 *	a reference on it until its release.
 * @name: shown in debugfs' dma_buf/bufinfo.
 * @writable: read-write (activation staging) instead of read-only (weights).
 *
 * Return: the dma-buf, or an ERR_PTR().
 */
struct dma_buf *colibri_dmabuf_export(const struct colibri_buf *buf, struct kobject *owner,
				      const char *name, bool writable)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct colibri_dmabuf *cd;
	struct dma_buf *dmabuf;
	char *dname;

	cd = kzalloc(sizeof(*cd), GFP_KERNEL);
	if (!cd)
		return ERR_PTR(-ENOMEM);
	cd->buf = buf;
	cd->writable = writable;
	cd->has_pages = colibri_buf_has_pages(buf);
	cd->nr_ents = colibri_buf_nr_ents(buf);
	cd->owner = kobject_get(owner);

	exp.ops = &colibri_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = writable ? O_RDWR : O_RDONLY;
	exp.priv = cd;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		kobject_put(owner);
		kfree(cd);
		return dmabuf;
	}
	/* The core frees the name with the dma-buf. */
	dname = kstrdup(name, GFP_KERNEL);
	spin_lock(&dmabuf->name_lock);
	dmabuf->name = dname;
	spin_unlock(&dmabuf->name_lock);
	return dmabuf;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vm_helpers.h - what the VM test programs share: fixture paths, the
 * module's counters, deterministic token streams, and the in-process
 * engine as the reference the kernel's logits must equal bit for bit.
 */
#ifndef COLIBRI_VM_HELPERS_H
#define COLIBRI_VM_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "colibri.h"
#include "libcolibri.h"
#include "model/cbfile.h"
#include "core/cb_engine.h"
#include "util/host.h"
#include "colibri_format.h"

static char vm_fixture_dir[4096];

/* $COLIBRI_BUILD/vm-fixtures: tests/vm/make-fixtures writes it on the host. */
static inline const char *fixtures(void)
{
	const char *b = getenv("COLIBRI_BUILD");

	snprintf(vm_fixture_dir, sizeof(vm_fixture_dir), "%s/vm-fixtures", b ? b : "build");
	return vm_fixture_dir;
}

/* The path of fixture @name; 0 if it is readable, else -errno. */
static inline int fixture(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.colibri", fixtures(), name);
	return access(path, R_OK) ? -errno : 0;
}

/*
 * The guest's stand-in for group colibri: the guest has no /etc/group and
 * no udevd, so vm_drop_to_member() does what 60-colibri.rules and the
 * package's addgroup do on a real system, with this gid.
 */
#define VM_COLIBRI_GID	4242

/*
 * Run as root: makes /dev/colibri root:VM_COLIBRI_GID 0660 (the module
 * creates it 0600, docs/kernel.md "Privilege and accounting"), then drops
 * to @uid, a member of that group only, with no capability left.
 */
static inline int vm_drop_to_member(uid_t uid)
{
	gid_t g = VM_COLIBRI_GID;

	if (chown(COLIBRI_DEVICE_PATH, 0, g) || chmod(COLIBRI_DEVICE_PATH, 0660))
		return -errno;
	if (setgroups(1, &g) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* Drops to @uid in no group but its own: no capability, no device. */
static inline int vm_drop_to_outsider(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

static inline struct colibri_info info_now(int fd)
{
	struct colibri_info info;

	colibri_dev_get_info(fd, &info);
	return info;
}

/* A number read from a sysfs file, or -1. */
static inline long long vm_read_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* A module parameter (/sys/module/colibri/parameters/NAME), or -1. */
static inline long long vm_modparam(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/colibri/parameters/%s", name);
	return vm_read_num(path);
}

/* A model's attribute (/sys/kernel/colibri/models/MODEL/ATTR), or -1. */
static inline long long vm_model_attr(const char *model, const char *attr)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/kernel/colibri/models/%s/%s", model, attr);
	return vm_read_num(path);
}

/* A deterministic token stream, different per @salt. */
static inline void test_tokens(uint32_t *t, unsigned int n, unsigned int vocab,
			       unsigned int salt)
{
	for (unsigned int i = 0; i < n; i++)
		t[i] = (i * 7919u + salt * 104729u + 13) % vocab;
}

/*
 * Runs @n tokens of the model in @path through the in-process engine, at
 * most @chunk (<= 64) per forward call; @out gets the last token's logits.
 */
static inline int user_logits(const char *path, const uint32_t *toks, unsigned int n,
			      float *out, unsigned int chunk)
{
	struct cb_engine_params p = { .max_batch_tokens = chunk, .n_seqs = 1,
				      .max_context = 256 };
	char err[256];
	struct cbfile *f = cbfile_open(path, 0, err, sizeof(err));
	uint32_t seq[64] = { 0 }, pos[64];
	uint8_t mask[64];
	struct cb_engine *e;
	struct cb_exec *ex;
	void *arena;
	uint64_t asz;
	int ret = 0;

	if (!f || !chunk || chunk > 64) {
		cbfile_close(f);
		return -EINVAL;
	}
	p.isa_max_level = cb_host_isa_cap();
	asz = cb_engine_arena_size(&f->cfg, &p);
	arena = aligned_alloc(64, (asz + 63) & ~63ULL);
	ex = cb_host_exec_create(2);
	if (!arena || !ex || cb_engine_init(&e, &f->cfg, &f->w, &p, arena, asz)) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned int done = 0; done < n && !ret; done += chunk) {
		unsigned int m = n - done < chunk ? n - done : chunk;
		struct cb_batch b = { .n_tokens = m, .tokens = toks + done, .seq = seq,
				      .pos = pos, .logits_mask = mask, .logits = out };

		for (unsigned int i = 0; i < m; i++) {
			pos[i] = done + i;
			mask[i] = done + i == n - 1;
		}
		ret = cb_engine_forward(e, ex, &b);
	}
out:
	if (ex)
		cb_host_exec_destroy(ex);
	free(arena);
	cbfile_close(f);
	return ret;
}

/*
 * The kernel log from now on: kmsg_open() gives a descriptor at the end of
 * /dev/kmsg; kmsg_bad() reads what was logged since and counts the records
 * that report a kernel problem (what scripts/vm-run fails a run on, plus
 * refcount_t's warnings), copying the first into @first.  A test that
 * provokes a race so checks its own log, and fails by name.
 */
static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static inline int kmsg_bad(int fd, char *first, size_t len)
{
	static const char *const bad[] = {
		"refcount_t", "use-after-free", "Oops", "BUG:", "WARNING:",
		"general protection fault", "list_add corruption", "list_del corruption",
		"soft lockup", "blocked for more than", "Call Trace",
	};
	char rec[2048];
	int n = 0;
	ssize_t r;

	if (first && len)
		first[0] = 0;
	while ((r = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (r < 0) {
			if (errno == EPIPE)	/* overwritten: read on */
				continue;
			break;			/* EAGAIN: nothing more */
		}
		rec[r] = 0;
		for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (!strstr(rec, bad[i]))
				continue;
			if (!n++ && first && len)
				snprintf(first, len, "%s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			break;
		}
	}
	return n;
}

/*
 * Writes a small model of config @c to @path with the library's writer:
 * f32 weights, small finite values from @seed, every checksum right.  For
 * tests that need a shape no fixture has (max_context 0, hostile sizes
 * the validator must refuse on their own merits).  Return: 0 or -1.
 */
static inline int vm_write_model(const char *path, const struct cb_model_config *c,
				 uint32_t seed)
{
	struct cbfile_meta m = { .name = "vm", .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	char err[256];
	struct cbfile_writer *w = cbfile_writer_begin(path, c, &m, err, sizeof(err));
	uint32_t n, i;

	if (!w)
		return -1;
	if (cbfile_writer_layout(w))
		goto fail;
	n = cbfile_writer_count(w);
	for (i = 0; i < n; i++) {
		struct cb_format_slot sl;
		uint64_t sz, k;
		unsigned char *b;

		cbfile_writer_slot(w, i, &sl);
		sz = cbfile_writer_tensor_size(w, sl.role, sl.layer, sl.expert);
		b = malloc(sz ? sz : 1);
		if (!b)
			goto fail;
		for (k = 0; k < sz; k++) {
			seed = seed * 1103515245u + 12345u;
			b[k] = (unsigned char)(seed >> 16) & 0x3f;	/* small, finite f32 */
		}
		if (cbfile_writer_put(w, sl.role, sl.layer, sl.expert, b, sz)) {
			free(b);
			goto fail;
		}
		free(b);
	}
	return cbfile_writer_finish(w, err, sizeof(err)) ? -1 : 0;
fail:
	cbfile_writer_abort(w);
	return -1;
}

/* A tiny valid MoE config (Mixtral shape), for vm_write_model(). */
static inline struct cb_model_config vm_tiny_config(void)
{
	struct cb_model_config c;

	memset(&c, 0, sizeof(c));
	c.arch = COLIBRI_ARCH_MIXTRAL;
	c.vocab_size = 64;
	c.hidden = 16;
	c.n_layers = 1;
	c.n_heads = 2;
	c.n_kv_heads = 1;
	c.head_dim = 8;
	c.n_experts = 2;
	c.top_k = 1;
	c.expert_ffn = 16;
	c.decoder_sparse_step = 1;
	c.rope_theta_bits = 0x461c4000;	/* 10000 */
	c.rms_eps_bits = 0x3727c5ac;	/* 1e-5 */
	c.max_context = 64;
	return c;
}

/* Unreclaimable kernel memory in kB: what a module's leak would grow. */
static inline long kernel_kb(void)
{
	static const char *const keys[] = { "SUnreclaim:", "VmallocUsed:", "Percpu:" };
	char line[256];
	long total = 0, v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (unsigned int i = 0; i < 3; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) &&
			    sscanf(line + strlen(keys[i]), "%ld", &v) == 1)
				total += v;
	fclose(f);
	return total;
}

/* Lets deferred frees (RCU, vfree's lazy purge, per-CPU caches) finish. */
static inline void settle_kernel(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd >= 0) {
		ssize_t r = write(fd, "3", 1);

		(void)r;	/* a kernel without it just settles slower */
		close(fd);
	}
	usleep(1500 * 1000);
}

#endif /* COLIBRI_VM_HELPERS_H */

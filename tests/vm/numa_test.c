// SPDX-License-Identifier: GPL-2.0-only
/*
 * numa_test - where a model's weights live (LOAD's COLIBRI_LOAD_NUMA_*
 * flags, kmod/colibri_numa.c), and that it changes no result.
 *
 * For each placement, local, interleave and replicate: the logits through
 * /dev/colibri equal the in-process engine's bit for bit (so every
 * placement equals every other); the pages of each copy are on the nodes
 * the placement promises, counted by page_to_nid() (sysfs numa_pages);
 * every copy is charged to the module's memory and given back at unload;
 * LIST, sysfs and `colibri device` report the placement.  With replicate
 * on more than one node, every copy serves gemm reads (sysfs numa_reads):
 * each node's CPUs read their own copy.
 *
 * scripts/run-tests runs it in the ordinary guest (one node: replicate
 * makes one copy), in a guest of two nodes with one CPU each (vm-run
 * --numa 2) and with the memmap provider, which refuses to spread.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_cmd.h"
#include "vm_helpers.h"

#define N_TOK		12
#define MAX_NODES	8
#define MAX_PASSES	40	/* forward passes to see every copy read */

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/* The nodes with memory (/sys/devices/system/node/has_memory, "0-1,3"). */
static int mem_nodes(int *nodes)
{
	FILE *f = fopen("/sys/devices/system/node/has_memory", "r");
	int n = 0, a, b;
	char sep;

	if (!f)
		return -1;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d%c", &b, &sep) < 1)
			break;
		for (; a <= b && n < MAX_NODES; a++)
			nodes[n++] = a;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

/* One line of sysfs numa_pages: the copy's node (-1: "*") and its pages per node. */
struct copy_pages {
	int home;
	long pages[MAX_NODES];
};

static int read_numa_pages(const char *model, struct copy_pages *c, int max)
{
	char path[256], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/colibri/models/%s/numa_pages", model);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int nid;
		long v;

		memset(&c[n], 0, sizeof(c[n]));
		c[n].home = *p == '*' ? -1 : (int)strtol(p, &end, 10);
		p = strchr(p, ' ');
		while (p && sscanf(p, " N%d=%ld", &nid, &v) == 2) {
			if (nid >= 0 && nid < MAX_NODES)
				c[n].pages[nid] = v;
			p = strchr(p + 1, ' ');
		}
		n++;
	}
	fclose(f);
	return n;
}

/* sysfs numa_reads: the reads each copy served. */
static int read_numa_reads(const char *model, long long *r, int max)
{
	char path[256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/colibri/models/%s/numa_reads", model);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < max && fscanf(f, "%lld", &r[n]) == 1)
		n++;
	fclose(f);
	return n;
}

static void read_attr(const char *model, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/colibri/models/%s/%s", model, attr);
	buf[0] = 0;
	f = fopen(path, "r");
	if (f) {
		buf[fread(buf, 1, len - 1, f)] = 0;
		fclose(f);
	}
}

static int list_entry(int fd, const char *name, struct colibri_model_entry *out)
{
	struct colibri_model_entry e[16];
	int n = colibri_dev_list(fd, e, 16), i;

	for (i = 0; i < n && i < 16; i++)
		if (!strcmp(e[i].name, name)) {
			*out = e[i];
			return 0;
		}
	return -ENOENT;
}

/* The kernel's logits of @toks, from a fresh sequence of a new session. */
static int kernel_logits(const char *model, const uint32_t *toks, float *out, unsigned int vocab)
{
	struct colibri_submit s;
	int fd = colibri_dev_open(), ret;

	if (fd < 0)
		return fd;
	ret = colibri_dev_attach(fd, model, 64, 0, NULL);
	if (!ret) {
		memset(&s, 0, sizeof(s));
		s.flags = COLIBRI_SUBMIT_RESET | COLIBRI_SUBMIT_LOGITS;
		s.tokens = (uintptr_t)toks;
		s.n_tokens = N_TOK;
		s.logits = (uintptr_t)out;
		s.logits_len = vocab;
		ret = colibri_dev_submit(fd, &s);
	}
	close(fd);
	return ret;
}

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE(numa) {
	int fd;
	struct colibri_info info;
	int nodes[MAX_NODES], nr_nodes;
};

FIXTURE_SETUP(numa)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	self->info = info_now(self->fd);
	self->nr_nodes = mem_nodes(self->nodes);
	ASSERT_LE(1, self->nr_nodes);
	/* Local placement is the loading task's node: make it node of CPU 0. */
	ASSERT_EQ(0, pin_cpu0());
	setenv("COLIBRI_ISA", colibri_isa_name(self->info.isa_level), 1);
	TH_LOG("%d node(s) with memory, provider %s", self->nr_nodes,
	       colibri_mem_provider_name(self->info.mem_provider));
}

FIXTURE_TEARDOWN(numa)
{
	colibri_dev_unload(self->fd, "n", 1);
	close(self->fd);
}

/* The node of CPU 0: /sys/devices/system/cpu/cpu0/nodeN. */
static int cpu0_node(void)
{
	char path[128];
	int nid;

	for (nid = 0; nid < MAX_NODES; nid++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/node%d", nid);
		if (!access(path, F_OK))
			return nid;
	}
	return 0;
}

/*
 * Loads fixture @fix as "n" with LOAD @flags, checks what the placement
 * promises, runs it (as many passes as it takes for every copy to serve
 * reads, for replicate) and unloads it.
 */
static void check_placement(struct __test_metadata *_metadata, FIXTURE_DATA(numa) *self,
			    const char *fix, unsigned int flags, unsigned int policy)
{
	unsigned int copies = policy == COLIBRI_NUMA_REPLICATE ? self->nr_nodes : 1;
	struct copy_pages cp[MAX_NODES];
	struct colibri_model_entry e;
	uint32_t toks[N_TOK];
	long long reads[MAX_NODES];
	unsigned long long bytes, used0, pages;
	float *ref, *got;
	char path[4096], buf[256];
	int i, k, n, pass, all_read = 0;

	ASSERT_EQ(0, fixture(fix, path, sizeof(path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
	used0 = info_now(self->fd).mem_used;
	if (self->info.mem_provider == COLIBRI_MEM_MEMMAP && policy != COLIBRI_NUMA_LOCAL) {
		EXPECT_EQ(-EINVAL, colibri_dev_load_flags(self->fd, path, "n", flags, NULL, NULL));
		EXPECT_EQ(used0, info_now(self->fd).mem_used);
		EXPECT_EQ(0, info_now(self->fd).nr_models);
		return;
	}
	ASSERT_EQ(0, colibri_dev_load_flags(self->fd, path, "n", flags, NULL, &bytes));

	/* Reported: LIST, sysfs; every copy charged. */
	ASSERT_EQ(0, list_entry(self->fd, "n", &e));
	EXPECT_EQ(policy, e.numa);
	EXPECT_EQ(copies, e.numa_copies);
	EXPECT_EQ(bytes, e.bytes);
	EXPECT_EQ(0, bytes % copies);
	pages = bytes / copies / 4096;
	EXPECT_EQ(used0 + bytes, info_now(self->fd).mem_used);
	read_attr("n", "numa", buf, sizeof(buf));
	EXPECT_EQ(0, strncmp(buf, colibri_numa_name(policy), strlen(colibri_numa_name(policy))));
	EXPECT_EQ(copies, vm_model_attr("n", "numa_copies"));
	EXPECT_EQ((long long)bytes, vm_model_attr("n", "bytes"));

	/* Placed: page_to_nid() of every page of every copy. */
	read_attr("n", "numa_pages", buf, sizeof(buf));
	for (i = 0; buf[i]; i++)	/* one log line */
		if (buf[i] == '\n')
			buf[i] = buf[i + 1] ? ';' : 0;
	TH_LOG("%s numa %s: numa_pages %s", fix, colibri_numa_name(policy), buf);
	n = read_numa_pages("n", cp, MAX_NODES);
	ASSERT_EQ((int)copies, n);
	for (k = 0; k < n && self->info.mem_provider != COLIBRI_MEM_MEMMAP; k++) {
		long sum = 0;

		for (i = 0; i < MAX_NODES; i++)
			sum += cp[k].pages[i];
		EXPECT_EQ((long)pages, sum) TH_LOG("copy %d", k);
		if (policy == COLIBRI_NUMA_REPLICATE && copies > 1) {
			/* copy k on the k-th node with memory, wholly */
			EXPECT_EQ(self->nodes[k], cp[k].home);
			EXPECT_EQ((long)pages, cp[k].pages[self->nodes[k]]) TH_LOG("copy %d", k);
		} else if (policy == COLIBRI_NUMA_INTERLEAVE) {
			EXPECT_EQ(-1, cp[k].home);
			/* every node its share: 64 KiB pieces in turn */
			for (i = 0; i < self->nr_nodes; i++)
				EXPECT_LE((long)pages / (2 * self->nr_nodes),
					  cp[k].pages[self->nodes[i]]) TH_LOG("node %d", self->nodes[i]);
		} else if (policy == COLIBRI_NUMA_REPLICATE) {
			EXPECT_EQ(-1, cp[k].home);
			EXPECT_EQ((long)pages, cp[k].pages[self->nodes[0]]);
		} else {
			/* local: the loading task's node, CPU 0's */
			EXPECT_EQ(-1, cp[k].home);
			EXPECT_EQ((long)pages, cp[k].pages[cpu0_node()]);
		}
	}

	/* Run: bit for bit the in-process engine, on every pass. */
	test_tokens(toks, N_TOK, e.vocab_size, 3);
	ref = calloc(e.vocab_size, sizeof(float));
	got = calloc(e.vocab_size, sizeof(float));
	ASSERT_NE(NULL, ref);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, user_logits(path, toks, N_TOK, ref, N_TOK));
	for (pass = 0; pass < MAX_PASSES && !all_read; pass++) {
		memset(got, 0xff, e.vocab_size * sizeof(float));
		ASSERT_EQ(0, kernel_logits("n", toks, got, e.vocab_size));
		ASSERT_EQ(0, memcmp(ref, got, e.vocab_size * sizeof(float)))
			TH_LOG("%s, numa %s, pass %d: logits differ from the in-process engine",
			       fix, colibri_numa_name(policy), pass);
		n = read_numa_reads("n", reads, MAX_NODES);
		ASSERT_EQ((int)copies, n);
		all_read = 1;
		for (k = 0; k < n; k++)
			all_read &= reads[k] > 0;
	}
	EXPECT_TRUE(all_read) TH_LOG("a copy served no read in %d passes", MAX_PASSES);
	for (k = 0; k < n; k++)
		TH_LOG("%s numa %s: copy %d served %lld reads (%d passes)", fix,
		       colibri_numa_name(policy), k, reads[k], pass);
	free(ref);
	free(got);

	/* Gone: every copy given back. */
	EXPECT_EQ(0, colibri_dev_unload(self->fd, "n", 1));
	EXPECT_EQ(used0, info_now(self->fd).mem_used);
}

TEST_F(numa, info_reports_the_nodes_with_memory)
{
	EXPECT_EQ((unsigned int)self->nr_nodes, self->info.numa_nodes);
}

TEST_F(numa, bad_flags_are_einval_and_hold_nothing)
{
	unsigned long long used0 = self->info.mem_used;
	char path[4096];

	ASSERT_EQ(0, fixture("mixtral-q8_0", path, sizeof(path)));
	EXPECT_EQ(-EINVAL, colibri_dev_load_flags(self->fd, path, "n",
						  COLIBRI_LOAD_NUMA_INTERLEAVE |
						  COLIBRI_LOAD_NUMA_REPLICATE, NULL, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_load_flags(self->fd, path, "n", 1u << 2, NULL, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_load_flags(self->fd, path, "n", 1u << 31, NULL, NULL));
	EXPECT_EQ(0, info_now(self->fd).nr_models);
	EXPECT_EQ(used0, info_now(self->fd).mem_used);
	EXPECT_EQ(-EINVAL, colibri_numa_flags("spread"));
}

TEST_F(numa, local_places_on_the_loading_node_and_matches_in_process)
{
	check_placement(_metadata, self, "mixtral-f32", 0, COLIBRI_NUMA_LOCAL);
	check_placement(_metadata, self, "mixtral-q8_0", 0, COLIBRI_NUMA_LOCAL);
}

TEST_F(numa, interleave_spreads_over_every_node_and_matches_in_process)
{
	check_placement(_metadata, self, "mixtral-f32", COLIBRI_LOAD_NUMA_INTERLEAVE,
			COLIBRI_NUMA_INTERLEAVE);
	check_placement(_metadata, self, "mixtral-q8_0", COLIBRI_LOAD_NUMA_INTERLEAVE,
			COLIBRI_NUMA_INTERLEAVE);
}

TEST_F(numa, replicate_copies_per_node_each_read_and_matches_in_process)
{
	check_placement(_metadata, self, "mixtral-f32", COLIBRI_LOAD_NUMA_REPLICATE,
			COLIBRI_NUMA_REPLICATE);
	check_placement(_metadata, self, "mixtral-q8_0", COLIBRI_LOAD_NUMA_REPLICATE,
			COLIBRI_NUMA_REPLICATE);
}

/* `colibri load --numa` and `colibri device`, as an administrator uses them. */
TEST_F(numa, cli_load_numa_and_device_report)
{
	char path[4096], want[128];
	struct vm_cmd *r = calloc(1, sizeof(*r));
	const char *policy = self->info.mem_provider == COLIBRI_MEM_MEMMAP ? "local" : "replicate";
	unsigned int copies = !strcmp(policy, "replicate") ? self->nr_nodes : 1;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, fixture("mixtral-q8_0", path, sizeof(path)));
	ASSERT_EQ(0, vm_colibri_run(r, 120, "load", path, "--name", "n", "--numa", "sideways",
				    NULL));
	EXPECT_EQ(2, r->status);
	ASSERT_EQ(0, vm_colibri_run(r, 120, "load", path, "--name", "n", "--numa", policy,
				    NULL));
	EXPECT_EQ(0, r->status) TH_LOG("%s", r->err);
	ASSERT_EQ(0, vm_colibri_run(r, 120, "device", NULL));
	EXPECT_EQ(0, r->status);
	snprintf(want, sizeof(want), "numa           %d node%s with memory\n", self->nr_nodes,
		 self->nr_nodes == 1 ? "" : "s");
	EXPECT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);
	snprintf(want, sizeof(want), "model numa     n: %s, %u cop%s\n", policy, copies,
		 copies == 1 ? "y" : "ies");
	EXPECT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);
	free(r);
}

TEST_HARNESS_MAIN

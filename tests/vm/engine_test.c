// SPDX-License-Identifier: GPL-2.0-only
/*
 * engine_test - models in the kernel: LOAD/UNLOAD/LIST, sessions, SUBMIT,
 * and the kernel's logits against the in-process engine, bit for bit.
 *
 * Runs inside the vm-run guest with colibri.ko loaded.  Fixtures are the
 * .colibri files in $COLIBRI_BUILD/vm-fixtures/ (tests/vm/make-fixtures
 * writes them on the host before the guest boots).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "format/cb_format.h"
#include "core/cb_engine_priv.h"
#include "vm_helpers.h"

#define N_TOK 12

/* Software emulation on a busy host is slow: allow minutes, not seconds. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

static int submit(int fd, const uint32_t *toks, unsigned int n, unsigned int flags,
		  float *logits, unsigned int logits_len, struct colibri_submit *out)
{
	struct colibri_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.flags = flags;
	s.tokens = (uintptr_t)toks;
	s.n_tokens = n;
	s.logits = (uintptr_t)logits;
	s.logits_len = logits_len;
	ret = colibri_dev_submit(fd, &s);
	if (out)
		*out = s;
	return ret;
}

FIXTURE(model) {
	int fd;
	char path[4096];
	char name[COLIBRI_NAME_LEN];
};

FIXTURE_SETUP(model)
{
	struct colibri_info info;

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "m", self->name, NULL));
	info = info_now(self->fd);
	/* The in-process engine must run the kernel's ISA level. */
	setenv("COLIBRI_ISA", colibri_isa_name(info.isa_level), 1);
}

FIXTURE_TEARDOWN(model)
{
	colibri_dev_unload(self->fd, "m", 1);
	close(self->fd);
}

TEST_F(model, load_publishes_in_list_sysfs_and_info)
{
	struct colibri_model_entry e[8];
	char buf[64] = "";
	int n, sfd;

	EXPECT_STREQ("m", self->name);
	n = colibri_dev_list(self->fd, e, 8);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("m", e[0].name);
	EXPECT_EQ(1, e[0].arch);	/* mixtral */
	EXPECT_EQ(0, e[0].sessions);
	EXPECT_LT(0, e[0].bytes);
	EXPECT_EQ(1, info_now(self->fd).nr_models);
	EXPECT_LE(e[0].bytes, info_now(self->fd).mem_used);
	sfd = open("/sys/kernel/colibri/models/m/arch", O_RDONLY);
	ASSERT_LE(0, sfd);
	EXPECT_LT(0, read(sfd, buf, sizeof(buf) - 1));
	close(sfd);
	EXPECT_STREQ("mixtral\n", buf);
}

TEST_F(model, duplicate_name_is_eexist_and_bad_names_einval)
{
	EXPECT_EQ(-EEXIST, colibri_dev_load(self->fd, self->path, "m", NULL, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_load(self->fd, self->path, "bad/name", NULL, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_load(self->fd, self->path, ".hidden", NULL, NULL));
	EXPECT_EQ(-ENOENT, colibri_dev_unload(self->fd, "nosuch", 0));
	EXPECT_EQ(1, info_now(self->fd).nr_models);
}

TEST_F(model, load_and_unload_need_cap_sys_admin)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		/* Drop to nobody in the device's group: every capability goes. */
		if (vm_drop_to_member(65534))
			_exit(10);
		int fd = open(COLIBRI_DEVICE_PATH, O_RDWR);

		if (fd < 0)
			_exit(11);
		if (colibri_dev_load(fd, self->path, "x", NULL, NULL) != -EPERM)
			_exit(12);
		if (colibri_dev_unload(fd, "m", 0) != -EPERM)
			_exit(13);
		/* ... but attaching and submitting need only the device. */
		if (colibri_dev_attach(fd, "m", 64, 0, NULL))
			_exit(14);
		uint32_t t[2] = { 1, 2 };

		if (submit(fd, t, 2, 0, NULL, 0, NULL))
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(model, unload_refused_while_attached_unless_wait)
{
	int s = colibri_dev_open();

	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "m", 64, 0, NULL));
	EXPECT_EQ(-EBUSY, colibri_dev_unload(self->fd, "m", 0));
	EXPECT_EQ(1, info_now(self->fd).nr_sessions);
	close(s);
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, "m", 0));
	EXPECT_EQ(0, info_now(self->fd).nr_models);
}

TEST_F(model, attach_errors)
{
	int s = colibri_dev_open();
	struct colibri_attach a;

	ASSERT_LE(0, s);
	EXPECT_EQ(-ENOENT, colibri_dev_attach(s, "nosuch", 64, 0, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_attach(s, "m", 1u << 30, 0, NULL));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	strcpy(a.name, "m");
	a.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(s, COLIBRI_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, colibri_dev_attach(s, "m", 64, 0, &a));
	EXPECT_EQ(64, a.max_context);
	EXPECT_LT(0, a.bytes);
	EXPECT_EQ(-EBUSY, colibri_dev_attach(s, "m", 64, 0, NULL));
	close(s);
}

TEST_F(model, submit_validates_everything)
{
	int s = colibri_dev_open();
	struct colibri_attach a;
	uint32_t t[4] = { 1, 2, 3, 4 };
	float *logits;
	struct colibri_submit sub;

	ASSERT_LE(0, s);
	EXPECT_EQ(-ENOTCONN, submit(s, t, 4, 0, NULL, 0, NULL));
	ASSERT_EQ(0, colibri_dev_attach(s, "m", 8, 0, &a));
	logits = calloc(a.vocab_size, sizeof(float));
	ASSERT_NE(NULL, logits);
	EXPECT_EQ(-EINVAL, submit(s, t, 0, 0, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, submit(s, t, 4, 1u << 7, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, submit(s, t, 4, COLIBRI_SUBMIT_LOGITS, logits, a.vocab_size - 1, NULL));
	EXPECT_EQ(-EFAULT, submit(s, NULL, 4, 0, NULL, 0, NULL));
	EXPECT_EQ(-EFAULT, submit(s, (uint32_t *)8, 4, 0, NULL, 0, NULL));
	EXPECT_EQ(-EFAULT, submit(s, t, 4, COLIBRI_SUBMIT_LOGITS, (float *)8, a.vocab_size, NULL));
	t[2] = a.vocab_size;	/* out of range */
	EXPECT_EQ(-EINVAL, submit(s, t, 4, COLIBRI_SUBMIT_RESET, NULL, 0, NULL));
	t[2] = 3;
	{
		uint32_t nine[9] = { 0 };

		EXPECT_EQ(-ENOSPC, submit(s, nine, 9, COLIBRI_SUBMIT_RESET, NULL, 0, NULL));
	}
	/* The context holds 8: 4 + 4 fit, one more does not. */
	ASSERT_EQ(0, submit(s, t, 4, COLIBRI_SUBMIT_RESET, NULL, 0, &sub));
	EXPECT_EQ(4, sub.n_past);
	ASSERT_EQ(0, submit(s, t, 4, 0, NULL, 0, &sub));
	EXPECT_EQ(8, sub.n_past);
	EXPECT_EQ(-ENOSPC, submit(s, t, 1, 0, NULL, 0, NULL));
	ASSERT_EQ(0, submit(s, t, 1, COLIBRI_SUBMIT_RESET, NULL, 0, &sub));
	EXPECT_EQ(1, sub.n_past);
	EXPECT_LE(0, sub.token);
	EXPECT_GT((int)a.vocab_size, sub.token);
	free(logits);
	close(s);
}

/*
 * A GPT-OSS model generates through /dev/colibri: 40 greedy tokens, far
 * past its window of 8 (the kernel's ring of 8 + 4 - 1 rows wraps three
 * times), each the argmax of the in-process engine's logits for the same
 * tokens (whose ring, of 8 + 64 - 1 rows, holds them all: a wrong ring
 * index in either would show).  Both the f32 model and the one converted
 * from OpenAI's MXFP4 layout (mxfp4 experts).
 */
TEST(gpt_oss_generates_through_device)
{
	static const char *const names[2] = { "gpt_oss-f32", "gpt_oss-mxfp4" };
	int fd = colibri_dev_open(), s, i, j, n, best;
	struct colibri_submit sub;
	struct colibri_attach a;
	char path[4096];
	float *ul;

	ASSERT_LE(0, fd);
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(fd).isa_level), 1);
	for (n = 0; n < 2; n++) {
		uint32_t all[6 + 40] = { 5, 17, 200, 3, 99, 42 };

		ASSERT_EQ(0, fixture(names[n], path, sizeof(path)))
			TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
		ASSERT_EQ(0, colibri_dev_load(fd, path, "oss", NULL, NULL));
		s = colibri_dev_open();
		ASSERT_LE(0, s);
		ASSERT_EQ(0, colibri_dev_attach(s, "oss", 64, 4, &a));
		ul = calloc(a.vocab_size, sizeof(float));
		ASSERT_NE(NULL, ul);
		ASSERT_EQ(0, submit(s, all, 6, COLIBRI_SUBMIT_RESET, NULL, 0, &sub));
		for (i = 0; i < 40; i++) {
			all[6 + i] = (uint32_t)sub.token;
			ASSERT_EQ(0, user_logits(path, all, 6 + i, ul, 64));
			for (j = 1, best = 0; j < (int)a.vocab_size; j++)
				best = ul[j] > ul[best] ? j : best;
			EXPECT_EQ(best, sub.token) TH_LOG("%s: token %d", names[n], i);
			if (i < 39)
				ASSERT_EQ(0, submit(s, &all[6 + i], 1, 0, NULL, 0, &sub));
		}
		EXPECT_EQ(45, sub.n_past);
		free(ul);
		close(s);
		EXPECT_EQ(0, colibri_dev_unload(fd, "oss", 0));
	}
	close(fd);
}

/*
 * The sliding layers' ring in the kernel's memory.  A session shares its
 * model's engine: 8 slots of the fixture's 2048 positions, 64 tokens a pass
 * (the module's defaults).  With layers 0 and 2 sliding over 8 positions,
 * that engine is smaller than the same model's without a window by two
 * layers' K and V of 2048 - (8 + 64 - 1) positions per slot (to the page
 * the kernel rounds it to): /sys/kernel/colibri/models/NAME/shared_bytes.
 */
TEST(gpt_oss_ring_bounds_session_memory)
{
	const char *names[2] = { "gpt_oss-f32", "gpt_oss_full-f32" };
	int64_t kvrow = 2 * 64 * sizeof(float) * 2;	/* kv heads x head_dim, K and V */
	int64_t want = 8 * 2 * (2048 - (8 + 64 - 1)) * kvrow, got;
	long long bytes[2] = { 0, 0 };
	int fd = colibri_dev_open(), i;

	ASSERT_LE(0, fd);
	for (i = 0; i < 2; i++) {
		struct colibri_attach a;
		char path[4096];
		FILE *f;
		int s;

		ASSERT_EQ(0, fixture(names[i], path, sizeof(path)))
			TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
		ASSERT_EQ(0, colibri_dev_load(fd, path, "ring", NULL, NULL));
		s = colibri_dev_open();
		ASSERT_LE(0, s);
		ASSERT_EQ(0, colibri_dev_attach(s, "ring", 256, 4, &a));
		f = fopen("/sys/kernel/colibri/models/ring/shared_bytes", "r");
		ASSERT_NE(NULL, f);
		EXPECT_EQ(1, fscanf(f, "%lld", &bytes[i]));
		fclose(f);
		close(s);
		ASSERT_EQ(0, colibri_dev_unload(fd, "ring", 0));
	}
	got = bytes[1] - bytes[0];
	TH_LOG("shared engine: %lld bytes with the ring, %lld without: %lld saved, %lld expected",
	       bytes[0], bytes[1], (long long)got, (long long)want);
	EXPECT_LT(0, bytes[0]);
	EXPECT_GT(got, want - 4096);
	EXPECT_LT(got, want + 4096);
	close(fd);
}

/* Every fixture: kernel logits == in-process logits, bit for bit. */
TEST(kernel_logits_equal_in_process_engine)
{
	int fd = colibri_dev_open(), checked = 0;
	struct colibri_info info;
	DIR *d;
	struct dirent *de;

	ASSERT_LE(0, fd);
	info = info_now(fd);
	setenv("COLIBRI_ISA", colibri_isa_name(info.isa_level), 1);
	d = opendir(fixtures());
	ASSERT_NE(NULL, d) TH_LOG("no fixtures in %s", fixtures());
	while ((de = readdir(d))) {
		char path[4096];
		struct colibri_attach a;
		uint32_t toks[N_TOK];
		float *kl, *ul;
		size_t len = strlen(de->d_name);
		int s;

		if (len < 9 || strcmp(de->d_name + len - 8, ".colibri"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", fixtures(), de->d_name);
		ASSERT_EQ(0, colibri_dev_load(fd, path, "cmp", NULL, NULL)) TH_LOG("%s", path);
		s = colibri_dev_open();
		ASSERT_LE(0, s);
		/* A batch of 5 splits the prompt; the engine's answer must not care. */
		ASSERT_EQ(0, colibri_dev_attach(s, "cmp", 64, 5, &a));
		kl = calloc(a.vocab_size, sizeof(float));
		ul = calloc(a.vocab_size, sizeof(float));
		ASSERT_TRUE(kl && ul);
		test_tokens(toks, N_TOK, a.vocab_size, checked);
		ASSERT_EQ(0, submit(s, toks, N_TOK, COLIBRI_SUBMIT_LOGITS, kl, a.vocab_size, NULL));
		ASSERT_EQ(0, user_logits(path, toks, N_TOK, ul, 64)) TH_LOG("%s", path);
		EXPECT_EQ(0, memcmp(kl, ul, a.vocab_size * sizeof(float)))
			TH_LOG("%s: kernel %g, in-process %g at 0", de->d_name, kl[0], ul[0]);
		/* One more decode step stays equal too. */
		ASSERT_EQ(0, submit(s, toks, 1, COLIBRI_SUBMIT_LOGITS, kl, a.vocab_size, NULL));
		{
			uint32_t all[N_TOK + 1];

			memcpy(all, toks, sizeof(toks));
			all[N_TOK] = toks[0];
			ASSERT_EQ(0, user_logits(path, all, N_TOK + 1, ul, 3));
		}
		EXPECT_EQ(0, memcmp(kl, ul, a.vocab_size * sizeof(float))) TH_LOG("%s decode",
									    de->d_name);
		free(kl);
		free(ul);
		close(s);
		ASSERT_EQ(0, colibri_dev_unload(fd, "cmp", 0));
		checked++;
	}
	closedir(d);
	TH_LOG("%d fixtures compared at ISA %s", checked, info.isa_name);
	EXPECT_LE(4, checked);
	close(fd);
}

/*
 * The in-process engine over @n tokens in pieces of 128, then one decode
 * step of toks[n] if @step; the last row's logits into @out.  @form:
 * enum cb_mla_form (test-only switch).
 */
static int ds_in_process(const char *path, const uint32_t *toks, int n, int step, int form,
			 float *out)
{
	struct cb_engine_params p = { .max_batch_tokens = 128, .n_seqs = 1, .max_context = 256 };
	struct cbfile *f = cbfile_open(path, 0, NULL, 0);
	struct cb_exec *ex = cb_host_exec_create(2);
	uint32_t seq[128] = { 0 }, pos[128];
	uint8_t mask[128];
	struct cb_engine *e;
	void *arena = NULL;
	uint64_t asz;
	int r = -EINVAL, done, m;

	if (!f || !ex)
		goto out;
	p.isa_max_level = cb_host_isa_cap();
	asz = cb_engine_arena_size(&f->cfg, &p);
	arena = aligned_alloc(64, (asz + 63) & ~63ULL);
	if (!arena || cb_engine_init(&e, &f->cfg, &f->w, &p, arena, asz))
		goto out;
	cb_engine_set_mla_form(e, form);
	for (done = 0, r = 0; !r && done < n + step; done += m) {
		m = done < n ? (n - done < 128 ? n - done : 128) : 1;
		struct cb_batch b = { .n_tokens = m, .tokens = toks + done, .seq = seq,
				      .pos = pos, .logits_mask = mask, .logits = out };

		for (int i = 0; i < m; i++) {
			pos[i] = done + i;
			mask[i] = done + i == n + step - 1;
		}
		r = cb_engine_forward(e, ex, &b);
	}
out:
	free(arena);
	if (ex)
		cb_host_exec_destroy(ex);
	cbfile_close(f);
	return r;
}

/*
 * DeepSeek's naive MLA form in the kernel: a session's prompt of 192 in
 * passes of 128 and 64 (the first the rule gives the naive form, for
 * this shape from about 100 tokens: the result differs from the forced
 * absorbed form's), then a decode step (absorbed), equal to the
 * in-process engine fed the same pieces, bit for bit.
 */
TEST(deepseek_naive_prefill_equals_in_process)
{
	int fd = colibri_dev_open(), s, n = 192;
	struct colibri_attach a;
	uint32_t toks[193];
	char path[4096];
	float *kl, *ul;

	ASSERT_LE(0, fd);
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(fd).isa_level), 1);
	ASSERT_EQ(0, fixture("deepseek_v3-f32", path, sizeof(path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
	ASSERT_EQ(0, colibri_dev_load(fd, path, "dsn", NULL, NULL));
	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "dsn", 256, 128, &a));
	kl = calloc(a.vocab_size, sizeof(float));
	ul = calloc(a.vocab_size, sizeof(float));
	ASSERT_TRUE(kl && ul);
	test_tokens(toks, n, a.vocab_size, 7);
	toks[n] = toks[0];
	ASSERT_EQ(0, submit(s, toks, n, COLIBRI_SUBMIT_LOGITS, kl, a.vocab_size, NULL));
	ASSERT_EQ(0, ds_in_process(path, toks, n, 0, CB_MLA_AUTO, ul));
	EXPECT_EQ(0, memcmp(kl, ul, a.vocab_size * sizeof(float)))
		TH_LOG("prefill: kernel %g, in-process %g at 0", kl[0], ul[0]);
	ASSERT_EQ(0, ds_in_process(path, toks, n, 0, CB_MLA_ABSORBED, ul));
	EXPECT_NE(0, memcmp(kl, ul, a.vocab_size * sizeof(float)))
		TH_LOG("the kernel's prefill equals the absorbed form: no naive pass");
	ASSERT_EQ(0, submit(s, toks + n, 1, COLIBRI_SUBMIT_LOGITS, kl, a.vocab_size, NULL));
	ASSERT_EQ(0, ds_in_process(path, toks, n, 1, CB_MLA_AUTO, ul));
	EXPECT_EQ(0, memcmp(kl, ul, a.vocab_size * sizeof(float)))
		TH_LOG("decode: kernel %g, in-process %g at 0", kl[0], ul[0]);
	free(kl);
	free(ul);
	close(s);
	ASSERT_EQ(0, colibri_dev_unload(fd, "dsn", 0));
	close(fd);
}

/*
 * The fixture @fx, loaded as @name, generates through /dev/colibri: every
 * greedy token of the kernel's (8 steps after a prompt) is the argmax of
 * the in-process engine's logits over the same sequence.  The caller
 * unloads @name.
 */
static void generates_through_the_device(struct __test_metadata *_metadata, int fd,
					 const char *fx, const char *name, char *path,
					 size_t len)
{
	int s, i, j, steps = 8;
	struct colibri_attach a;
	struct colibri_submit sub;
	uint32_t toks[N_TOK + 8];
	float *ul;

	setenv("COLIBRI_ISA", colibri_isa_name(info_now(fd).isa_level), 1);
	ASSERT_EQ(0, fixture(fx, path, len))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
	ASSERT_EQ(0, colibri_dev_load(fd, path, name, NULL, NULL));
	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, name, 64, 4, &a));
	ul = calloc(a.vocab_size, sizeof(float));
	ASSERT_NE(NULL, ul);
	test_tokens(toks, N_TOK, a.vocab_size, 3);
	ASSERT_EQ(0, submit(s, toks, N_TOK, COLIBRI_SUBMIT_RESET, NULL, 0, &sub));
	for (i = 0; i < steps; i++) {
		int best = 0;

		ASSERT_LE(0, sub.token);
		ASSERT_GT((int)a.vocab_size, sub.token);
		ASSERT_EQ(0, user_logits(path, toks, N_TOK + i, ul, 5));
		for (j = 1; j < (int)a.vocab_size; j++)
			best = ul[j] > ul[best] ? j : best;
		EXPECT_EQ(best, sub.token) TH_LOG("%s, step %d", fx, i);
		toks[N_TOK + i] = (uint32_t)sub.token;
		ASSERT_EQ(0, submit(s, &toks[N_TOK + i], 1, 0, NULL, 0, &sub));
		EXPECT_EQ(N_TOK + i + 1, (int)sub.n_past);
	}
	free(ul);
	close(s);
}

/*
 * A GLM-4.5-shaped model (q/k/v biases, per-head q/k norm, RoPE on the
 * leading half of each head, sigmoid routing with a selection bias and a
 * routed scale, shared experts, a dense first layer) generates through
 * /dev/colibri as in process; so does GLM-4.5-Air's shape (no q/k norm,
 * expert groups) in q8_0.
 */
TEST(glm_generates_through_the_device)
{
	static const char *const fx[2] = { "glm4_moe-f32", "glm4_moe_air-q8_0" };
	int fd = colibri_dev_open(), i;
	char path[4096];

	ASSERT_LE(0, fd);
	for (i = 0; i < 2; i++) {
		generates_through_the_device(_metadata, fd, fx[i], "glm", path, sizeof(path));
		ASSERT_EQ(0, colibri_dev_unload(fd, "glm", 0));
	}
	close(fd);
}

/*
 * A Qwen3.5-shaped model (Gated DeltaNet layers with a recurrent state per
 * session, a gated full-attention layer) generates through /dev/colibri as
 * in process, in f32 and q8_0; then two processes share it, each its own
 * prompt at once (one engine's two slots when batch_slots allows: the
 * states must not mix), each getting the in-process logits bit for bit.
 */
TEST(qwen3_5_generates_and_two_processes_share_it)
{
	static const char *const fx[2] = { "qwen3_5_moe_vm-f32", "qwen3_5_moe_vm-q8_0" };
	int fd = colibri_dev_open(), i, st, pfd[2];
	struct colibri_attach a;
	uint32_t toks[2][N_TOK];
	float *ref[2];
	char path[4096];
	pid_t pids[2];

	ASSERT_LE(0, fd);
	generates_through_the_device(_metadata, fd, fx[0], "q35", path, sizeof(path));
	ASSERT_EQ(0, colibri_dev_unload(fd, "q35", 0));
	generates_through_the_device(_metadata, fd, fx[1], "q35", path, sizeof(path));
	{
		int s = colibri_dev_open();

		ASSERT_EQ(0, colibri_dev_attach(s, "q35", 64, 0, &a));
		close(s);
	}
	for (i = 0; i < 2; i++) {
		ref[i] = calloc(a.vocab_size, sizeof(float));
		ASSERT_NE(NULL, ref[i]);
		test_tokens(toks[i], N_TOK, a.vocab_size, 40 + i);
		ASSERT_EQ(0, user_logits(path, toks[i], N_TOK, ref[i], 64));
	}
	EXPECT_NE(0, memcmp(ref[0], ref[1], a.vocab_size * sizeof(float)));
	ASSERT_EQ(0, pipe(pfd));
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			int s = colibri_dev_open(), r = 0;
			float *kl = calloc(a.vocab_size, sizeof(float));

			if (s < 0 || !kl || colibri_dev_attach(s, "q35", 64, 0, NULL))
				_exit(20);
			if (write(pfd[1], "a", 1) != 1)
				_exit(21);
			usleep(300 * 1000);	/* both attached before either computes */
			for (int rep = 0; rep < 3 && !r; rep++) {
				if (submit(s, toks[i], N_TOK, COLIBRI_SUBMIT_LOGITS |
					   COLIBRI_SUBMIT_RESET, kl, a.vocab_size, NULL))
					r = 22;
				else if (memcmp(kl, ref[i], a.vocab_size * sizeof(float)))
					r = 23;
			}
			_exit(r);
		}
	}
	for (i = 0; i < 2; i++) {
		char c;

		ASSERT_EQ(1, read(pfd[0], &c, 1));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("child %d (22: submit, 23: logits)", i);
		free(ref[i]);
	}
	EXPECT_EQ(0, colibri_dev_unload(fd, "q35", 0));
	close(fd);
}

/*
 * A DeepSeek-shaped model (MLA, sigmoid group-limited routing) generates
 * through /dev/colibri (generates_through_the_device()), and the session's
 * KV cache is the latent one (its arena is smaller than a full K/V cache
 * of the same shape would need).
 */
TEST(deepseek_generates_through_the_device)
{
	int fd = colibri_dev_open();
	char path[4096];

	ASSERT_LE(0, fd);
	generates_through_the_device(_metadata, fd, "deepseek_v3-f32", "ds", path, sizeof(path));
	/*
	 * 64 more positions cost exactly the latent and RoPE key of each
	 * layer (kv_lora_rank + qk_rope_dim floats), not full keys and values:
	 * the arena the module carves a session from (cb_engine_arena_size(),
	 * which colibri_session.c sizes it by; ATTACH's bytes round to pages
	 * or share an engine, so they cannot show it)
	 */
	{
		struct cb_engine_params p = { .max_batch_tokens = 4, .n_seqs = 1,
					      .max_context = 64 };
		char err[256];
		struct cbfile *f = cbfile_open(path, 0, err, sizeof(err));
		unsigned long long row, full, a64, a128;

		ASSERT_NE(NULL, f) TH_LOG("%s", err);
		row = (f->cfg.mla.kv_lora_rank + f->cfg.mla.qk_rope_dim) * 4ull;
		full = (f->cfg.n_heads * (f->cfg.head_dim + f->cfg.mla.v_head_dim)) * 4ull;
		a64 = cb_engine_arena_size(&f->cfg, &p);
		p.max_context = 128;
		a128 = cb_engine_arena_size(&f->cfg, &p);
		EXPECT_EQ(64ull * f->cfg.n_layers * row, a128 - a64)
			TH_LOG("64 positions: %llu bytes; full K/V would be %llu", a128 - a64,
			       64ull * f->cfg.n_layers * full);
		EXPECT_LT(row, full);
		cbfile_close(f);
	}
	ASSERT_EQ(0, colibri_dev_unload(fd, "ds", 0));
	close(fd);
}

/* Broken files are refused, and a refused load leaves nothing behind. */
TEST(malicious_model_files_are_refused_cleanly)
{
	char path[4096], bad[] = "/tmp/bad.colibri";
	int fd = colibri_dev_open(), mfd;
	struct stat st;
	unsigned char *buf;
	struct {
		const char *what;
		long off;	/* byte to flip; negative: from the end */
		long trunc;	/* truncate to this many bytes (0: no) */
	} cases[] = {
		{ "bad magic", 0, 0 },
		{ "bad version", 8, 0 },
		{ "header crc", 200, 0 },
		{ "directory entry", 512 + 16, 0 },
		{ "tensor data crc", -100, 0 },
		{ "truncated to a header", 0, 512 },
		{ "truncated data", 0, -4096 },
		{ "empty", 0, 1 },
	};
	unsigned long long used0;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, stat(path, &st));
	buf = malloc(st.st_size);
	mfd = open(path, O_RDONLY);
	ASSERT_EQ(st.st_size, read(mfd, buf, st.st_size));
	close(mfd);
	used0 = info_now(fd).mem_used;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long len = st.st_size, off = cases[i].off;

		if (cases[i].trunc)
			len = cases[i].trunc > 0 ? cases[i].trunc : st.st_size + cases[i].trunc;
		if (off < 0)
			off += st.st_size;
		if (!cases[i].trunc)
			buf[off] ^= 0x5a;
		mfd = open(bad, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		ASSERT_LE(0, mfd);
		ASSERT_EQ(len, write(mfd, buf, len));
		close(mfd);
		if (!cases[i].trunc)
			buf[off] ^= 0x5a;
		EXPECT_EQ(-EINVAL, colibri_dev_load(fd, bad, "bad", NULL, NULL))
			TH_LOG("%s", cases[i].what);
		EXPECT_EQ(used0, info_now(fd).mem_used) TH_LOG("%s leaked", cases[i].what);
		EXPECT_EQ(0, info_now(fd).nr_models);
	}
	/* Not a regular file, or not readable. */
	mfd = open("/dev/null", O_RDONLY);
	{
		struct colibri_load l = { .size = sizeof(l), .fd = mfd };

		EXPECT_EQ(-1, ioctl(fd, COLIBRI_IOC_LOAD, &l));
		EXPECT_EQ(EBADF, errno);
		l.fd = -1;
		EXPECT_EQ(-1, ioctl(fd, COLIBRI_IOC_LOAD, &l));
		EXPECT_EQ(EBADF, errno);
	}
	close(mfd);
	unlink(bad);
	free(buf);
	close(fd);
}

/* Everything /dev/kmsg has after its current end, as one string. */
static char *kmsg_since(int kfd)
{
	size_t cap = 1 << 16, len = 0;
	char *all = calloc(1, cap), rec[8192];
	ssize_t n;

	while (all && (n = read(kfd, rec, sizeof(rec) - 1)) > 0 && len + n + 1 < cap) {
		memcpy(all + len, rec, n);
		len += n;
	}
	return all;
}

/*
 * The first tensor of type @dt in fixture @fx with @n bytes at @at of its
 * block 3 set to @bytes (a scale that is not finite), the checksums made
 * right again: refused (-EINVAL), nothing kept, and dmesg names the tensor,
 * its type and the block.
 */
static void bad_scale_refused(struct __test_metadata *_metadata, const char *fx, uint32_t want,
			      uint32_t bb, uint32_t at, const unsigned char *bytes, uint32_t nb)
{
	char path[4096], bad[] = "/tmp/badscale.colibri", *log, needle[128];
	unsigned long long used0;
	uint32_t n, i, dt, crc;
	uint64_t off = 0, size = 0, data;
	int fd = colibri_dev_open(), mfd, kfd, found = -1;
	unsigned char *buf;
	struct stat st;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture(fx, path, sizeof(path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
	ASSERT_EQ(0, stat(path, &st));
	buf = malloc(st.st_size);
	mfd = open(path, O_RDONLY);
	ASSERT_EQ(st.st_size, read(mfd, buf, st.st_size));
	close(mfd);
	memcpy(&n, buf + 40, 4);
	memcpy(&data, buf + 64, 8);
	for (i = 0; i < n && found < 0; i++) {
		memcpy(&dt, buf + 512 + 64 * i + 12, 4);
		if (dt == want) {
			memcpy(&off, buf + 512 + 64 * i + 24, 8);
			memcpy(&size, buf + 512 + 64 * i + 32, 8);
			found = (int)i;
		}
	}
	ASSERT_LE(0, found) TH_LOG("no %s tensor in %s", cb_dtype_name(want), path);
	ASSERT_LE(4 * bb, size);
	/* block 3's scale, then the tensor's and the header's checksums again */
	memcpy(buf + data + off + 3 * bb + at, bytes, nb);
	crc = cb_crc32c(0, buf + data + off, size);
	memcpy(buf + 512 + 64 * found + 40, &crc, 4);
	memset(buf + 108, 0, 4);
	crc = cb_crc32c(0, buf, 512 + 64 * (size_t)n);
	memcpy(buf + 108, &crc, 4);
	mfd = open(bad, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(st.st_size, write(mfd, buf, st.st_size));
	close(mfd);

	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kfd);
	lseek(kfd, 0, SEEK_END);
	used0 = info_now(fd).mem_used;
	EXPECT_EQ(-EINVAL, colibri_dev_load(fd, bad, "bad", NULL, NULL));
	EXPECT_EQ(used0, info_now(fd).mem_used);
	EXPECT_EQ(0, info_now(fd).nr_models);
	log = kmsg_since(kfd);
	ASSERT_NE(NULL, log);
	snprintf(needle, sizeof(needle), "tensor %d (", found);
	EXPECT_NE(NULL, strstr(log, needle)) TH_LOG("dmesg: %s", log);
	snprintf(needle, sizeof(needle), "%s block 3 has a scale that is not finite",
		 cb_dtype_name(want));
	EXPECT_NE(NULL, strstr(log, needle)) TH_LOG("dmesg: %s", log);
	free(log);
	close(kfd);
	unlink(bad);
	free(buf);
	close(fd);
}

/* A q4_K block whose d is +inf. */
TEST(nonfinite_block_scale_is_refused)
{
	static const unsigned char inf[2] = { 0x00, 0x7c };

	bad_scale_refused(_metadata, "mixtral_vmk-q4_k_m", CB_DT_Q4_K, 144, 0, inf, 2);
}

/* An mxfp4 block whose E8M0 exponent is 255, NaN in the OCP format. */
TEST(mxfp4_nan_exponent_is_refused)
{
	static const unsigned char nan_e = 255;

	bad_scale_refused(_metadata, "mixtral_vmk-mxfp4", CB_DT_MXFP4, 17, 0, &nan_e, 1);
}

/* Four processes share one copy of the model and agree with each other. */
TEST(four_processes_share_one_model)
{
	char path[4096];
	int fd = colibri_dev_open(), i, st, pfd[2];
	unsigned long long used_model, used_all, sess_bytes = 0, eng_bytes;
	pid_t pids[4];
	float *ref;
	struct colibri_attach a;
	uint32_t toks[N_TOK];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-q8_0", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "shared", NULL, NULL));
	used_model = info_now(fd).mem_used;
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(fd).isa_level), 1);
	{
		int s = colibri_dev_open();

		ASSERT_EQ(0, colibri_dev_attach(s, "shared", 64, 0, &a));
		sess_bytes = a.bytes;
		close(s);
	}
	ref = calloc(a.vocab_size, sizeof(float));
	test_tokens(toks, N_TOK, a.vocab_size, 99);
	ASSERT_EQ(0, user_logits(path, toks, N_TOK, ref, 64));
	ASSERT_EQ(0, pipe(pfd));
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			int s = colibri_dev_open(), r = 0;
			float *kl = calloc(a.vocab_size, sizeof(float));
			char c;

			if (s < 0 || colibri_dev_attach(s, "shared", 64, 0, NULL))
				_exit(20);
			if (write(pfd[1], "a", 1) != 1)
				_exit(21);
			/* All four attached before anyone computes. */
			usleep(300 * 1000);
			for (int rep = 0; rep < 3 && !r; rep++) {
				if (submit(s, toks, N_TOK, COLIBRI_SUBMIT_LOGITS | COLIBRI_SUBMIT_RESET,
					   kl, a.vocab_size, NULL))
					r = 22;
				else if (memcmp(kl, ref, a.vocab_size * sizeof(float)))
					r = 23;
			}
			(void)c;
			_exit(r);
		}
	}
	for (i = 0; i < 4; i++) {
		char c;

		ASSERT_EQ(1, read(pfd[0], &c, 1));
	}
	used_all = info_now(fd).mem_used;
	EXPECT_EQ(4, info_now(fd).nr_sessions);
	/* Four slots of one shared engine (when batch_slots allows). */
	eng_bytes = vm_model_attr("shared", "shared_bytes");
	EXPECT_EQ(vm_modparam("batch_slots") >= 4 ? 4 : 0, vm_model_attr("shared", "shared_sessions"));
	/*
	 * The model once, the engine once, and four sessions whose io
	 * buffers (their ATTACH.bytes on a shared engine) are not pinned:
	 * no copy of the weights.  Private engines (batch_slots < 4) pin
	 * their own KV caches on top.
	 */
	if (vm_modparam("batch_slots") >= 4) {
		EXPECT_EQ(used_model + eng_bytes, used_all)
			TH_LOG("model %llu, engine %llu, session %llu, all %llu", used_model,
			       eng_bytes, sess_bytes, used_all);
	} else {
		EXPECT_LT(used_model + eng_bytes, used_all);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("child %d", i);
	}
	EXPECT_EQ(used_model, info_now(fd).mem_used);
	EXPECT_EQ(0, colibri_dev_unload(fd, "shared", 0));
	free(ref);
	close(fd);
}

static void on_alarm(int sig)
{
}

/* A signal interrupts a submit; the session then works again (reset). */
TEST(signal_mid_request_then_session_recovers)
{
	char path[4096];
	int fd = colibri_dev_open(), s, interrupted = 0;
	struct colibri_attach a;
	struct sigaction sa = { .sa_handler = on_alarm };
	uint32_t *toks;
	struct colibri_submit sub;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "sig", NULL, NULL));
	s = colibri_dev_open();
	ASSERT_EQ(0, colibri_dev_attach(s, "sig", 2048, 0, &a));
	toks = calloc(2048, sizeof(*toks));
	test_tokens(toks, 2048, a.vocab_size, 5);
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: the call sees EINTR */
	for (int i = 0; i < 5 && !interrupted; i++) {
		ualarm(20 * 1000, 0);
		if (submit(s, toks, 2048, COLIBRI_SUBMIT_RESET, NULL, 0, NULL) == -EINTR)
			interrupted = 1;
		ualarm(0, 0);
	}
	EXPECT_EQ(1, interrupted) TH_LOG("a 2048-token prefill was never interrupted");
	/* The next call waits out the cancelled one and starts afresh. */
	ASSERT_EQ(0, submit(s, toks, 3, 0, NULL, 0, &sub));
	EXPECT_EQ(3, sub.n_past);
	close(s);
	EXPECT_EQ(0, colibri_dev_unload(fd, "sig", 1));
	free(toks);
	close(fd);
}

/* kill -9 mid-request: nothing leaks, nothing writes into the dead. */
TEST(kill_mid_request_releases_everything)
{
	char path[4096];
	int fd = colibri_dev_open(), pfd[2];
	unsigned long long used0;
	pid_t pid;
	int st;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "kill", NULL, NULL));
	used0 = info_now(fd).mem_used;
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int s = colibri_dev_open();
		struct colibri_attach a;
		uint32_t *toks = calloc(2048, sizeof(*toks));

		if (s < 0 || colibri_dev_attach(s, "kill", 2048, 0, &a))
			_exit(30);
		test_tokens(toks, 2048, a.vocab_size, 3);
		if (write(pfd[1], "a", 1) != 1)
			_exit(31);
		for (;;)
			submit(s, toks, 2048, COLIBRI_SUBMIT_RESET, NULL, 0, NULL);
	}
	{
		char c;

		ASSERT_EQ(1, read(pfd[0], &c, 1));
	}
	usleep(50 * 1000);
	EXPECT_EQ(1, info_now(fd).nr_sessions);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	/* The scheduler finishes or drops the orphaned request, then frees. */
	for (int i = 0; i < 100 && info_now(fd).nr_sessions; i++)
		usleep(20 * 1000);
	EXPECT_EQ(0, info_now(fd).nr_sessions);
	EXPECT_EQ(used0, info_now(fd).mem_used);
	EXPECT_EQ(0, colibri_dev_unload(fd, "kill", 0));
	close(fd);
}

TEST(session_limit_is_enospc)
{
	char path[4096];
	int fd = colibri_dev_open(), n = 0, fds[80];
	long max = 0;
	FILE *f = fopen("/sys/module/colibri/parameters/max_sessions", "r");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%ld", &max));
	fclose(f);
	ASSERT_GE(78, max);
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "lim", NULL, NULL));
	for (n = 0; n < max; n++) {
		fds[n] = colibri_dev_open();
		ASSERT_EQ(0, colibri_dev_attach(fds[n], "lim", 16, 1, NULL)) TH_LOG("session %d", n);
	}
	fds[n] = colibri_dev_open();
	EXPECT_EQ(-ENOSPC, colibri_dev_attach(fds[n], "lim", 16, 1, NULL));
	close(fds[n]);
	while (n--)
		close(fds[n]);
	EXPECT_EQ(0, info_now(fd).nr_sessions);
	EXPECT_EQ(0, colibri_dev_unload(fd, "lim", 0));
	EXPECT_EQ(0, info_now(fd).mem_used);
	close(fd);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_offload.c - routed experts on another executor (experts_submit /
 * experts_wait in struct cb_exec, struct cb_expert_task, cb_expert_ffn()).
 *
 * What it proves: whoever computes a routed expert (the CPU, a host
 * executor that uses cb_expert_ffn(), a host that takes a task and gives
 * it back), every logit is bit-identical to the engine without a host
 * executor, at every ISA level this CPU runs; the tasks the engine offers
 * describe the routing exactly; errors of submit and wait abort the
 * forward with their value; an abort while the host holds tasks still
 * waits for them; cb_expert_ffn() refuses bad shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cb_engine.h"
#include "ops/cb_ops.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "util/host.h"
#include "colibri_format.h"

/* ---- small random models ---------------------------------------------- */

#define VOCAB 61
#define MAXB 16
#define NSEQ 2
#define MAXCTX 32

/* what every model here shares: 3 layers, 4 heads (2 kv) of 16, dense FFN 64 */
#define SHAPE								\
	.vocab = VOCAB, .n_layers = 3, .n_heads = 4, .n_kv_heads = 2,	\
	.head_dim = 16, .dense_ffn = 64, .scale = 0.25f, .router_scale = 0.5f

static const struct cb_tm_spec specs[] = {
	/*
	 * Qwen2-MoE: biases, shared expert with sigmoid gate, a dense layer;
	 * F = 48 is no whole number of blocks: the f32-only path
	 */
	{ SHAPE, .name = "qwen2moe-f32", .arch = COLIBRI_ARCH_QWEN2_MOE, .hidden = 64, .ffn = 48,
	  .n_exp = 8, .top_k = 3, .shared_ffn = 64, .shared_gate = 1, .qkv_bias = 1,
	  .dense_layer = 2, .dt = CB_DT_F32 },
	/* Mixtral: renormalised top-2 */
	{ SHAPE, .name = "mixtral-q8_0", .arch = COLIBRI_ARCH_MIXTRAL, .hidden = 64, .ffn = 64,
	  .n_exp = 8, .top_k = 2, .norm_topk = 1, .dt = CB_DT_Q8_0 },
	/* OLMoE: whole-projection q/k norm, 16 experts, top-4 */
	{ SHAPE, .name = "olmoe-q4_0", .arch = COLIBRI_ARCH_OLMOE, .hidden = 64, .ffn = 32,
	  .n_exp = 16, .top_k = 4, .qk_norm = CB_QK_NORM_FULL, .dt = CB_DT_Q4_0 },
	/* Qwen3-MoE with mixed expert dtypes: both activation forms at once */
	{ SHAPE, .name = "qwen3moe-mixed", .arch = COLIBRI_ARCH_QWEN3_MOE, .hidden = 64, .ffn = 64,
	  .n_exp = 8, .top_k = 2, .norm_topk = 1, .qk_norm = CB_QK_NORM_HEAD,
	  .dt = CB_DT_BF16, .own_expert_dt = 1, .dt_gate = CB_DT_Q8_0, .dt_up = CB_DT_F16,
	  .dt_down = CB_DT_Q4_0 },
	/* Qwen2-MoE with a q8_0 shared expert */
	{ SHAPE, .name = "qwen2moe-q8_0", .arch = COLIBRI_ARCH_QWEN2_MOE, .hidden = 64, .ffn = 32,
	  .n_exp = 8, .top_k = 2, .shared_ffn = 32, .shared_gate = 1, .qkv_bias = 1,
	  .dt = CB_DT_Q8_0 },
};

#define NSPEC ((int)CB_ARRAY_SIZE(specs))
static struct cb_tm_model models[NSPEC];

/* ---- the test host's expert executor ---------------------------------- */

enum mode {
	TAKE_ODD,	/* every other task, computed in wait() */
	TAKE_ALL,	/* every task, computed in wait() */
	GIVE_BACK,	/* take all, compute half, give the rest back in wait() */
	TAKE_NONE,	/* submit takes nothing: wait() must not be called */
	FAIL_SUBMIT,	/* submit returns an error */
	FAIL_WAIT,	/* take some, wait returns an error */
};

static int yields_left;		/* the cancel test's yield() countdown */

#define SENTINEL 0x7fc0dead	/* a NaN: no computed value has these bits */

static struct {
	enum mode mode;
	int level;		/* ISA level cb_expert_ffn runs at */
	const struct cb_tm_model *m;
	cb_u32 batch_tokens;	/* n_tokens of the forward being run */
	int submits, waits, taken, done, given_back, bad, wait_pending;
	int waits_after_cancel;	/* waits called once yield() said stop */
	int expected_layers;	/* MoE layers per forward */
	void *scratch;
	char why[200];
} h;

static void host_bad(const char *fmt, int a, int b)
{
	if (!h.bad++)
		snprintf(h.why, sizeof(h.why), fmt, a, b);
}

/* (e): the tasks describe the routing of one layer, in expert order */
static void check_tasks(struct cb_expert_task *tk, int n)
{
	cb_u32 sum = 0, j;
	int i;

	if (n < 1 || n > (int)h.m->cfg.n_experts)
		host_bad("%d tasks (%d experts)", n, (int)h.m->cfg.n_experts);
	for (i = 0; i < n; i++) {
		if (tk[i].layer != tk[0].layer || !cb_layer_is_moe(&h.m->cfg, tk[i].layer))
			host_bad("task %d: layer %d", i, (int)tk[i].layer);
		if (i && tk[i].expert <= tk[i - 1].expert)
			host_bad("task %d: expert %d not after the previous", i,
				 (int)tk[i].expert);
		if (tk[i].expert >= h.m->cfg.n_experts ||
		    tk[i].w != &h.m->layers[tk[i].layer].experts[tk[i].expert])
			host_bad("task %d: expert %d / weights", i, (int)tk[i].expert);
		if (tk[i].state != CB_TASK_CPU)
			host_bad("task %d offered in state %d", i, (int)tk[i].state);
		if (!tk[i].n_tokens || tk[i].n_tokens > h.batch_tokens || !tk[i].x || !tk[i].y)
			host_bad("task %d: %d tokens", i, (int)tk[i].n_tokens);
		for (j = 0; j < tk[i].n_tokens; j++)
			if (tk[i].tokens[j] >= h.batch_tokens ||
			    (j && tk[i].tokens[j] <= tk[i].tokens[j - 1]))
				host_bad("task %d: token index at %d", i, (int)j);
		sum += tk[i].n_tokens;
	}
	if (sum != h.batch_tokens * h.m->cfg.top_k)
		host_bad("%d rows offered for %d (token, expert) pairs", (int)sum,
			 (int)(h.batch_tokens * h.m->cfg.top_k));
}

static void fill(void *y, cb_u32 n)
{
	cb_u32 *p = y, i, v = SENTINEL;

	for (i = 0; i < n; i++)
		p[i] = v;
}

static int has_sentinel(const void *y, cb_u32 n)
{
	const cb_u32 *p = y;
	cb_u32 i;

	for (i = 0; i < n; i++)
		if (p[i] != SENTINEL)
			return 0;
	return 1;
}

static int host_submit(struct cb_exec *ex, struct cb_expert_task *tk, int n)
{
	cb_u32 H = h.m->cfg.hidden;
	int i;

	(void)ex;
	h.submits++;
	check_tasks(tk, n);
	if (h.wait_pending)
		host_bad("submit while %d tasks pending", h.wait_pending, 0);
	if (h.mode == FAIL_SUBMIT)
		return -5;	/* -EIO */
	for (i = 0; i < n; i++) {
		int take = h.mode == TAKE_ALL || h.mode == GIVE_BACK ||
			   ((h.mode == TAKE_ODD || h.mode == FAIL_WAIT) && i % 2);

		if (!take)
			continue;
		tk[i].state = CB_TASK_TAKEN;
		/* the engine must leave a taken task's y alone */
		fill(tk[i].y, tk[i].n_tokens * H);
		h.taken++;
		h.wait_pending++;
	}
	return 0;
}

static int host_wait(struct cb_exec *ex, struct cb_expert_task *tk, int n)
{
	cb_u32 H = h.m->cfg.hidden;
	int i, k = 0, r;

	(void)ex;
	h.waits++;
	h.waits_after_cancel += yields_left <= 0;
	if (!h.wait_pending)
		host_bad("wait without a taken task", 0, 0);
	h.wait_pending = 0;
	if (h.mode == FAIL_WAIT)
		return -7;
	for (i = 0; i < n; i++) {
		if (tk[i].state != CB_TASK_TAKEN) {
			if (tk[i].state != CB_TASK_CPU)
				host_bad("task %d in state %d at wait", i, (int)tk[i].state);
			continue;
		}
		if (!has_sentinel(tk[i].y, tk[i].n_tokens * H))
			host_bad("the CPU wrote taken task %d (expert %d)", i,
				 (int)tk[i].expert);
		if (h.mode == GIVE_BACK && k++ % 2) {
			/* failed half-way: garbage in y, the engine must redo it */
			tk[i].state = CB_TASK_CPU;
			h.given_back++;
			continue;
		}
		r = cb_expert_ffn(h.level, tk[i].w, tk[i].n_tokens, tk[i].x, tk[i].y,
				  h.scratch);
		if (r)
			host_bad("cb_expert_ffn: %d", r, 0);
		tk[i].state = CB_TASK_DONE;
		h.done++;
	}
	return 0;
}

/* ---- running the engine ----------------------------------------------- */

struct inst {
	struct cb_engine *e;
	void *arena;
};

static int make_inst(struct inst *in, const struct cb_tm_model *m, int level)
{
	struct cb_engine_params p = { MAXB, NSEQ, MAXCTX, level, 0 };
	cb_u64 size = cb_engine_arena_size(&m->cfg, &p);

	if (!size || posix_memalign(&in->arena, 64, size))
		return -1;
	return cb_engine_init(&in->e, &m->cfg, &m->w, &p, in->arena, size);
}

static void free_inst(struct inst *in)
{
	free(in->arena);
}

static const cb_u32 prompts[NSEQ][8] = {
	{ 1, 5, 9, 33, 2, 60, 40, 17 },
	{ 7, 7, 12, 50, 3, 0, 44, 21 },
};

/*
 * Prefill (7 + 6 tokens in one batch), then a decode step of both slots,
 * then one of slot 0 alone.  Logits of every token, in batch order.
 */
#define NLOGIT_ROWS (13 + 2 + 1)

static int run(struct inst *in, struct cb_exec *ex, float *out)
{
	static const int plan[][NSEQ] = { { 7, 6 }, { 1, 1 }, { 1, 0 } };
	int done[NSEQ] = { 0 }, st, r, row = 0;

	for (st = 0; st < (int)CB_ARRAY_SIZE(plan); st++) {
		cb_u32 tok[MAXB], seq[MAXB], pos[MAXB], n;
		struct cb_batch b = { .tokens = tok, .seq = seq, .pos = pos,
				      .logits = out + (size_t)row * VOCAB };

		n = cb_tm_plan_step(plan[st], NSEQ, prompts[0], CB_ARRAY_SIZE(prompts[0]), done,
				    tok, seq, pos);
		b.n_tokens = n;
		h.batch_tokens = n;
		r = cb_engine_forward(in->e, ex, &b);
		if (r)
			return r;
		row += n;
	}
	return 0;
}

static int moe_layers(const struct cb_tm_model *m)
{
	int l, n = 0;

	for (l = 0; l < (int)m->cfg.n_layers; l++)
		n += cb_layer_is_moe(&m->cfg, l);
	return n;
}

static void host_reset(const struct cb_tm_model *m, enum mode md, int level)
{
	void *scratch = h.scratch;

	memset(&h, 0, sizeof(h));
	h.scratch = scratch;
	h.m = m;
	h.mode = md;
	h.level = level;
	h.expected_layers = moe_layers(m);
}

static const char *const mode_names[] = {
	"take-odd", "take-all", "give-back", "take-none", "fail-submit", "fail-wait",
};

/* logits with the hook in @mode vs without it, for every model, at @level */
static void offload_identical(enum mode md, int level)
{
	static float ref[NLOGIT_ROWS * VOCAB], got[NLOGIT_ROWS * VOCAB];
	struct cb_exec *ex = cb_host_exec_create(2);
	int i, r, k;

	CB_CHECK(ex, "no exec");
	if (!ex)
		return;
	for (i = 0; i < NSPEC; i++) {
		const struct cb_tm_model *m = &models[i];
		struct inst a, b;

		CB_CHECK(make_inst(&a, m, level) == 0 && make_inst(&b, m, level) == 0,
			 "%s: init", m->sp->name);
		ex->experts_submit = NULL;
		ex->experts_wait = NULL;
		r = run(&a, ex, ref);
		CB_CHECK(r == 0, "%s: plain forward %d", m->sp->name, r);

		host_reset(m, md, level);
		ex->experts_submit = host_submit;
		ex->experts_wait = host_wait;
		memset(got, 0xff, sizeof(got));
		r = run(&b, ex, got);
		ex->experts_submit = NULL;
		ex->experts_wait = NULL;
		CB_CHECK(r == 0, "%s: forward with %s host %d", m->sp->name, mode_names[md], r);
		CB_CHECK(!h.bad, "%s %s: %d protocol problems, first: %s", m->sp->name,
			 mode_names[md], h.bad, h.why);
		/* three forwards, one submit per MoE layer each */
		CB_CHECK(h.submits == 3 * h.expected_layers, "%s: %d submits, expected %d",
			 m->sp->name, h.submits, 3 * h.expected_layers);
		if (md == TAKE_NONE)
			CB_CHECK(h.waits == 0 && h.taken == 0, "%s: %d waits with nothing taken",
				 m->sp->name, h.waits);
		else
			CB_CHECK(h.taken > 0 && h.waits > 0 &&
				 h.done + h.given_back == h.taken,
				 "%s: taken %d, done %d, given back %d, waits %d", m->sp->name,
				 h.taken, h.done, h.given_back, h.waits);
		if (md == GIVE_BACK)
			CB_CHECK(h.given_back > 0, "%s: nothing given back", m->sp->name);
		for (k = 0; k < NLOGIT_ROWS * VOCAB; k++)
			if (memcmp(&ref[k], &got[k], 4)) {
				CB_CHECK(0, "%s %s level %d: logit %d (row %d): %.9g vs %.9g",
					 m->sp->name, mode_names[md], level, k, k / VOCAB,
					 ref[k], got[k]);
				break;
			}
		free_inst(&a);
		free_inst(&b);
	}
	cb_host_exec_destroy(ex);
}

static int best_level(void)
{
	return cb_isa_select(CB_ISA__COUNT - 1)->level;
}

/* One forward of @b with the host freshly reset to @md. */
static int forward_as(struct inst *in, struct cb_exec *ex, struct cb_batch *b,
		      const struct cb_tm_model *m, enum mode md)
{
	host_reset(m, md, best_level());
	h.batch_tokens = b->n_tokens;
	return cb_engine_forward(in->e, ex, b);
}

/* (a) */
static void test_every_other_expert_offloaded_is_bit_identical(void)
{
	offload_identical(TAKE_ODD, best_level());
}

/* (b) */
static void test_tasks_given_back_are_recomputed_bit_identical(void)
{
	offload_identical(GIVE_BACK, best_level());
}

/* (c) */
static void test_every_expert_offloaded_is_bit_identical(void)
{
	offload_identical(TAKE_ALL, best_level());
}

static void test_nothing_taken_means_no_wait(void)
{
	offload_identical(TAKE_NONE, best_level());
}

/* (g): cb_expert_ffn at level L equals the engine at level L */
static void test_every_isa_level_bit_identical(void)
{
	int lvl, n = 0;

	for (lvl = CB_ISA_SCALAR; lvl < CB_ISA__COUNT; lvl++) {
		if (!cb_isa_get(lvl)) {
			printf("# ISA level %d not available here\n", lvl);
			continue;
		}
		printf("# ISA level %d (%s)\n", lvl, cb_isa_names[cb_isa_get(lvl)->level]);
		offload_identical(TAKE_ODD, lvl);
		offload_identical(GIVE_BACK, lvl);
		offload_identical(TAKE_ALL, lvl);
		n++;
	}
	CB_CHECK(n >= 1, "no ISA level at all");
}

/* (d) */
static void test_submit_and_wait_errors_abort(void)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	const struct cb_tm_model *m = &models[1];
	cb_u32 tok[4] = { 3, 4, 5, 6 }, seq[4] = { 0, 0, 0, 0 }, pos[4] = { 0, 1, 2, 3 };
	float lg[4 * VOCAB];
	struct cb_batch b = { .n_tokens = 4, .tokens = tok, .seq = seq, .pos = pos,
			      .logits = lg };
	struct inst in;
	int r;

	CB_CHECK(make_inst(&in, m, best_level()) == 0, "init");
	ex->experts_submit = host_submit;
	ex->experts_wait = host_wait;
	r = forward_as(&in, ex, &b, m, FAIL_SUBMIT);
	CB_CHECK(r == -5, "submit error: forward returned %d", r);
	CB_CHECK(h.submits == 1 && h.waits == 0, "%d submits, %d waits", h.submits, h.waits);
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 0, "aborted forward committed");

	r = forward_as(&in, ex, &b, m, FAIL_WAIT);
	CB_CHECK(r == -7, "wait error: forward returned %d", r);
	CB_CHECK(h.submits == 1 && h.waits == 1, "%d submits, %d waits", h.submits, h.waits);
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 0, "aborted forward committed");

	r = forward_as(&in, ex, &b, m, TAKE_ODD);
	CB_CHECK(r == 0 && cb_engine_seq_len(in.e, 0) == 4, "forward after errors: %d", r);
	CB_CHECK(!h.bad, "protocol: %s", h.why);

	/* submit without wait cannot work: refused up front */
	ex->experts_wait = NULL;
	r = cb_engine_forward(in.e, ex, &b);
	CB_CHECK(r == -CB_EINVAL, "submit without wait: %d", r);
	ex->experts_submit = NULL;
	free_inst(&in);
	cb_host_exec_destroy(ex);
}

static int yield_count(struct cb_exec *ex)
{
	(void)ex;
	return --yields_left > 0 ? 0 : -4;	/* -EINTR */
}

/*
 * A cancel (yield) between submit and wait still waits: the host may be
 * using x and y, which live in the engine's scratch.  Cancel at every
 * yield of the first MoE layer in turn.
 */
static void test_abort_while_taken_still_waits(void)
{
	struct cb_exec *ex = cb_host_exec_create(1);
	const struct cb_tm_model *m = &models[1];
	cb_u32 tok[4] = { 3, 4, 5, 6 }, seq[4] = { 0, 0, 0, 0 }, pos[4] = { 0, 1, 2, 3 };
	float lg[4 * VOCAB];
	struct cb_batch b = { .n_tokens = 4, .tokens = tok, .seq = seq, .pos = pos,
			      .logits = lg };
	struct inst in;
	int n, r, hit = 0;

	CB_CHECK(make_inst(&in, m, best_level()) == 0, "init");
	ex->experts_submit = host_submit;
	ex->experts_wait = host_wait;
	ex->yield = yield_count;
	for (n = 1; n < 40; n++) {
		yields_left = n;
		r = forward_as(&in, ex, &b, m, TAKE_ODD);
		CB_CHECK(r == -4, "cancel at yield %d: forward returned %d", n, r);
		CB_CHECK(h.wait_pending == 0, "cancel at yield %d: returned with %d tasks held",
			 n, h.wait_pending);
		CB_CHECK(!h.bad, "protocol: %s", h.why);
		hit += h.waits_after_cancel;
	}
	CB_CHECK(hit > 0, "no cancel fell between a submit and its wait");
	ex->yield = NULL;
	ex->experts_submit = NULL;
	ex->experts_wait = NULL;
	free_inst(&in);
	cb_host_exec_destroy(ex);
}

/* (f) */
static void test_expert_ffn_rejects_bad_shapes(void)
{
	const struct cb_tm_model *m = &models[1];	/* q8_0, H 64, F 64 */
	struct cb_expert_weights w = m->experts[0][0], bad;
	static float x[4 * 64], y[4 * 64];
	cb_u64 size = cb_expert_scratch_size(64, 64, 4);
	char *s;

	CB_CHECK(size > 0, "size 0 for a valid shape");
	CB_CHECK(cb_expert_scratch_size(64, 64, 1) <= size &&
		 cb_expert_scratch_size(64, 64, 3) <= size, "scratch not monotonic in n");
	CB_CHECK(cb_expert_scratch_size(0, 64, 4) == 0 && cb_expert_scratch_size(64, 0, 4) == 0 &&
		 cb_expert_scratch_size(64, 64, 0) == 0, "zero size accepted");
	CB_CHECK(cb_expert_scratch_size(CB_MAX_HIDDEN + 1, 64, 4) == 0 &&
		 cb_expert_scratch_size(64, CB_MAX_FFN + 1, 4) == 0, "huge shape accepted");
	CB_CHECK(cb_expert_scratch_size(CB_MAX_HIDDEN, CB_MAX_FFN, 0xffffffffu) > (1ull << 50),
		 "largest shape wrapped around");
	if (posix_memalign((void **)&s, 64, size + 64))
		return;
	CB_CHECK(cb_expert_ffn(2, &w, 4, x, y, s) == 0, "valid call refused");

	bad = w;
	bad.gate.rows = 63;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "gate rows != up rows");
	bad = w;
	bad.up.cols = 32;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "up cols != hidden");
	bad = w;
	bad.down.rows = 32;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "down rows != hidden");
	bad = w;
	bad.down.cols = 32;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "down cols != ffn");
	/* a block type needs whole blocks per row */
	bad = w;
	bad.gate.cols = 48;
	bad.up.cols = 48;
	bad.down.rows = 48;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "q8_0 with 48 columns");
	bad = w;
	bad.up.dtype = CB_DT__COUNT;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "unknown dtype");
	bad = w;
	bad.down.data = NULL;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "absent tensor");
	bad = w;
	bad.gate.rows = 0;
	bad.up.rows = 0;
	bad.down.cols = 0;
	CB_CHECK(cb_expert_ffn(2, &bad, 4, x, y, s) == -CB_EINVAL, "empty expert");
	CB_CHECK(cb_expert_ffn(2, &w, 0, x, y, s) == -CB_EINVAL, "n == 0");
	CB_CHECK(cb_expert_ffn(2, &w, 4, x, y, s + 8) == -CB_EINVAL, "misaligned scratch");
	CB_CHECK(cb_expert_ffn(2, &w, 4, NULL, y, s) == -CB_EINVAL, "NULL x");
	CB_CHECK(cb_expert_ffn(2, &w, 4, x, NULL, s) == -CB_EINVAL, "NULL y");
	CB_CHECK(cb_expert_ffn(2, NULL, 4, x, y, s) == -CB_EINVAL, "NULL weights");
	CB_CHECK(cb_expert_ffn(2, &w, 4, x, y, NULL) == -CB_EINVAL, "NULL scratch");
	free(s);
}

/*
 * cb_expert_ffn over n rows equals n calls of one row: a host may split
 * a task however it likes (and its scratch bound follows max_tokens).
 */
static void test_expert_ffn_rows_independent(void)
{
	int i, lvl, r, t;

	for (i = 0; i < NSPEC; i++) {
		const struct cb_tm_model *m = &models[i];
		cb_u32 H = m->cfg.hidden;
		const struct cb_expert_weights *w = &m->experts[0][1];
		static float x[MAXB * 64], y1[MAXB * 64], y2[MAXB * 64];
		void *s;

		if (!cb_layer_is_moe(&m->cfg, 0))
			w = &m->experts[2][1];
		if (posix_memalign(&s, 64, cb_expert_scratch_size(H, m->cfg.expert_ffn, MAXB)))
			return;
		for (t = 0; t < (int)(MAXB * H); t++)
			x[t] = cb_tm_frand();
		for (lvl = 0; lvl < CB_ISA__COUNT; lvl++) {
			if (!cb_isa_get(lvl))
				continue;
			r = cb_expert_ffn(lvl, w, MAXB, x, y1, s);
			CB_CHECK(r == 0, "%s: %d", m->sp->name, r);
			for (t = 0; t < MAXB; t++)
				r |= cb_expert_ffn(lvl, w, 1, x + t * H, y2 + t * H, s);
			CB_CHECK(r == 0 && !memcmp(y1, y2, MAXB * H * sizeof(float)),
				 "%s level %d: one call of %d rows != %d calls of one", m->sp->name,
				 lvl, MAXB, MAXB);
		}
		free(s);
	}
}

int main(void)
{
	int i;

	cb_tm_seed(0x9e3779b97f4a7c15ull);
	for (i = 0; i < NSPEC; i++) {
		cb_tm_build(&models[i], &specs[i]);
		if (cb_engine_check_model(&models[i].cfg, &models[i].w)) {
			printf("Bail out! model %s does not validate\n", specs[i].name);
			return 1;
		}
	}
	/* one scratch for every model's experts: the largest shape */
	h.scratch = aligned_alloc(64, cb_expert_scratch_size(64, 64, MAXB));
	CB_RUN(test_every_other_expert_offloaded_is_bit_identical);
	CB_RUN(test_tasks_given_back_are_recomputed_bit_identical);
	CB_RUN(test_every_expert_offloaded_is_bit_identical);
	CB_RUN(test_nothing_taken_means_no_wait);
	CB_RUN(test_every_isa_level_bit_identical);
	CB_RUN(test_submit_and_wait_errors_abort);
	CB_RUN(test_abort_while_taken_still_waits);
	CB_RUN(test_expert_ffn_rejects_bad_shapes);
	CB_RUN(test_expert_ffn_rows_independent);
	free(h.scratch);
	return cb_test_done();
}

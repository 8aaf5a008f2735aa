// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_gpt_oss.c - GPT-OSS in the engine and the file format: the config
 * check's refusals, the sliding layers' KV ring (its size, and that a
 * ring of any size gives the same bits as one that never wraps), rewinds
 * the ring can and cannot serve, and the header words and roles of a
 * GPT-OSS .colibri file.  The numerics against the HF reference are
 * tests/ref/run's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cb_engine_priv.h"
#include "arch/cb_gpt_oss.h"
#include "format/cb_role.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "model/cbfile.h"
#include "util/host.h"
#include "colibri_format.h"

#define W 8		/* the window */
#define NPOS 40		/* positions run: the ring of 8 wraps */

static const struct cb_tm_spec spec = {
	.name = "gpt_oss", .arch = COLIBRI_ARCH_GPT_OSS, .vocab = 97, .hidden = 64,
	.n_layers = 3, .n_heads = 4, .n_kv_heads = 2, .head_dim = 32, .ffn = 32,
	.n_exp = 4, .top_k = 2, .norm_topk = 1, .qkv_bias = 1, .dt = CB_DT_F32,
	.scale = 0.3f, .router_scale = 1.0f,
};

static struct cb_tm_model tm;

/* layers 0 and 2 slide, 1 sees everything */
static void oss_config(struct cb_model_config *c)
{
	c->oss.sliding_window = W;
	c->oss.swiglu_limit_bits = cb_tm_bits(0.5f);	/* low: the clamps act */
	c->oss.swiglu_alpha_bits = cb_tm_bits(1.702f);
	c->oss.sliding_layers[0] = 5;
}

static void build(void)
{
	int l;

	cb_tm_seed(7);
	cb_tm_build(&tm, &spec);
	oss_config(&tm.cfg);
	for (l = 0; l < (int)spec.n_layers; l++) {
		struct cb_gpt_oss_layer *o = &tm.layers[l].oss;

		o->sinks = cb_tm_vec(spec.n_heads, 0.0f, 2.0f);
		o->bo = cb_tm_vec(spec.hidden, 0.0f, 0.1f);
		o->router_bias = cb_tm_vec(spec.n_exp, 0.0f, 0.5f);
		o->gate_bias = cb_tm_mat(spec.n_exp, spec.ffn, 0.1f, CB_DT_F32);
		o->up_bias = cb_tm_mat(spec.n_exp, spec.ffn, 0.1f, CB_DT_F32);
		o->down_bias = cb_tm_mat(spec.n_exp, spec.hidden, 0.1f, CB_DT_F32);
	}
}

static int refused(const struct cb_model_config *c, const char *needle)
{
	char why[CB_FORMAT_WHY_LEN] = "";
	int r = cb_config_check(c, why, sizeof(why));

	if (r != -CB_EINVAL || !strstr(why, needle)) {
		printf("# got %d '%s', want '%s'\n", r, why, needle);
		return 0;
	}
	return 1;
}

static void test_config_refusals(void)
{
	struct cb_model_config c = tm.cfg;

	CB_CHECK(!cb_config_check(&c, NULL, 0), "the test model's config is refused");
	c.oss.sliding_window = c.max_context + 1;
	CB_CHECK(refused(&c, "sliding_window 65 larger than the context"), "window > context");
	c = tm.cfg;
	c.oss.sliding_window = 0;
	CB_CHECK(refused(&c, "sliding_window is 0"), "window 0");
	c = tm.cfg;
	c.oss.sliding_layers[0] |= 1u << 3;
	CB_CHECK(refused(&c, "sliding_layers has bit 3"), "sliding bit past n_layers");
	c = tm.cfg;
	c.oss.swiglu_limit_bits = 0x7f800000u;
	CB_CHECK(refused(&c, "swiglu_limit"), "infinite limit");
	c = tm.cfg;
	c.oss.swiglu_alpha_bits = 0;
	CB_CHECK(refused(&c, "swiglu_alpha"), "alpha 0");
	c = tm.cfg;
	c.qkv_bias = 0;
	CB_CHECK(refused(&c, "qkv_bias"), "no q/k/v bias");
	c = tm.cfg;
	c.oss.reserved = 1;
	CB_CHECK(refused(&c, "gpt_oss reserved"), "reserved word");
	c = tm.cfg;
	c.arch = COLIBRI_ARCH_MIXTRAL;
	CB_CHECK(refused(&c, "set for another arch"),
		 "GPT-OSS words on Mixtral");
}

static void test_missing_tensors(void)
{
	struct cb_layer_weights save = tm.layers[1];

	CB_CHECK(!cb_engine_check_model(&tm.cfg, &tm.w), "good model refused");
	tm.layers[1].oss.sinks.data = NULL;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL, "no sinks accepted");
	tm.layers[1] = save;
	tm.layers[1].oss.down_bias.rows = spec.n_exp - 1;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL,
		 "down_bias of the wrong shape accepted");
	tm.layers[1] = save;
	tm.layers[1].oss.router_bias.dtype = CB_DT_BF16;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL, "bf16 router bias accepted");
	tm.layers[1] = save;
}

/*
 * The KV bytes: a sliding layer's ring is window + max_batch - 1 rows
 * whatever the context; the arena shrinks by exactly the rows it saves.
 */
static void test_ring_size(void)
{
	struct cb_model_config full = tm.cfg;
	struct cb_engine_params p = { .max_batch_tokens = 16, .n_seqs = 3, .max_context = 4096 };
	cb_u64 kvrow = (cb_u64)spec.n_kv_heads * spec.head_dim * sizeof(float) * 2;
	cb_u64 a, b, a2, b2;

	full.max_context = 8192;
	full.oss.sliding_window = 8192;
	full.oss.sliding_layers[0] = 0;	/* every layer full */
	a = cb_engine_arena_size(&full, &p);
	full.oss.sliding_layers[0] = 5;
	full.oss.sliding_window = W;
	b = cb_engine_arena_size(&full, &p);
	CB_CHECK(a && b && a - b == 2ull * 3 * (4096 - (W + 16 - 1)) * kvrow,
		 "ring saves %llu bytes, want %llu", (unsigned long long)(a - b),
		 (unsigned long long)(2ull * 3 * (4096 - (W + 16 - 1)) * kvrow));
	/* twice the context: only the full layer's cache (and the split states) grow */
	p.max_context = 8192;
	a2 = cb_engine_arena_size(&full, &p);
	full.oss.sliding_layers[0] = 0;
	b2 = cb_engine_arena_size(&full, &p);
	CB_CHECK(b2 - a2 == 2ull * 3 * (8192 - (W + 16 - 1)) * kvrow,
		 "at 8192: ring saves %llu", (unsigned long long)(b2 - a2));
	CB_CHECK(cb_gpt_oss_ring_rows(&tm.cfg, 4096, 16) == W + 15 &&
		 cb_gpt_oss_ring_rows(&tm.cfg, 10, 16) == 10, "ring rows");
}

struct inst {
	struct cb_engine *e;
	void *arena;
};

static int inst_new(struct inst *in, cb_u32 max_batch, cb_u32 ctx)
{
	struct cb_engine_params p = { .max_batch_tokens = max_batch, .n_seqs = 2,
				      .max_context = ctx, .chunk_ns = 1 };
	cb_u64 sz = cb_engine_arena_size(&tm.cfg, &p);

	in->arena = sz ? aligned_alloc(64, CB_ALIGN(sz, (cb_u64)64)) : NULL;
	return !in->arena || cb_engine_init(&in->e, &tm.cfg, &tm.w, &p, in->arena, sz);
}

/* Tokens [from, to) of slot @seq, @step at a time; logits of each row into @out. */
static int run(struct inst *in, struct cb_exec *ex, cb_u32 seq, const cb_u32 *toks,
	       cb_u32 from, cb_u32 to, cb_u32 step, float *out)
{
	cb_u32 s[64], pos[64], i, n;
	struct cb_batch b = { 0 };
	int r;

	for (; from < to; from += n) {
		n = CB_MIN(step, to - from);
		for (i = 0; i < n; i++) {
			s[i] = seq;
			pos[i] = from + i;
		}
		b.n_tokens = n;
		b.tokens = toks + from;
		b.seq = s;
		b.pos = pos;
		b.logits = out + (cb_size)from * spec.vocab;
		r = cb_engine_forward(in->e, ex, &b);
		if (r)
			return r;
	}
	return 0;
}

static cb_u32 toks[NPOS];

/*
 * A ring of window + batch - 1 rows (batches of 1, 5 and 16 tokens)
 * against one of the whole context (that never wraps): the same bits.
 */
static void test_ring_equals_unwrapped(void)
{
	static float want[NPOS * 97], got[NPOS * 97];
	struct cb_exec *ex = cb_host_exec_create(2);
	static const cb_u32 steps[] = { 1, 5, 16 };
	struct inst big, small;
	cb_u32 i;

	for (i = 0; i < NPOS; i++)
		toks[i] = (i * 37 + 11) % spec.vocab;
	CB_CHECK(!inst_new(&big, 64, 64), "engine of the whole context");
	CB_CHECK(big.e->ring_rows == 64, "ring of %u rows, want 64", big.e->ring_rows);
	CB_CHECK(!run(&big, ex, 1, toks, 0, NPOS, 40, want), "unwrapped run");
	for (i = 0; i < CB_ARRAY_SIZE(steps); i++) {
		CB_CHECK(!inst_new(&small, steps[i], 64), "ring engine");
		CB_CHECK(small.e->ring_rows == W + steps[i] - 1, "ring of %u rows",
			 small.e->ring_rows);
		memset(got, 0, sizeof(got));
		CB_CHECK(!run(&small, ex, 0, toks, 0, NPOS, steps[i], got), "ring run");
		CB_CHECK(!memcmp(got, want, sizeof(want)),
			 "batches of %u through a ring of %u differ from the unwrapped cache",
			 steps[i], small.e->ring_rows);
		free(small.arena);
	}
	free(big.arena);
	cb_host_exec_destroy(ex);
}

/*
 * Rewinds: back a few positions (still in the ring) gives the first run's
 * logits again; back past what the ring keeps is refused, and after a
 * reset the slot works again.
 */
static void test_rewind(void)
{
	static float want[NPOS * 97], got[NPOS * 97];
	struct cb_exec *ex = cb_host_exec_create(2);
	struct inst in;

	CB_CHECK(!inst_new(&in, 4, 64), "engine");	/* ring of W + 3 = 11 rows */
	CB_CHECK(!run(&in, ex, 0, toks, 0, NPOS, 4, want), "first run");
	/* back 3: positions 29..36 still held (hi 40, ring 11) */
	CB_CHECK(!run(&in, ex, 0, toks, 37, NPOS, 1, got), "rewind by 3 refused");
	CB_CHECK(!memcmp(got + 37 * 97, want + 37 * 97, 3 * 97 * sizeof(float)),
		 "rewound logits differ");
	/* back 10: position 30 needs 23..29, long overwritten */
	CB_CHECK(run(&in, ex, 0, toks, 30, NPOS, 1, got) == -CB_EINVAL,
		 "rewind past the ring accepted");
	CB_CHECK(cb_engine_seq_len(in.e, 0) == NPOS, "a refused batch changed the slot");
	CB_CHECK(!cb_engine_seq_reset(in.e, 0), "reset");
	CB_CHECK(!run(&in, ex, 0, toks, 0, NPOS, 3, got) && !memcmp(got, want, sizeof(want)),
		 "after a reset the slot does not compute the same logits");
	free(in.arena);
	cb_host_exec_destroy(ex);
}

/* A GPT-OSS .colibri: the header's words and the roles 64..69 round trip. */
static void test_file_round_trip(void)
{
	struct cbfile_meta meta = { .name = "oss", .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	char path[] = "/tmp/test_gpt_oss.XXXXXX", err[256];
	struct cbfile_writer *w;
	struct cbfile *f = NULL;
	struct cb_format_slot s;
	cb_u32 i, n, per_layer;
	int fd = mkstemp(path);

	CB_CHECK(fd >= 0, "mkstemp");
	close(fd);
	w = cbfile_writer_begin(path, &tm.cfg, &meta, err, sizeof(err));
	CB_CHECK(w, "writer: %s", err);
	if (!w)
		return;
	n = cbfile_writer_count(w);
	per_layer = 5 + 3 + 1 + 1 + 3 * spec.n_exp + CB_GPT_OSS_ROLES;
	CB_CHECK(n == 3 + spec.n_layers * per_layer, "%u tensors", n);
	CB_CHECK(cb_format_tensor_index(&tm.cfg, COLIBRI_T_ATTN_SINKS, 1, COLIBRI_FILE_NONE) ==
		 3 + per_layer + per_layer - CB_GPT_OSS_ROLES, "index of layer 1's sinks");
	for (i = 0; i < n; i++) {
		cbfile_writer_slot(w, i, &s);
		CB_CHECK(cb_format_tensor_index(&tm.cfg, s.role, s.layer, s.expert) == i,
			 "slot %u (%s) does not index back", i, cb_format_role_name(s.role));
	}
	CB_CHECK(!cbfile_writer_layout(w), "layout");
	for (i = 0; i < n; i++) {
		const struct cb_tensor *t;

		cbfile_writer_slot(w, i, &s);
		t = cb_role_tensor(&tm.w, tm.layers, tm.cfg.n_layers, tm.cfg.n_experts, &s);
		CB_CHECK(t, "slot %u (%s) has no tensor", i, cb_format_role_name(s.role));
		if (!t)
			continue;
		CB_CHECK(!cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
					    cb_dtype_row_bytes(t->dtype, t->cols) * t->rows),
			 "put %s: %s", cb_format_role_name(s.role), cbfile_writer_error(w));
	}
	CB_CHECK(!cbfile_writer_finish(w, err, sizeof(err)), "finish: %s", err);
	f = cbfile_open(path, CBFILE_VERIFY_CRC, err, sizeof(err));
	CB_CHECK(f, "open: %s", err);
	if (f) {
		CB_CHECK(!memcmp(&f->cfg.oss, &tm.cfg.oss, sizeof(tm.cfg.oss)),
			 "ext_gpt_oss did not round trip");
		CB_CHECK(f->cfg.arch == COLIBRI_ARCH_GPT_OSS && f->w.layers[2].oss.sinks.data &&
			 !memcmp(f->w.layers[2].oss.sinks.data, tm.layers[2].oss.sinks.data,
				 spec.n_heads * sizeof(float)), "sinks did not round trip");
		CB_CHECK(!memcmp(f->w.layers[0].oss.down_bias.data, tm.layers[0].oss.down_bias.data,
				 spec.n_exp * spec.hidden * sizeof(float)), "down_bias");
		cbfile_close(f);
	}
	unlink(path);
}

int main(void)
{
	build();
	CB_RUN(test_config_refusals);
	CB_RUN(test_missing_tensors);
	CB_RUN(test_ring_size);
	CB_RUN(test_ring_equals_unwrapped);
	CB_RUN(test_rewind);
	CB_RUN(test_file_round_trip);
	return cb_test_done();
}

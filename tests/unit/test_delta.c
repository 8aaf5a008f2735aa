// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_delta.c - Gated DeltaNet (Qwen3.5-MoE) in the engine and the file
 * format: the config check's refusals and missing tensors, the state's
 * size, that batching, chunking, interleaved slots and the pass's rounds
 * never change a bit, the rules of a slot whose past is one recurrent
 * state (go on where it stopped, or start over; a failed pass leaves the
 * committed state), and the header words and roles of a .colibri file.
 * The numerics against the HF reference are tests/ref/run's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cb_engine_priv.h"
#include "arch/cb_delta.h"
#include "format/cb_role.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "model/cbfile.h"
#include "util/host.h"
#include "colibri_format.h"

#define NPOS 40
#define V 97

/* layers 0 and 1 DeltaNet, layer 2 gated attention (full_interval 3) */
static const struct cb_tm_spec spec = {
	.name = "qwen3_5_moe", .arch = COLIBRI_ARCH_QWEN3_5_MOE, .vocab = V, .hidden = 64,
	.n_layers = 3, .n_heads = 4, .n_kv_heads = 2, .head_dim = 32, .ffn = 32,
	.n_exp = 4, .top_k = 2, .norm_topk = 1, .shared_ffn = 64, .shared_gate = 1,
	.qk_norm = CB_QK_NORM_HEAD, .dt = CB_DT_F32, .scale = 0.3f, .router_scale = 1.0f,
};

static struct cb_tm_model tm;

static void build(void)
{
	struct cb_delta_config *d = &tm.cfg.delta;
	int l, H = (int)spec.hidden, conv, vd;

	cb_tm_seed(11);
	cb_tm_build(&tm, &spec);
	d->k_heads = 2;
	d->v_heads = 4;
	d->k_dim = 16;
	d->v_dim = 16;
	d->conv_kernel = 4;
	d->full_interval = 3;
	tm.cfg.rope_dim = 8;
	conv = (int)cb_delta_conv_dim(&tm.cfg);
	vd = (int)(d->v_heads * d->v_dim);
	for (l = 0; l < (int)spec.n_layers; l++) {
		struct cb_layer_weights *L = &tm.layers[l];
		struct cb_delta_layer *D = &L->delta;

		if (!cb_layer_is_delta(&tm.cfg, (cb_u32)l)) {
			L->wq = cb_tm_mat(2 * (int)(spec.n_heads * spec.head_dim), H, 0.3f,
					  CB_DT_F32);
			continue;
		}
		D->qkv = cb_tm_mat(conv, H, 0.5f, CB_DT_F32);
		D->z = cb_tm_mat(vd, H, 0.5f, CB_DT_F32);
		D->b = cb_tm_mat((int)d->v_heads, H, 0.5f, CB_DT_F32);
		D->a = cb_tm_mat((int)d->v_heads, H, 0.5f, CB_DT_F32);
		D->conv = cb_tm_mat(conv, (int)d->conv_kernel, 0.5f, CB_DT_F32);
		D->decay = cb_tm_vec((int)d->v_heads, -1.0f, 0.5f);
		D->dt_bias = cb_tm_vec((int)d->v_heads, -1.0f, 1.0f);
		D->norm = cb_tm_vec((int)d->v_dim, 1.0f, 0.1f);
		D->out = cb_tm_mat(H, vd, 0.3f, CB_DT_F32);
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
	c.delta.full_interval = 1;
	CB_CHECK(refused(&c, "full_attention_interval 1 outside 2..n_layers 3"), "interval 1");
	c = tm.cfg;
	c.delta.full_interval = 4;
	CB_CHECK(refused(&c, "full_attention_interval 4"), "interval past the layers");
	c = tm.cfg;
	c.delta.v_heads = 3;
	CB_CHECK(refused(&c, "linear_num_value_heads 3 is not a multiple"), "v_heads % k_heads");
	c = tm.cfg;
	c.delta.conv_kernel = 9;
	CB_CHECK(refused(&c, "linear_conv_kernel_dim 9 outside 2..8"), "conv kernel 9");
	c = tm.cfg;
	c.delta.k_dim = 0;
	CB_CHECK(refused(&c, "linear_key_head_dim 0"), "k_dim 0");
	c = tm.cfg;
	c.delta.v_dim = CB_MAX_DELTA_HEAD_DIM + 1;
	CB_CHECK(refused(&c, "linear_value_head_dim 257"), "v_dim past the limit");
	c = tm.cfg;
	c.delta.flags = 2;
	CB_CHECK(refused(&c, "delta flags 2 has unknown bits"), "unknown flag");
	c = tm.cfg;
	c.qkv_bias = 1;
	CB_CHECK(refused(&c, "gated attention has no q/k/v bias"), "q/k/v bias");
	c = tm.cfg;
	c.qk_norm = CB_QK_NORM_NONE;
	CB_CHECK(refused(&c, "per-head q/k norm"), "no q/k norm");
	c = tm.cfg;
	c.delta.full_interval = 0;
	CB_CHECK(refused(&c, "full_attention_interval 0"), "Qwen3.5 without DeltaNet layers");
	c = tm.cfg;
	c.arch = COLIBRI_ARCH_QWEN2_MOE;
	CB_CHECK(refused(&c, "Gated DeltaNet word 0 set for qwen2_moe"), "delta words on Qwen2");
}

static void test_missing_tensors(void)
{
	struct cb_layer_weights save0 = tm.layers[0], save2 = tm.layers[2];

	CB_CHECK(!cb_engine_check_model(&tm.cfg, &tm.w), "good model refused");
	tm.layers[0].delta.conv.data = NULL;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL, "no conv accepted");
	tm.layers[0] = save0;
	tm.layers[0].delta.out.cols--;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL, "out of the wrong shape");
	tm.layers[0] = save0;
	tm.layers[0].delta.decay.dtype = CB_DT_BF16;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL, "bf16 decay accepted");
	tm.layers[0] = save0;
	tm.layers[2].wq.rows /= 2;
	CB_CHECK(cb_engine_check_model(&tm.cfg, &tm.w) == -CB_EINVAL,
		 "a gated layer's wq without its gate rows accepted");
	tm.layers[2] = save2;
}

/* The state: fixed per slot whatever the context, two banks of it. */
static void test_state_size(void)
{
	struct cb_engine_params p = { .max_batch_tokens = 8, .n_seqs = 1, .max_context = 32 };
	cb_u64 per = 2 * (3 * 128 + 4 * 16 * 16), a1, a2;

	CB_CHECK(cb_delta_state_floats(&tm.cfg) == per, "state of %llu floats, want %llu",
		 (unsigned long long)cb_delta_state_floats(&tm.cfg), (unsigned long long)per);
	CB_CHECK(cb_delta_layer_offset(&tm.cfg, 1) == per / 2 &&
		 cb_delta_layer_offset(&tm.cfg, 2) == per, "layer offsets");
	a1 = cb_engine_arena_size(&tm.cfg, &p);
	p.n_seqs = 2;
	a2 = cb_engine_arena_size(&tm.cfg, &p);
	/* a slot more: two banks, the one full layer's k and v, its few counters */
	CB_CHECK(a2 - a1 >= 2 * per * 4 + 2ull * 32 * 2 * 32 * 4 &&
		 a2 - a1 < 2 * per * 4 + 2ull * 32 * 2 * 32 * 4 + 1024,
		 "a slot costs %llu bytes", (unsigned long long)(a2 - a1));
}

struct inst {
	struct cb_engine *e;
	void *arena;
};

static int inst_new(struct inst *in, cb_u32 max_batch, cb_u32 chunk_ns)
{
	struct cb_engine_params p = { .max_batch_tokens = max_batch, .n_seqs = 2,
				      .max_context = 64, .chunk_ns = chunk_ns };
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
		b.logits = out + (cb_size)from * V;
		r = cb_engine_forward(in->e, ex, &b);
		if (r)
			return r;
	}
	return 0;
}

static cb_u32 toks[NPOS], toks2[NPOS];
static float want[NPOS * V], want2[NPOS * V], got[NPOS * V];

/*
 * Prefill in batches of 40, 16, 5 and 1 tokens, with the default chunks
 * and the smallest (every phase cut into its smallest pieces, every round
 * a token): the same bits.  The logits are not all alike (a model that
 * ignored its state would pass the rest).
 */
static void test_batching_invariance(void)
{
	static const cb_u32 steps[] = { 16, 5, 1 };
	struct cb_exec *ex = cb_host_exec_create(2);
	struct inst in;
	cb_u32 i;

	for (i = 0; i < NPOS; i++) {
		toks[i] = (i * 37 + 11) % V;
		toks2[i] = (i * 53 + 5) % V;
	}
	CB_CHECK(!inst_new(&in, 40, 0), "engine");
	CB_CHECK(!run(&in, ex, 0, toks, 0, NPOS, 40, want), "one batch");
	CB_CHECK(memcmp(want, want + 20 * V, V * sizeof(float)), "positions 0 and 20 alike");
	free(in.arena);
	for (i = 0; i < CB_ARRAY_SIZE(steps); i++) {
		CB_CHECK(!inst_new(&in, steps[i], i & 1 ? 1 : 0), "engine");
		memset(got, 0, sizeof(got));
		CB_CHECK(!run(&in, ex, 1, toks, 0, NPOS, steps[i], got), "run");
		CB_CHECK(!memcmp(got, want, sizeof(want)), "batches of %u differ", steps[i]);
		free(in.arena);
	}
	cb_host_exec_destroy(ex);
}

/* Two slots' tokens interleaved in every batch: each slot's logits as alone. */
static void test_interleaved_slots(void)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	cb_u32 s[16], pos[16], tk[16], t, i;
	struct cb_batch b = { 0 };
	float *out = malloc(16 * V * sizeof(float));
	struct inst in;
	int bad = 0;

	CB_CHECK(!inst_new(&in, 16, 1), "engine");
	CB_CHECK(!run(&in, ex, 1, toks2, 0, NPOS, 16, want2), "slot 1 alone");
	CB_CHECK(!cb_engine_seq_reset(in.e, 1), "reset");
	/* 8 positions of each slot a batch, alternating tokens */
	for (t = 0; t < NPOS; t += 8) {
		for (i = 0; i < 16; i++) {
			s[i] = i & 1;
			pos[i] = t + i / 2;
			tk[i] = (i & 1 ? toks2 : toks)[t + i / 2];
		}
		b.n_tokens = 16;
		b.tokens = tk;
		b.seq = s;
		b.pos = pos;
		b.logits = out;
		CB_CHECK(!cb_engine_forward(in.e, ex, &b), "interleaved batch at %u", t);
		for (i = 0; i < 16; i++)
			bad |= memcmp(out + i * V, (i & 1 ? want2 : want) + (t + i / 2) * V,
				      V * sizeof(float)) != 0;
	}
	CB_CHECK(!bad, "interleaved slots differ from each alone");
	free(in.arena);
	free(out);
	cb_host_exec_destroy(ex);
}

static int fail_at, yields;

static int failing_yield(struct cb_exec *ex)
{
	(void)ex;
	return ++yields == fail_at ? -CB_ERANGE : 0;
}

/*
 * A slot goes on where it stopped or starts over at 0; anything between is
 * refused and changes nothing.  A pass that fails in its middle leaves the
 * committed state: the same batch again gives the first run's logits.
 */
static void test_rewind_and_abort(void)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	int (*yield)(struct cb_exec *) = ex->yield;
	struct inst in;
	int r;

	CB_CHECK(!inst_new(&in, 8, 0), "engine");
	CB_CHECK(!run(&in, ex, 0, toks, 0, 24, 8, got), "first 24");
	CB_CHECK(run(&in, ex, 0, toks, 20, 28, 8, got) == -CB_EINVAL, "rewind to 20 accepted");
	CB_CHECK(run(&in, ex, 0, toks, 25, 28, 8, got) == -CB_EINVAL, "a gap accepted");
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 24, "a refused batch changed the slot");
	/* a pass of 8 that fails at its 30th phase, then the same pass */
	ex->yield = failing_yield;
	yields = 0;
	fail_at = 30;
	r = run(&in, ex, 0, toks, 24, 32, 8, got);
	CB_CHECK(r == -CB_ERANGE, "the failing pass returned %d", r);
	ex->yield = yield;
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 24, "a failed pass changed the slot's length");
	memset(got, 0, sizeof(got));
	CB_CHECK(!run(&in, ex, 0, toks, 24, NPOS, 8, got), "after the failure");
	CB_CHECK(!memcmp(got + 24 * V, want + 24 * V, (NPOS - 24) * V * sizeof(float)),
		 "the pass after a failed one differs");
	/* start over at 0 without a reset */
	memset(got, 0, sizeof(got));
	CB_CHECK(!run(&in, ex, 0, toks, 0, NPOS, 8, got) && !memcmp(got, want, sizeof(want)),
		 "starting over at position 0 differs");
	free(in.arena);
	cb_host_exec_destroy(ex);
}

/* A Qwen3.5 .colibri: the header's words and the roles 96..104 round trip. */
static void test_file_round_trip(void)
{
	struct cbfile_meta meta = { .name = "q35", .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	char path[] = "/tmp/test_delta.XXXXXX", err[256];
	struct cbfile_writer *w;
	struct cbfile *f = NULL;
	struct cb_format_slot s;
	cb_u32 i, n, moe = 1 + 3 * spec.n_exp + 4;
	int fd = mkstemp(path);

	CB_CHECK(fd >= 0, "mkstemp");
	close(fd);
	w = cbfile_writer_begin(path, &tm.cfg, &meta, err, sizeof(err));
	CB_CHECK(w, "writer: %s", err);
	if (!w)
		return;
	n = cbfile_writer_count(w);
	CB_CHECK(n == 3 + 2 * (CB_DELTA_ROLES + moe) + (5 + 2 + 1 + moe), "%u tensors", n);
	CB_CHECK(cb_format_tensor_index(&tm.cfg, COLIBRI_T_DELTA_OUT, 1, COLIBRI_FILE_NONE) ==
		 3 + CB_DELTA_ROLES + moe + 9, "index of layer 1's delta_out");
	CB_CHECK(cb_format_tensor_index(&tm.cfg, COLIBRI_T_WQ, 1, COLIBRI_FILE_NONE) == -1 &&
		 cb_format_tensor_index(&tm.cfg, COLIBRI_T_DELTA_QKV, 2, COLIBRI_FILE_NONE) == -1,
		 "a role of the other kind of layer has an index");
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
		CB_CHECK(t && t->data, "slot %u (%s) has no tensor", i,
			 cb_format_role_name(s.role));
		if (!t || !t->data)
			continue;
		CB_CHECK(!cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
					    cb_dtype_row_bytes(t->dtype, t->cols) * t->rows),
			 "put %s: %s", cb_format_role_name(s.role), cbfile_writer_error(w));
	}
	CB_CHECK(!cbfile_writer_finish(w, err, sizeof(err)), "finish: %s", err);
	f = cbfile_open(path, CBFILE_VERIFY_CRC, err, sizeof(err));
	CB_CHECK(f, "open: %s", err);
	if (f) {
		CB_CHECK(!memcmp(&f->cfg.delta, &tm.cfg.delta, sizeof(tm.cfg.delta)),
			 "ext_delta did not round trip");
		CB_CHECK(f->w.layers[1].delta.conv.data && f->w.layers[1].delta.conv.rows == 128 &&
			 !memcmp(f->w.layers[1].delta.conv.data, tm.layers[1].delta.conv.data,
				 128 * 4 * sizeof(float)), "the conv did not round trip");
		CB_CHECK(f->w.layers[2].wq.rows == 2 * spec.n_heads * spec.head_dim,
			 "the gated wq has %u rows", f->w.layers[2].wq.rows);
		cbfile_close(f);
	}
	unlink(path);
}

int main(void)
{
	build();
	CB_RUN(test_config_refusals);
	CB_RUN(test_missing_tensors);
	CB_RUN(test_state_size);
	CB_RUN(test_batching_invariance);
	CB_RUN(test_interleaved_slots);
	CB_RUN(test_rewind_and_abort);
	CB_RUN(test_file_round_trip);
	return cb_test_done();
}

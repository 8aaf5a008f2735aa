// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_convert.c - the one conversion pipeline (userspace/lib/convert/
 * convert.c) over tensor sources made here: rows quantized to the type
 * --quant gives each role and read back as written; the file the same for
 * any thread count; raw bytes stored as they are; a made slot's buffer
 * sized by the largest the source asks for; a source's refusal and a
 * missing kind of value reported as the source's error (-2).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_test.h"
#include "colibri_format.h"
#include "convert/tensor_source.h"
#include "model/cbfile.h"
#include "ops/cb_ops.h"

static char out[2][128];

static struct cb_model_config cfg(void)
{
	struct cb_model_config c;

	memset(&c, 0, sizeof(c));
	c.arch = COLIBRI_ARCH_MIXTRAL;
	c.vocab_size = 64;
	c.hidden = 64;
	c.n_layers = 2;
	c.n_heads = 2;
	c.n_kv_heads = 1;
	c.head_dim = 32;
	c.expert_ffn = 64;
	c.n_experts = 4;
	c.top_k = 2;
	c.norm_topk_prob = 1;
	c.decoder_sparse_step = 1;
	c.rope_layout = CB_ROPE_NEOX;
	c.rope_theta_bits = 0x49742400;	/* 1e6 */
	c.rms_eps_bits = 0x358637bd;	/* 1e-6 */
	c.max_context = 128;
	return c;
}

/* The value of element (row, col) of slot index: small, exact in f32. */
static float value(uint32_t index, uint64_t row, uint32_t col)
{
	return (float)((int)((index * 131 + row * 17 + col * 7) % 61) - 30) / 64.0f;
}

/* A source of those values; with @made, made into a buffer first; optionally refusing one slot. */
struct src {
	int made;		/* make every slot first (made_bytes = its f32) */
	int raw_embed;		/* the embedding as raw f32 bytes */
	int refuse;		/* find() refuses the slot of this index + 1 */
	int no_rows;		/* rows is NULL */
	float *embed;		/* raw_embed's bytes */
	uint64_t made_max;	/* the largest made_bytes find() gave */
	int begun;		/* begin() calls */
};

static int s_find(void *ctx, uint32_t index, const struct cb_format_slot *s,
		  struct tsrc_slot *t, char *err, size_t errlen)
{
	struct src *x = ctx;

	if (x->refuse == (int)index + 1) {
		snprintf(err, errlen, "slot %u refused", index);
		return -1;
	}
	t->keep_dt = CB_DT_F32;
	t->key = index;
	if (x->raw_embed && s->role == COLIBRI_T_EMBED) {
		t->raw_dt = CB_DT_F32;
		t->bytes = x->embed;
		t->bytes_dt = CB_DT_F32;
	}
	if (x->made) {
		t->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
		if (t->made_bytes > x->made_max)
			x->made_max = t->made_bytes;
	}
	return 0;
}

static int s_begin(void *ctx, const struct cb_format_slot *s, struct tsrc_slot *t, void *made,
		   char *err, size_t errlen)
{
	struct src *x = ctx;
	uint64_t r;
	uint32_t c;

	x->begun++;
	if (!t->made_bytes)
		return 0;
	/* the pipeline's buffer is as large as the largest slot asked for */
	memset(made, 0xff, x->made_max);
	for (r = 0; r < s->rows; r++)
		for (c = 0; c < s->cols; c++)
			((float *)made)[r * s->cols + c] = value((uint32_t)t->key, r, c);
	return 0;
}

static void s_rows(void *ctx, const struct cb_format_slot *s, const struct tsrc_slot *t,
		   const void *made, uint64_t first, uint64_t n, float *dst)
{
	uint64_t r;
	uint32_t c;

	for (r = 0; r < n; r++)
		for (c = 0; c < s->cols; c++)
			dst[r * s->cols + c] = t->made_bytes ?
				((const float *)made)[(first + r) * s->cols + c] :
				value((uint32_t)t->key, first + r, c);
}

/* Convert @x into @path with @quant and @threads; the pipeline's return. */
static int run(struct src *x, const char *path, const char *quant, int threads, char *err,
	       size_t errlen)
{
	struct cb_model_config c = cfg();
	struct cbfile_meta meta = { .name = "t", .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	struct tensor_source ts = { .cfg = &c, .ctx = x, .find = s_find, .begin = s_begin,
				    .rows = x->no_rows ? NULL : s_rows };
	struct convert_opts o = { .threads = threads };
	struct cbfile_writer *w;
	int r;

	if (cb_quant_parse(quant, &o.quant)) {
		snprintf(err, errlen, "bad quant %s", quant);
		return -3;
	}
	w = cbfile_writer_begin(path, &c, &meta, err, errlen);
	if (!w)
		return -3;
	r = convert_tensors(&ts, w, &o, NULL, err, errlen);
	if (r) {
		cbfile_writer_abort(w);
		return r;
	}
	return cbfile_writer_finish(w, err, errlen) ? -3 : 0;
}

static int same_files(const char *a, const char *b)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
	return system(cmd) == 0;
}

/*
 * Every tensor of @path, in the format's canonical order (the writer's
 * slots), dequantized is within @tol of value() (0: exactly); matrices but
 * the router are of type @want_dt.
 */
static int check_values(const char *path, float tol, uint32_t want_dt, char *why, size_t len)
{
	char err[256];
	struct cbfile *f = cbfile_open(path, CBFILE_VERIFY_CRC, err, sizeof(err));
	struct cb_model_config c = cfg();
	uint32_t i, n = cb_format_tensor_count(&c), col;
	uint64_t r;
	float row[64];
	int ok = 1;

	if (!f) {
		snprintf(why, len, "%s", err);
		return 0;
	}
	if (f->info.n_tensors != n) {
		snprintf(why, len, "%u tensors, want %u", f->info.n_tensors, n);
		ok = 0;
	}
	for (i = 0; i < n && ok; i++) {
		const struct colibri_file_tensor *d = &f->dir[i];
		struct cb_format_slot s;

		cb_format_tensor_slot(&c, i, &s);
		if (d->role != s.role || d->layer != s.layer || d->expert != s.expert) {
			snprintf(why, len, "tensor %u is %s, want %s", i,
				 cb_format_role_name(d->role), cb_format_role_name(s.role));
			ok = 0;
			break;
		}
		if (!s.vector && s.role != COLIBRI_T_ROUTER && d->dtype != want_dt) {
			snprintf(why, len, "tensor %u (%s) stored as %s", i,
				 cb_format_role_name(s.role), cb_dtype_name(d->dtype));
			ok = 0;
			break;
		}
		for (r = 0; r < s.rows && ok; r++) {
			cb_dequantize_row(d->dtype, row, f->map + f->info.data_offset + d->offset +
					  r * cb_dtype_row_bytes(d->dtype, s.cols), (int)s.cols);
			for (col = 0; col < s.cols; col++) {
				float e = row[col] - value(i, r, col);

				if (e > tol || e < -tol) {
					snprintf(why, len, "tensor %u row %llu col %u: %g, want %g",
						 i, (unsigned long long)r, col, row[col],
						 value(i, r, col));
					ok = 0;
					break;
				}
			}
		}
	}
	cbfile_close(f);
	return ok;
}

static void test_rows_quantized_and_read_back(void)
{
	struct src x = { 0 };
	char err[256], why[256] = "";
	int r = run(&x, out[0], "f32", 2, err, sizeof(err));

	CB_CHECK(r == 0, "f32: %d %s", r, err);
	CB_CHECK(check_values(out[0], 0.0f, CB_DT_F32, why, sizeof(why)), "f32: %s", why);
	r = run(&x, out[0], "q8_0", 2, err, sizeof(err));
	CB_CHECK(r == 0, "q8_0: %d %s", r, err);
	/* q8_0: 127 steps of the block's largest |x| (30/64) */
	CB_CHECK(check_values(out[0], 0.5f / 127 * 0.51f + 1e-6f, CB_DT_Q8_0, why, sizeof(why)),
		 "q8_0: %s", why);
}

static void test_same_file_for_any_thread_count(void)
{
	struct src x = { 0 };
	char err[256];

	CB_CHECK(!run(&x, out[0], "q4_k_m", 1, err, sizeof(err)), "1 thread: %s", err);
	CB_CHECK(!run(&x, out[1], "q4_k_m", 3, err, sizeof(err)), "3 threads: %s", err);
	CB_CHECK(same_files(out[0], out[1]), "q4_k_m with 1 and 3 threads differ");
}

static void test_made_slots_equal_rows(void)
{
	struct src rows = { 0 }, made = { .made = 1 };
	char err[256];

	CB_CHECK(!run(&rows, out[0], "q8_0", 2, err, sizeof(err)), "rows: %s", err);
	CB_CHECK(!run(&made, out[1], "q8_0", 2, err, sizeof(err)), "made: %s", err);
	CB_CHECK(made.begun > 0 && made.made_max == 64ull * 64 * sizeof(float),
		 "%d begins, largest made slot %llu bytes", made.begun,
		 (unsigned long long)made.made_max);
	CB_CHECK(same_files(out[0], out[1]), "made slots wrote other bytes than rows");
}

static void test_raw_bytes_kept(void)
{
	struct cb_model_config c = cfg();
	struct src x = { .raw_embed = 1 };
	char err[256];
	uint64_t r;
	uint32_t col;

	x.embed = malloc((size_t)c.vocab_size * c.hidden * sizeof(float));
	for (r = 0; r < c.vocab_size; r++)
		for (col = 0; col < c.hidden; col++)
			x.embed[r * c.hidden + col] = value(0, r, col);
	/* --quant q8_0, but the embedding's raw f32 is stored as it is */
	CB_CHECK(!run(&x, out[0], "q8_0", 2, err, sizeof(err)), "%s", err);
	{
		struct cbfile *f = cbfile_open(out[0], CBFILE_VERIFY_CRC, err, sizeof(err));
		uint32_t k;
		int found = 0;

		for (k = 0; f && k < f->info.n_tensors; k++)
			if (f->dir[k].role == COLIBRI_T_EMBED)
				found = f->dir[k].dtype == CB_DT_F32 &&
					!memcmp(f->map + f->info.data_offset + f->dir[k].offset, x.embed,
						(size_t)c.vocab_size * c.hidden * 4);
		CB_CHECK(found, "the embedding is not the raw bytes (%s)", f ? "" : err);
		cbfile_close(f);
	}
	free(x.embed);
}

static void test_source_errors_are_the_sources(void)
{
	struct src refuse = { .refuse = 5 }, norows = { .no_rows = 1 };
	char err[256];
	int r;

	r = run(&refuse, out[0], "q8_0", 2, err, sizeof(err));
	CB_CHECK(r == -2 && strstr(err, "slot 4 refused"), "refusal: %d %s", r, err);
	r = run(&norows, out[0], "q8_0", 2, err, sizeof(err));
	CB_CHECK(r == -2 && strstr(err, "the source has no q8_0 values"), "no rows: %d %s", r,
		 err);
}

int main(void)
{
	snprintf(out[0], sizeof(out[0]), "/tmp/colibri_test_convert.%d.a", (int)getpid());
	snprintf(out[1], sizeof(out[1]), "/tmp/colibri_test_convert.%d.b", (int)getpid());
	CB_RUN(test_rows_quantized_and_read_back);
	CB_RUN(test_same_file_for_any_thread_count);
	CB_RUN(test_made_slots_equal_rows);
	CB_RUN(test_raw_bytes_kept);
	CB_RUN(test_source_errors_are_the_sources);
	unlink(out[0]);
	unlink(out[1]);
	return cb_test_done();
}

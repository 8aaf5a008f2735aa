// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * convert.c - the one pipeline that writes a .colibri file's tensors from a
 * tensor source (tensor_source.h): Hugging Face checkpoints, GGUF files
 * and `colibri synth` all go through convert_tensors().
 *
 * Memory: a 4 MiB chunk of quantized rows, one f32 row per quantizing
 * chunk, and the largest buffer a source asks to make a slot in (GPT-OSS:
 * one expert matrix); the sources' own tensors are mapped.  Each row's
 * bytes depend only on that row, so the file is the same for any thread
 * count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cbfile.h"
#include "convert/tensor_source.h"
#include "ops/cb_ops.h"
#include "quant/quantize.h"
#include "util/host.h"

#define CHUNK_BYTES (4u << 20)

/* The bytes written so far, told to the caller's progress hook. */
struct progress {
	const struct convert_opts *o;
	uint64_t total, done;
};

static void progress(struct progress *p, uint64_t add)
{
	p->done += add;
	if (p->o->progress)
		p->o->progress(p->o->progress_arg, p->done, p->total);
}

/* Rows [first, first + n) of one slot, quantized to dt on the thread pool. */
struct qjob {
	const struct tensor_source *ts;
	const struct cb_format_slot *s;
	const struct tsrc_slot *t;
	const void *made;
	uint64_t first, n, per;
	uint32_t dt;
	int failed;
	size_t rb;
	char *dst;
};

static void qchunk(void *arg, int c)
{
	struct qjob *j = arg;
	uint64_t r0 = (uint64_t)c * j->per, r;
	float *row = malloc(sizeof(float) * j->s->cols);

	if (!row) {
		__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (r = r0; r < r0 + j->per && r < j->n; r++) {
		j->ts->rows(j->ts->ctx, j->s, j->t, j->made, j->first + r, 1, row);
		cb_quantize_row_fast(j->dt, j->dst + r * j->rb, row, (int)j->s->cols);
	}
	free(row);
}

static int quantize_rows(struct cb_exec *ex, struct qjob *j)
{
	uint64_t chunks = (uint64_t)(ex->nthreads > 0 ? ex->nthreads : 1) * 4;

	if (!j->n)
		return 0;
	if (chunks > j->n)
		chunks = j->n;
	j->per = (j->n + chunks - 1) / chunks;
	j->failed = 0;
	ex->parallel_for(ex, qchunk, j, (int)((j->n + j->per - 1) / j->per));
	return j->failed ? -1 : 0;
}

/* "tensor 'NAME' (role)", or the role and where it is, for messages. */
static void slot_name(const struct cb_format_slot *s, const struct tsrc_slot *t, char *buf,
		      size_t len)
{
	if (t->name)
		snprintf(buf, len, "tensor '%s' (%s)", t->name, cb_format_role_name(s->role));
	else
		snprintf(buf, len, "%s (layer %d, expert %d)", cb_format_role_name(s->role),
			 (int)s->layer, (int)s->expert);
}

/* Write one slot.  0, -1 (the writer's error) or -2 (@err: the source's). */
static int write_slot(const struct tensor_source *ts, struct cbfile_writer *w,
		      const struct cb_format_slot *s, struct tsrc_slot *t, uint32_t dt,
		      struct cb_exec **ex, char *buf, void *made, struct progress *pg,
		      char *err, size_t errlen)
{
	struct qjob j = { .ts = ts, .s = s, .t = t, .made = made, .dt = dt, .dst = buf,
			  .rb = cb_dtype_row_bytes(dt, s->cols) };
	uint64_t size = j.rb * s->rows, off, r;
	char what[200];

	if (ts->begin && ts->begin(ts->ctx, s, t, made, err, errlen))
		return -2;
	if (cbfile_writer_tensor_begin(w, s->role, s->layer, s->expert))
		return -1;
	if (t->bytes && t->bytes_dt == (int)dt) {
		/* the stored bytes, unchanged */
		for (off = 0; off < size; off += CHUNK_BYTES) {
			size_t n = size - off < CHUNK_BYTES ? size - off : CHUNK_BYTES;

			if (cbfile_writer_tensor_write(w, (const char *)t->bytes + off, n))
				return -1;
			progress(pg, n);
		}
		return cbfile_writer_tensor_end(w);
	}
	slot_name(s, t, what, sizeof(what));
	if (!ts->rows || t->raw_dt >= 0) {
		snprintf(err, errlen, "%s: the source has no %s values for it", what,
			 cb_dtype_name(dt));
		return -2;
	}
	/* the thread pool, once a slot needs quantizing */
	if (!*ex)
		*ex = cb_host_exec_create(pg->o->threads);
	if (!*ex) {
		snprintf(err, errlen, "out of memory");
		return -2;
	}
	for (r = 0; r < s->rows; r += j.n) {
		cb_s64 bad;

		j.first = r;
		j.n = CHUNK_BYTES / j.rb ? CHUNK_BYTES / j.rb : 1;
		if (j.n > s->rows - r)
			j.n = s->rows - r;
		if (quantize_rows(*ex, &j)) {
			snprintf(err, errlen, "%s: out of memory", what);
			return -2;
		}
		bad = cb_quant_find_bad_scale(dt, buf, j.n * j.rb / cb_dtype_info(dt)->block_bytes);
		if (bad >= 0) {
			uint64_t row = r + (uint64_t)bad * cb_dtype_info(dt)->block / s->cols;

			snprintf(err, errlen, "%s: row %llu quantized to %s has a scale that is "
				 "not finite (weights too large for the type)", what,
				 (unsigned long long)row, cb_dtype_name(dt));
			return -2;
		}
		if (cbfile_writer_tensor_write(w, buf, j.n * j.rb))
			return -1;
		progress(pg, j.n * j.rb);
	}
	return cbfile_writer_tensor_end(w);
}

/* Every slot's source and stored type; the bytes and the largest made buffer. */
static int plan(const struct tensor_source *ts, struct cbfile_writer *w,
		const struct convert_opts *o, struct tsrc_slot *t, uint8_t *dts,
		uint64_t *total, uint64_t *made_max, char *err, size_t errlen)
{
	uint32_t i, n = cbfile_writer_count(w);

	for (i = 0; i < n; i++) {
		struct cb_format_slot s;
		int dt;

		if (cbfile_writer_slot(w, i, &s))
			return -1;
		t[i] = (struct tsrc_slot){ .raw_dt = -1, .bytes_dt = -1 };
		if (ts->find(ts->ctx, i, &s, &t[i], err, errlen))
			return -2;
		if (t[i].raw_dt >= 0)		/* kept as it is */
			dt = t[i].raw_dt;
		else if (s.vector)
			dt = CB_DT_F32;
		else	/* router and shared-expert gate: f32 there too */
			dt = cb_quant_choose(&o->quant, ts->cfg, s.role, s.layer, s.cols,
					     t[i].keep_dt);
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, dt))
			return -1;
		dts[i] = (uint8_t)dt;
		*total += cbfile_writer_tensor_size(w, s.role, s.layer, s.expert);
		if (t[i].made_bytes > *made_max)
			*made_max = t[i].made_bytes;
	}
	return 0;
}

int convert_tensors(const struct tensor_source *ts, struct cbfile_writer *w,
		    const struct convert_opts *o, uint64_t *total, char *err, size_t errlen)
{
	struct progress pg = { .o = o };
	uint32_t i, n = cbfile_writer_count(w);
	struct tsrc_slot *t = calloc(n ? n : 1, sizeof(*t));
	uint8_t *dts = calloc(n ? n : 1, 1);
	struct cb_exec *ex = NULL;
	uint64_t made_max = 0;
	void *buf = NULL, *made = NULL;
	int r = -1;

	if (!t || !dts) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	r = plan(ts, w, o, t, dts, &pg.total, &made_max, err, errlen);
	if (r)
		goto out;
	r = -1;
	if (cbfile_writer_layout(w))
		goto out;
	buf = malloc(CHUNK_BYTES + 64 * 1024);
	made = made_max ? aligned_alloc(64, (made_max + 63) / 64 * 64) : NULL;
	if (!buf || (made_max && !made)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;

		if (cbfile_writer_slot(w, i, &s))
			goto out;
		r = write_slot(ts, w, &s, &t[i], dts[i], &ex, buf, made, &pg, err, errlen);
		if (r)
			goto out;
	}
	if (total)
		*total = pg.total;
out:
	/* a writer error: its reason (an error of ours is already in @err) */
	if (r == -1 && w && cbfile_writer_error(w)[0])
		snprintf(err, errlen, "%s", cbfile_writer_error(w));
	cb_host_exec_destroy(ex);
	free(made);
	free(buf);
	free(dts);
	free(t);
	return r;
}

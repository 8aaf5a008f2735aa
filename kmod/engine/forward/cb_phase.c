// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_phase.c - the machinery the forward pass is made of.
 *
 * A step of the forward pass is a "phase": a parallel_for over chunks with
 * disjoint outputs (so the result does not depend on which thread ran
 * what), followed by a yield.  Matrix products are queued as gemm jobs
 * (cb_job_add) and run together as one phase (cb_run_jobs); activation
 * rows are kept in the forms the weights reading them need
 * (cb_acts_quantize); RMSNorm is the one primitive every architecture
 * uses.
 *
 * The error is sticky (e->err): the first failure is kept and every later
 * step does nothing, so the forward pass is a plain list of steps.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"
#include "arch/cb_delta.h"

/*
 * The shape limits keep every indivisible unit of work within a chunk's
 * budget (cb_limits.h; the costs are cb_engine_priv.h's):
 */
#define CB_FITS(work, what) CB_STATIC_ASSERT((cb_u64)(work) <= CB_CHUNK_PS, what)
/* one row of a gemm for one token, at the slowest variant's cost */
CB_FITS((cb_u64)CB_MAX_FFN * CB_PS_GEMM_MAX, "gemm row of k = CB_MAX_FFN");
CB_FITS((cb_u64)CB_MAX_HIDDEN * CB_PS_GEMM_MAX, "gemm row of k = CB_MAX_HIDDEN");
CB_FITS((cb_u64)CB_MAX_QDIM * CB_PS_GEMM_MAX, "gemm row of k = CB_MAX_QDIM");
/* one split of attention for one head: at least 32 positions */
CB_FITS(32ull * (CB_MAX_HEAD_DIM * CB_PS_ATT + CB_PS_EXP), "attention split of 32");
/* the merge of one dimension: every split's weight (cb_att_split(256) = 128) */
CB_FITS((cb_u64)CB_MAX_CONTEXT / 128 * (CB_PS_EXP + CB_PS_AXPY), "merge of one dimension");
/* RoPE and the cache of one kv head with all its query heads */
CB_FITS((cb_u64)(CB_MAX_QDIM + 2 * CB_MAX_HEAD_DIM) * CB_PS_ROPE, "RoPE of one kv head");
/* the sum of a norm: one hidden row, or q and k of one token (OLMoE) */
CB_FITS((cb_u64)CB_MAX_HIDDEN * CB_PS_NORM / 2 + CB_ACT_PIECE * CB_PS_NORM, "RMSNorm row");
CB_FITS((cb_u64)2 * CB_MAX_QDIM * CB_PS_NORM / 2, "q and k norm of one token");
/* the angles of a token; one token's routing; a gathered row */
CB_FITS((cb_u64)CB_MAX_HEAD_DIM / 2 * CB_PS_ANGLE + CB_ACT_PIECE * CB_PS_DEQUANT,
	"RoPE angles of one position");
CB_FITS((cb_u64)CB_MAX_EXPERTS * CB_PS_ROUTE, "routing of one token");
CB_FITS((cb_u64)CB_MAX_HIDDEN * CB_PS_COPY, "gathering one row");
/* a DeltaNet round's smallest piece: one token through 16 columns of a head's state */
CB_FITS(16ull * CB_MAX_DELTA_HEAD_DIM * 1700 /* scalar delta_ps */, "DeltaNet state piece");
/* a token's beta and decay (every value head) and one key head's q and k norms */
CB_FITS((cb_u64)CB_MAX_DELTA_HEADS * 4 * CB_PS_EXP + 2ull * CB_MAX_DELTA_HEAD_DIM * CB_PS_NORM,
	"DeltaNet prep of one key head");
/* packing one activation row (q8_0 or q8_K) for gemm_pk (k <= the widest gemm input) */
CB_FITS((cb_u64)CB_MAX_FFN * CB_PS_PACK, "packing one row");

/* 1 / rms(x), as HF LlamaRMSNorm computes it in f32 */
float cb_rms_inv(const float *x, int n, float eps)
{
	float ss = 0.0f;
	int i;

	for (i = 0; i < n; i++)
		ss += x[i] * x[i];
	return 1.0f / cb_sqrtf(ss / (float)n + eps);
}

/* out = w * (x * inv): RMSNorm's second pass, element by element */
void cb_rms_apply(float *out, const float *x, const float *w, float inv, int n)
{
	int i;

	for (i = 0; i < n; i++)
		out[i] = w[i] * (x[i] * inv);
}

/* out = x / rms(x) * w  (HF LlamaRMSNorm, in f32); out may be x */
void cb_rmsnorm(float *out, const float *x, const float *w, int n, float eps)
{
	cb_rms_apply(out, x, w, cb_rms_inv(x, n, eps), n);
}

/* fn over @nchunks chunks, then the host's yield; nothing after an error */
void cb_run_phase(struct cb_engine *e, struct cb_exec *ex,
		  void (*fn)(void *, int), int nchunks)
{
	if (e->err)
		return;
	if (nchunks > 0)
		ex->parallel_for(ex, fn, e, nchunks);
	if (ex->yield)
		e->err = ex->yield(ex);
}

void cb_run_plan(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		 const struct cb_plan *pl)
{
	if (e->err)
		return;
	e->pl = *pl;
	cb_run_phase(e, ex, fn, pl->rows > 0 ? pl->nchunks : 0);
}

void cb_run_planned(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		    int rows, int pieces, cb_u64 row_ps, cb_u64 piece_ps)
{
	struct cb_plan pl;

	cb_plan_rows(&pl, rows, pieces, row_ps, piece_ps, e->chunk_ps);
	cb_run_plan(e, ex, fn, &pl);
}

void cb_run_rows(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		 int rows, cb_u64 row_ps)
{
	cb_run_planned(e, ex, fn, rows, 1, row_ps, 0);
}

/* Start a list of gemm jobs for the next phase. */
void cb_jobs_reset(struct cb_engine *e)
{
	e->njobs = 0;
	e->nchunks = 0;
	e->pk_used = 0;
	e->pk_chunks = 0;
}

/*
 * Packed activations for job j, if its variant has a gemm over them for
 * this many tokens (cb_pk_takes()) and its rows fit what is left of the scratch
 * (else j stays on the plain gemm: the same results, only slower).  Rows
 * an earlier job of the phase packed are shared.
 */
static void job_pack(struct cb_engine *e, struct cb_gemm_job *j)
{
	cb_u32 kind = cb_dtype_act(j->dtype);
	cb_u64 stride, need;
	int i;

	j->pk = CB_NULL;
	j->pk_own = 0;
	if (!e->pk_buf || !cb_pk_takes(e->ops, j->dtype, j->M))
		return;
	for (i = 0; i < e->njobs - 1; i++) {
		const struct cb_gemm_job *o = &e->jobs[i];

		if (o->pk_own && o->act == j->act && o->act_stride == j->act_stride &&
		    o->M == j->M && o->k == j->k && cb_dtype_act(o->dtype) == kind) {
			j->pk = o->pk;
			j->pk_stride = o->pk_stride;
			return;
		}
	}
	stride = cb_pk_act_row_bytes(kind, (cb_u64)j->k);
	need = stride * (cb_u64)j->M;
	if (need > e->pk_size - e->pk_used)
		return;
	j->pk = e->pk_buf + e->pk_used;
	j->pk_stride = (cb_size)stride;
	e->pk_used += need;
	j->pk_own = 1;
	j->pk_rows = (int)CB_MAX(e->chunk_ps / ((cb_u64)j->k * CB_PS_PACK), (cb_u64)1);
	j->pk_nch = (j->M + j->pk_rows - 1) / j->pk_rows;
	j->pk_first = e->pk_chunks;
	e->pk_chunks += j->pk_nch;
}

/*
 * Queue out = W x for M activation rows, rows @row0.. of @in, in the form
 * the weight type reads.  Chunks: cb_gemm_plan(), with the running
 * variant's cost of a multiply-add of this weight type.
 */
void cb_job_add(struct cb_engine *e, const struct cb_tensor *t, float *out,
		cb_size ldo, const struct cb_acts *in, cb_size row0, int M,
		const float *bias)
{
	cb_u32 kind = cb_dtype_act(t->dtype);
	struct cb_gemm_job *j;

	if (M <= 0)
		return;
	j = &e->jobs[e->njobs++];
	j->out = out;
	j->ldo = ldo;
	j->w = t->data;
	j->dtype = t->dtype;
	j->w_row_bytes = cb_dtype_row_bytes(t->dtype, t->cols);
	j->act_stride = in->q_bytes[kind];
	j->act = (const char *)in->q[kind] + row0 * j->act_stride;
	j->bias = bias;
	j->M = M;
	j->nrows = (int)t->rows;
	j->k = (int)t->cols;
	cb_gemm_plan(j->nrows, j->k, M, e->ops->gemm_ps[t->dtype], e->chunk_ps, &j->rblk,
		     &j->mblk);
	j->nrb = (j->nrows + j->rblk - 1) / j->rblk;
	j->nmb = (M + j->mblk - 1) / j->mblk;
	j->nchunks = j->nrb * j->nmb;
	j->first = e->nchunks;
	e->nchunks += j->nchunks;
	job_pack(e, j);
}

/* Chunk c of the pack phase: rows of the job that owns it. */
static void pack_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_gemm_job *j = e->jobs;
	cb_pack_fn pack;
	int m, m1;

	while (!j->pk_own || c >= j->pk_first + j->pk_nch)
		j++;
	pack = cb_pk_pack_fn(e->ops, cb_dtype_act(j->dtype));
	m = (c - j->pk_first) * j->pk_rows;
	m1 = CB_MIN(j->M, m + j->pk_rows);
	for (; m < m1; m++)
		pack((char *)j->pk + (cb_size)m * j->pk_stride,
		     (const char *)j->act + (cb_size)m * j->act_stride, j->k);
}

static void gemm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_gemm_job *j;
	const char *w;
	int lo = 0, hi = e->njobs - 1, rb, mb, r0, m0, nr, nm, m, r;

	/* binary search for the job holding chunk c */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (e->jobs[mid].first <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	j = &e->jobs[lo];
	c -= j->first;
	/* token blocks inner: consecutive chunks share weight rows (cache) */
	mb = c % j->nmb;
	rb = c / j->nmb;
	r0 = rb * j->rblk;
	m0 = mb * j->mblk;
	nr = CB_MIN(j->rblk, j->nrows - r0);
	nm = CB_MIN(j->mblk, j->M - m0);
	w = cb_weight_local(e, j->w);	/* this NUMA node's copy, if any */
	if (j->pk)
		e->ops->gemm_pk[j->dtype](j->out + (cb_size)m0 * j->ldo + r0, j->ldo,
					  w + (cb_size)r0 * j->w_row_bytes, j->w_row_bytes,
					  (const char *)j->pk + (cb_size)m0 * j->pk_stride,
					  j->pk_stride, nm, nr, j->k);
	else
		e->ops->gemm[j->dtype](j->out + (cb_size)m0 * j->ldo + r0, j->ldo,
				       w + (cb_size)r0 * j->w_row_bytes, j->w_row_bytes,
				       (const char *)j->act + (cb_size)m0 * j->act_stride,
				       j->act_stride, nm, nr, j->k);
	if (j->bias)
		for (m = m0; m < m0 + nm; m++)
			for (r = r0; r < r0 + nr; r++)
				j->out[(cb_size)m * j->ldo + r] += j->bias[r];
}

/* The queued jobs, as one phase (after the one packing their activations). */
void cb_run_jobs(struct cb_engine *e, struct cb_exec *ex)
{
	e->jobs_ex = ex;
	if (e->pk_chunks)
		cb_run_phase(e, ex, pack_chunk, e->pk_chunks);
	cb_run_phase(e, ex, gemm_chunk, e->nchunks);
}

/* Columns [c0, c1) of row r of @a into every other form in a->kinds. */
void cb_acts_quantize_cols(struct cb_engine *e, const struct cb_acts *a, cb_size r,
			   int c0, int c1)
{
	const float *x = a->f + r * a->n;
	cb_u32 k;

	for (k = CB_ACT_F32 + 1; k < CB_ACT__COUNT; k++) {
		const struct cb_block_info *b = cb_act_info(k);

		if (a->kinds >> k & 1)
			e->ops->quantize_act[k]((char *)a->q[k] + r * a->q_bytes[k] +
						(cb_size)(c0 / b->block) * b->block_bytes,
						x + c0, c1 - c0);
	}
}

/*
 * att rows, times sigmoid of their gates on a gated layer (Qwen3.5), into
 * the forms Wo reads, by tokens or pieces of columns
 */
static void att_quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1, p0, p1, c0, c1, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->odim, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		float *a = e->att.f + (cb_size)t * e->odim;
		const float *g = e->att_gate + (cb_size)t * e->qdim;

		if (e->att_gated)
			for (i = c0; i < c1; i++)
				a[i] *= cb_sigmoidf(g[i]);
		cb_acts_quantize_cols(e, &e->att, t, c0, c1);
	}
}

/*
 * The attention's output (e->att: odim columns a token, every attention
 * kind's), gated where the layer is, into the forms its output projection
 * reads, as one phase.
 */
void cb_att_quantize(struct cb_engine *e, struct cb_exec *ex)
{
	if (cb_acts_nforms(&e->att) || e->att_gated)
		cb_run_planned(e, ex, att_quant_chunk, e->n, cb_col_pieces(e->odim), 0,
			       (cb_u64)CB_ACT_PIECE * (CB_PS_QUANT * cb_acts_nforms(&e->att) +
						       CB_PS_EXP * e->att_gated));
}

/* Row r of @a from its f32 row into every other form in a->kinds. */
void cb_acts_quantize(struct cb_engine *e, const struct cb_acts *a, cb_size r)
{
	const float *x = a->f + r * a->n;
	cb_u32 k;

	for (k = CB_ACT_F32 + 1; k < CB_ACT__COUNT; k++)
		if (a->kinds >> k & 1)
			e->ops->quantize_act[k]((char *)a->q[k] + r * a->q_bytes[k], x, a->n);
}

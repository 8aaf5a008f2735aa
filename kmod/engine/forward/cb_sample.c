// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_sample.c - picking the next token: greedy, temperature, top-k, top-p.
 *
 * Randomness is counter based (splitmix64 of seed and draw number), so a
 * request replays exactly from (seed, position) with no hidden state, on
 * any thread, in the kernel or in userspace.
 *
 * The work runs as phases of fixed chunks of CB_SMP_CHUNK tokens through the
 * executor, like the forward pass: in the kernel every chunk is a short
 * FPU section on a worker, and the calling thread does only O(chunks +
 * bins) work between phases, never O(vocabulary).  No sort is needed: the
 * probability of token i is w_i / (mass of the kept set) however the kept
 * set is walked, so the sampler only has to find the kept set's boundary:
 *
 *   1. max:    per-chunk max (NaN ignored) -> max; greedy stops here.
 *   2. weight: w_i = exp((l_i - max) / T) into scratch, with per-chunk
 *		sums and, when top-k or top-p is on, a histogram of the first
 *		radix digit.
 *   3. select: top-k and top-p boundaries by radix select over the bit
 *		patterns of w (w is in [0, 1], so its u32 pattern is below
 *		2^30 and orders like w): per-chunk histograms of count and
 *		mass per digit (8, 8, 8, 6 bits), reduced across chunks in
 *		chunk order by bin groups, then one serial scan of the bins.
 *   4. kept:   per-chunk kept mass.
 *   5. draw:   r uniform in [0, kept mass): the chunk where r falls is found
 *		serially over the chunk masses; that one chunk is walked in
 *		token order.
 *
 * Order and ties.  Tokens rank by larger w first, then lower id.  top-k
 * keeps the first k tokens of that order; top-p keeps its shortest prefix
 * whose mass reaches top_p times the mass of what top-k kept (all tokens
 * without top-k).  Both are prefixes of the same order, so the kept set is
 * the shorter one.  A prefix is written (thr, m): every token whose key
 * (bit pattern of w) is above thr, plus the m lowest-id tokens whose key is
 * exactly thr.  Masses are sums in double: per chunk in token order, across
 * chunks in chunk order, so every result depends only on (seed, counter,
 * logits), never on the thread count.
 *
 * Why so: a sort (the old heapsort of ~all tokens for top-p took 22 ms for
 * 151,936 tokens, in one FPU section) is only needed to walk tokens in rank
 * order, and the draw does not need that order.  Radix select on the bit
 * patterns is exact (ties are equal keys, no float compare subtleties),
 * needs no data movement and costs a few linear passes that split into
 * chunks like any other engine phase.  The (count, mass) histograms serve
 * both searches, and a level top-k already reduced is reused by top-p.
 * The draw takes 53 random bits; top_p's target is top_p * kept mass in
 * double.  The call's state lives in the scratch, not on the caller's
 * stack, as workers on other threads read it.
 *
 * Special values.  NaN logits are never picked (weight 0); if every logit
 * is NaN the token is 0.  Logits equal to the maximum have weight exactly 1,
 * so when the maximum is +inf the +inf tokens share the draw equally and
 * all others have weight 0.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"

#define SMP_RGROUP 32		/* bins per reduce chunk */
#define SMP_NO_ARG 0xffffffffu

/* Radix digits of the 30-bit key, most significant first. */
static const int lvl_shift[CB_SMP_LEVELS] = { 22, 14, 6, 0 };
static const int lvl_bits[CB_SMP_LEVELS] = { 8, 8, 8, 6 };

/* State of one sampling call; lives at the start of the scratch. */
struct smp {
	const float *l;
	cb_u32 n;
	int nch;
	float mx, invt;
	int hist;		/* weight phase also builds the level-0 histogram */

	float *w;		/* [n] weights */
	float *cmax;		/* [nch] chunk max (NaN ignored) */
	cb_u32 *carg;		/* [nch] its lowest id, SMP_NO_ARG if all NaN */
	double *cmass;		/* [nch] chunk mass, then kept mass */
	cb_u32 *cties;		/* [nch] tokens whose key == thr */
	cb_u32 *hcnt;		/* [nch][CB_SMP_HSTRIDE] */
	double *hmass;		/* [nch][CB_SMP_HSTRIDE] */
	cb_u32 *rcnt;		/* [CB_SMP_LEVELS][CB_SMP_BINS] reduced over chunks */
	double *rmass;		/* [CB_SMP_LEVELS][CB_SMP_BINS] */
	cb_u32 rpre[CB_SMP_LEVELS];	/* prefix each reduced level is for ... */
	int rvalid[CB_SMP_LEVELS];		/* ... if valid */

	/* the histogram being built */
	int level;
	cb_u32 prefix;
	int sparse;		/* few tokens under the prefix */

	/* the kept set (thr, m) and the draw */
	cb_s64 thr;
	cb_u32 quota;		/* ties kept in the drawn chunk */
	int draw_chunk;
	double draw_r;
	int token;
};

/* The state above sits at the start of the scratch (cb_sample_layout()). */
CB_STATIC_ASSERT(CB_ALIGN(sizeof(struct smp), 64) == CB_SMP_STATE,
		 "CB_SMP_STATE is the sampler state, 64-byte aligned");

/* Carves the scratch as cb_sample_layout() (cb_sizes.c) lays it out. */
static struct smp *smp_carve(void *scratch, cb_u32 n)
{
	char *b = scratch;
	struct smp *s = scratch;
	struct cb_sample_layout lo;

	cb_sample_layout(n, &lo);
	s->w = (float *)(b + lo.w);
	s->cmax = (float *)(b + lo.cmax);
	s->carg = (cb_u32 *)(b + lo.carg);
	s->cties = (cb_u32 *)(b + lo.cties);
	s->cmass = (double *)(b + lo.cmass);
	s->hcnt = (cb_u32 *)(b + lo.hcnt);
	s->hmass = (double *)(b + lo.hmass);
	s->rcnt = (cb_u32 *)(b + lo.rcnt);
	s->rmass = (double *)(b + lo.rmass);
	s->n = n;
	s->nch = (int)lo.nch;
	return s;
}

static cb_u64 splitmix64(cb_u64 x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static cb_u32 chunk_end(const struct smp *s, int j)
{
	cb_u64 e = ((cb_u64)j + 1) * CB_SMP_CHUNK;

	return e < s->n ? (cb_u32)e : s->n;
}

/* ---- phases ----------------------------------------------------------- */

/*
 * 1: max and its lowest id per chunk, NaN ignored.  Four running maxima
 * (x > m is false for NaN) and then a search for the first token equal to
 * their max: twice as fast as one compare-and-remember loop.
 */
static void phase_max(void *arg, int j)
{
	struct smp *s = arg;
	cb_u32 i = (cb_u32)j * CB_SMP_CHUNK, end = chunk_end(s, j), best = SMP_NO_ARG;
	const float *l = s->l;
	float m0 = -CB_INFINITY_F, m1 = m0, m2 = m0, m3 = m0;

	for (; i + 4 <= end; i += 4) {
		m0 = l[i] > m0 ? l[i] : m0;
		m1 = l[i + 1] > m1 ? l[i + 1] : m1;
		m2 = l[i + 2] > m2 ? l[i + 2] : m2;
		m3 = l[i + 3] > m3 ? l[i + 3] : m3;
	}
	for (; i < end; i++)
		m0 = l[i] > m0 ? l[i] : m0;
	m0 = m1 > m0 ? m1 : m0;
	m0 = m2 > m0 ? m2 : m0;
	m0 = m3 > m0 ? m3 : m0;
	/* none equal: every token is NaN */
	for (i = (cb_u32)j * CB_SMP_CHUNK; i < end; i++)
		if (l[i] == m0) {
			best = i;
			break;
		}
	s->cmax[j] = m0;
	s->carg[j] = best;
}

/* Clear chunk j's histogram for s->level. */
static void hist_clear(struct smp *s, int j, cb_u32 **cnt, double **mass)
{
	int b, nb = 1 << lvl_bits[s->level];

	*cnt = s->hcnt + (cb_size)j * CB_SMP_HSTRIDE;
	*mass = s->hmass + (cb_size)j * CB_SMP_HSTRIDE;
	for (b = CB_SMP_BINS; b < CB_SMP_HSTRIDE; b++) {
		(*cnt)[b] = 0;
		(*mass)[b] = 0.0;
	}
	for (b = 0; b < nb; b++) {
		(*cnt)[b] = 0;
		(*mass)[b] = 0.0;
	}
}

/* 2: weights, chunk sums and (if s->hist) the level-0 histogram. */
static void phase_weight(void *arg, int j)
{
	struct smp *s = arg;
	cb_u32 i = (cb_u32)j * CB_SMP_CHUNK, end = chunk_end(s, j), *cnt = CB_NULL;
	double sum = 0.0, *mass = CB_NULL;

	if (s->hist)
		hist_clear(s, j, &cnt, &mass);
	for (; i < end; i++) {
		float x = s->l[i], w;

		if (x != x)
			w = 0.0f;
		else if (x == s->mx)	/* also +inf - +inf */
			w = 1.0f;
		else
			w = cb_expf((x - s->mx) * s->invt);
		if (w > 1.0f)		/* the key must stay below 2^30 */
			w = 1.0f;
		s->w[i] = w;
		sum += w;
		if (cnt) {
			cb_u32 b = cb_f32_bits(w) >> lvl_shift[0];

			cnt[b]++;
			mass[b] += w;
		}
	}
	s->cmass[j] = sum;
}

/* 3a: chunk j's histogram of the digit s->level under s->prefix. */
static void phase_hist(void *arg, int j)
{
	struct smp *s = arg;
	cb_u32 i = (cb_u32)j * CB_SMP_CHUNK, end = chunk_end(s, j), *cnt;
	int sh = lvl_shift[s->level], hi = sh + lvl_bits[s->level];
	cb_u32 mask = (1u << lvl_bits[s->level]) - 1, pre = s->prefix;
	double *mass;

	hist_clear(s, j, &cnt, &mass);
	if (s->sparse) {	/* few tokens under the prefix: a branch predicts well */
		for (; i < end; i++) {
			cb_u32 u = cb_f32_bits(s->w[i]);

			if (u >> hi == pre) {
				cnt[(u >> sh) & mask]++;
				mass[(u >> sh) & mask] += s->w[i];
			}
		}
		return;
	}
	for (; i < end; i++) {
		cb_u32 u = cb_f32_bits(s->w[i]);
		/*
		 * No branch: tokens outside the prefix go to spare bins, in
		 * turn so that the updates do not wait on each other.
		 */
		cb_u32 b = u >> hi == pre ? (u >> sh) & mask : CB_SMP_BINS + (i & 7);

		cnt[b]++;
		mass[b] += s->w[i];
	}
}

/* 3b: bins [g * SMP_RGROUP, +SMP_RGROUP) summed over chunks in chunk order. */
static void phase_reduce(void *arg, int g)
{
	struct smp *s = arg;
	cb_u32 *rc = s->rcnt + s->level * CB_SMP_BINS;
	double *rm = s->rmass + s->level * CB_SMP_BINS;
	int b, j;

	for (b = g * SMP_RGROUP; b < (g + 1) * SMP_RGROUP; b++) {
		cb_u32 c = 0;
		double m = 0.0;

		for (j = 0; j < s->nch; j++) {
			c += s->hcnt[(cb_size)j * CB_SMP_HSTRIDE + b];
			m += s->hmass[(cb_size)j * CB_SMP_HSTRIDE + b];
		}
		rc[b] = c;
		rm[b] = m;
	}
}

/* 4: mass of the keys above thr (token order) and the ties, per chunk. */
static void phase_kept(void *arg, int j)
{
	struct smp *s = arg;
	cb_u32 i = (cb_u32)j * CB_SMP_CHUNK, end = chunk_end(s, j), ties = 0;
	double sum = 0.0;

	for (; i < end; i++) {
		cb_s64 u = cb_f32_bits(s->w[i]);
		/* no branch: the kept set is often a random-looking subset */
		cb_u32 keep = -(cb_u32)(u > s->thr);

		sum += cb_f32_from_bits(cb_f32_bits(s->w[i]) & keep);
		ties += u == s->thr;
	}
	s->cmass[j] = sum;
	s->cties[j] = ties;
}

/* 5: walk the drawn chunk in token order (one chunk). */
static void phase_walk(void *arg, int unused)
{
	struct smp *s = arg;
	int j = s->draw_chunk;
	cb_u32 i = (cb_u32)j * CB_SMP_CHUNK, end = chunk_end(s, j), q = s->quota;
	cb_u32 last = SMP_NO_ARG;
	double acc = 0.0;

	(void)unused;
	for (; i < end; i++) {
		cb_s64 u = cb_f32_bits(s->w[i]);

		if (u < s->thr || (u == s->thr && !q))
			continue;
		if (u == s->thr)
			q--;
		if (s->w[i] > 0.0f)
			last = i;
		acc += s->w[i];
		if (s->draw_r < acc) {
			s->token = (int)i;
			return;
		}
	}
	/* r at the very top of the chunk's mass (rounding): its last token */
	s->token = (int)last;
}

/* ---- serial steps (O(chunks + bins) on the calling thread) ------------- */

/* Make the reduced histogram of (level, prefix) current. */
static void need_level(struct smp *s, struct cb_exec *ex, int level, cb_u32 prefix)
{
	int nb = 1 << lvl_bits[level];

	if (s->rvalid[level] && s->rpre[level] == prefix)
		return;
	s->level = level;
	s->prefix = prefix;
	if (level) {	/* level 0 comes with the weights */
		int up = level - 1;
		cb_u32 under = s->rcnt[up * CB_SMP_BINS + (prefix & ((1u << lvl_bits[up]) - 1))];

		/* the way to loop only changes the speed, never the result */
		s->sparse = under < s->n / 16;
		ex->parallel_for(ex, phase_hist, s, s->nch);
	}
	ex->parallel_for(ex, phase_reduce, s, (nb + SMP_RGROUP - 1) / SMP_RGROUP);
	s->rpre[level] = prefix;
	s->rvalid[level] = 1;
}

/* Lowest key of bin b of @level under @prefix. */
static cb_u32 bin_lo(int level, cb_u32 prefix, int b)
{
	return ((prefix << lvl_bits[level]) | (cb_u32)b) << lvl_shift[level];
}

/*
 * The first k tokens of the order (1 < k < n): sets *thr, *m and the kept
 * mass *kmass.
 */
static void select_top_k(struct smp *s, struct cb_exec *ex, cb_u32 k,
			 cb_s64 *thr, cb_u32 *m, double *kmass)
{
	cb_u32 prefix = 0, need = k;
	double above = 0.0;
	int level, b = 0;

	for (level = 0; level < CB_SMP_LEVELS; level++) {
		const cb_u32 *rc;
		const double *rm;

		need_level(s, ex, level, prefix);
		rc = s->rcnt + level * CB_SMP_BINS;
		rm = s->rmass + level * CB_SMP_BINS;
		for (b = (1 << lvl_bits[level]) - 1; b > 0; b--) {
			if (rc[b] >= need)
				break;
			need -= rc[b];
			above += rm[b];
		}
		if (rc[b] == need) {		/* the whole bin */
			*thr = (cb_s64)bin_lo(level, prefix, b) - 1;
			*m = 0;
			*kmass = above + rm[b];
			return;
		}
		if (level == CB_SMP_LEVELS - 1)
			break;
		prefix = (prefix << lvl_bits[level]) | (cb_u32)b;
	}
	/* one key: the need lowest-id tokens of it */
	*thr = bin_lo(CB_SMP_LEVELS - 1, prefix, b);
	*m = need;
	*kmass = above + (double)need * cb_f32_from_bits((cb_u32)*thr);
}

/* The shortest prefix of the order whose mass reaches @target (> 0). */
static void select_top_p(struct smp *s, struct cb_exec *ex, double target,
			 cb_s64 *thr, cb_u32 *m)
{
	cb_u32 prefix = 0, c;
	double above = 0.0, wt, t;
	int level, b, low;

	for (level = 0; level < CB_SMP_LEVELS; level++) {
		const cb_u32 *rc;
		const double *rm;

		need_level(s, ex, level, prefix);
		rc = s->rcnt + level * CB_SMP_BINS;
		rm = s->rmass + level * CB_SMP_BINS;
		low = 0;
		for (b = (1 << lvl_bits[level]) - 1; b >= 0; b--) {
			if (!rc[b])
				continue;
			low = b;
			if (above + rm[b] >= target)
				break;
			above += rm[b];
		}
		/*
		 * A bin of one token is the boundary itself.  If rounding left
		 * the target out of reach, everything under the prefix is in.
		 */
		if (b < 0 || rc[b] == 1) {
			*thr = (cb_s64)bin_lo(level, prefix, b < 0 ? low : b) - 1;
			*m = 0;
			return;
		}
		if (level == CB_SMP_LEVELS - 1)
			break;
		prefix = (prefix << lvl_bits[level]) | (cb_u32)b;
	}
	/* one key: the fewest of its tokens that reach the target */
	*thr = bin_lo(CB_SMP_LEVELS - 1, prefix, b);
	c = s->rcnt[(CB_SMP_LEVELS - 1) * CB_SMP_BINS + b];
	wt = cb_f32_from_bits((cb_u32)*thr);
	if (wt <= 0.0) {
		*m = c;
		return;
	}
	t = (target - above) / wt;
	*m = t < 1.0 ? 1 : t >= (double)c ? c : (cb_u32)(cb_s64)t;
	while (*m > 1 && above + (double)(*m - 1) * wt >= target)
		(*m)--;
	while (*m < c && above + (double)*m * wt < target)
		(*m)++;
}

static void serial_for(struct cb_exec *ex, void (*fn)(void *arg, int chunk),
		       void *arg, int nchunks)
{
	int i;

	(void)ex;
	for (i = 0; i < nchunks; i++)
		fn(arg, i);
}

int cb_sample_ex(struct cb_exec *ex, const void *logits, cb_u32 n,
		 const struct cb_sample_params *p, cb_u64 counter, void *scratch)
{
	struct cb_exec serial = { .parallel_for = serial_for, .nthreads = 1 };
	cb_u32 k, mk = 0, mp = 0, before = 0, best = SMP_NO_ARG;
	int j, topp, level, pick = -1;
	cb_s64 thrk = -1, thrp = -1;
	double kmass = 0.0, total = 0.0, r;
	struct smp *s;
	cb_u64 rnd;

	if (!logits || !n || !p || !scratch || n > 0x7fffffffu)
		return -CB_EINVAL;
	if (!ex || !ex->parallel_for)
		ex = &serial;
	s = smp_carve(scratch, n);
	s->l = logits;

	/* 1: max, lowest id first; greedy is this argmax */
	ex->parallel_for(ex, phase_max, s, s->nch);
	for (j = 0; j < s->nch; j++)
		if (s->carg[j] != SMP_NO_ARG &&
		    (best == SMP_NO_ARG || s->cmax[j] > s->mx)) {
			s->mx = s->cmax[j];
			best = s->carg[j];
		}
	if (best == SMP_NO_ARG)
		return 0;	/* every logit is NaN */
	if (!p->temperature_milli || p->top_k == 1 || n == 1)
		return (int)best;

	/* 2: weights */
	k = p->top_k && p->top_k < n ? p->top_k : n;
	topp = p->top_p_ppm && p->top_p_ppm < 1000000;
	s->invt = 1000.0f / (float)p->temperature_milli;
	s->hist = k < n || topp;
	s->level = 0;
	s->prefix = 0;
	for (level = 0; level < CB_SMP_LEVELS; level++)
		s->rvalid[level] = 0;
	ex->parallel_for(ex, phase_weight, s, s->nch);

	/* 3: the kept prefix */
	s->thr = -1;
	if (s->hist) {
		ex->parallel_for(ex, phase_reduce, s, CB_SMP_BINS / SMP_RGROUP);
		s->rpre[0] = 0;
		s->rvalid[0] = 1;
		if (k < n) {
			select_top_k(s, ex, k, &thrk, &mk, &kmass);
		} else {
			for (j = 0; j < s->nch; j++)
				kmass += s->cmass[j];
		}
		if (topp)
			select_top_p(s, ex, (double)p->top_p_ppm / 1000000.0 * kmass,
				     &thrp, &mp);
		/* the shorter prefix (top-p on its own is inside top-k's) */
		if (topp && (k == n || thrp > thrk || (thrp == thrk && mp <= mk))) {
			s->thr = thrp;
			mk = mp;
		} else {
			s->thr = thrk;
		}
		/* 4: kept mass per chunk, the tie quota in chunk order */
		ex->parallel_for(ex, phase_kept, s, s->nch);
		for (j = 0; j < s->nch; j++) {
			cb_u32 q = mk > before ? mk - before : 0;

			q = q < s->cties[j] ? q : s->cties[j];
			before += s->cties[j];
			if (q)
				s->cmass[j] += (double)q * cb_f32_from_bits((cb_u32)s->thr);
			s->cties[j] = q;
		}
	}

	/* 5: the draw: find the chunk, then walk it */
	for (j = 0; j < s->nch; j++)
		total += s->cmass[j];
	rnd = splitmix64(p->seed ^ splitmix64(counter));
	r = (double)(rnd >> 11) * (1.0 / 9007199254740992.0) * total;
	for (j = 0; j < s->nch; j++) {
		if (!(s->cmass[j] > 0.0))
			continue;
		pick = j;
		if (r < s->cmass[j])
			break;
		r -= s->cmass[j];
	}
	if (pick < 0)		/* cannot happen: the argmax is always kept */
		return (int)best;
	if (j == s->nch)	/* rounding: the top of the last kept chunk */
		r = s->cmass[pick];
	s->draw_chunk = pick;
	s->draw_r = r;
	s->quota = s->hist ? s->cties[pick] : 0;
	ex->parallel_for(ex, phase_walk, s, 1);
	return s->token;
}

int cb_sample(const void *logits, cb_u32 n, const struct cb_sample_params *p,
	      cb_u64 counter, void *scratch)
{
	return cb_sample_ex(CB_NULL, logits, n, p, counter, scratch);
}

int cb_engine_sample_ex(struct cb_engine *e, struct cb_exec *ex, const void *logits,
			const struct cb_sample_params *p, cb_u64 counter)
{
	return cb_sample_ex(ex, logits, e->cfg.vocab_size, p, counter, e->sample_scratch);
}

int cb_engine_sample(struct cb_engine *e, const void *logits,
		     const struct cb_sample_params *p, cb_u64 counter)
{
	return cb_sample(logits, e->cfg.vocab_size, p, counter, e->sample_scratch);
}

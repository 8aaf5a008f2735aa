// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_sample.c - picking the next token: greedy, temperature, top-k, top-p.
 *
 * Randomness is counter based (splitmix64 of seed and draw number), so a
 * request replays exactly from (seed, position) with no hidden state, on
 * any thread, in the kernel or in userspace.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

struct cand {
	float p;
	cb_u32 id;
};

cb_u64 cb_sample_scratch_size(cb_u32 n)
{
	return (cb_u64)n * sizeof(struct cand);
}

static cb_u64 splitmix64(cb_u64 x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* a before b in the sorted order: larger p first, then lower id */
static int before(const struct cand *a, const struct cand *b)
{
	return a->p > b->p || (a->p == b->p && a->id < b->id);
}

/* heap whose root is the element that sorts LAST (so it is evicted first) */
static void sift_down(struct cand *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		struct cand t;

		if (l < n && before(&h[m], &h[l]))
			m = l;
		if (r < n && before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Sort c[0..n) into "before" order (heapsort: no recursion, no allocation). */
static void sort_cands(struct cand *c, int n)
{
	int i;

	for (i = n / 2 - 1; i >= 0; i--)
		sift_down(c, n, i);
	for (i = n - 1; i > 0; i--) {
		struct cand t = c[0];

		c[0] = c[i];
		c[i] = t;
		sift_down(c, i, 0);
	}
}

static int argmax(const float *l, cb_u32 n)
{
	cb_u32 i, best = 0;

	for (i = 1; i < n; i++)
		if (l[i] > l[best])
			best = i;
	return (int)best;
}

int cb_sample(const void *logits, cb_u32 n, const struct cb_sample_params *p,
	      cb_u64 counter, void *scratch)
{
	const float *l = logits;
	struct cand *c = scratch;
	float mx, invt, sum = 0.0f, kept = 0.0f, r, acc;
	cb_u32 i, nc = 0, k;
	cb_u64 rnd;

	if (!logits || !n || !p || !scratch || n > 0x7fffffffu)
		return -CB_EINVAL;
	if (!p->temperature_milli || p->top_k == 1)
		return argmax(l, n);

	mx = l[argmax(l, n)];
	invt = 1000.0f / (float)p->temperature_milli;
	k = p->top_k && p->top_k < n ? p->top_k : n;

	if (k < n) {
		/* keep the k best in a heap of size k */
		for (i = 0; i < n; i++) {
			struct cand x = { cb_expf((l[i] - mx) * invt), i };

			sum += x.p;
			if (nc < k) {
				c[nc++] = x;
				if (nc == k)
					for (int j = (int)k / 2 - 1; j >= 0; j--)
						sift_down(c, (int)k, j);
			} else if (before(&x, &c[0])) {
				c[0] = x;
				sift_down(c, (int)k, 0);
			}
		}
	} else {
		for (i = 0; i < n; i++) {
			c[i].p = cb_expf((l[i] - mx) * invt);
			c[i].id = i;
			sum += c[i].p;
		}
		nc = n;
		if (p->top_p_ppm && p->top_p_ppm < 1000000) {
			/*
			 * Tokens below (1 - top_p) / (n - 1) of the mass can
			 * never be inside the nucleus: drop them before sorting.
			 */
			float cut = (1.0f - (float)p->top_p_ppm / 1000000.0f) /
				    (float)(n - 1) * sum;

			nc = 0;
			for (i = 0; i < n; i++)
				if (c[i].p >= cut)
					c[nc++] = c[i];
		}
	}

	if (k < n || (p->top_p_ppm && p->top_p_ppm < 1000000))
		sort_cands(c, (int)nc);

	if (k < n) {
		sum = 0.0f;	/* top-k renormalises over the kept tokens */
		for (i = 0; i < nc; i++)
			sum += c[i].p;
	}
	kept = sum;
	if (p->top_p_ppm && p->top_p_ppm < 1000000) {
		float target = (float)p->top_p_ppm / 1000000.0f * sum;

		acc = 0.0f;
		for (i = 0; i < nc; i++) {
			acc += c[i].p;
			if (acc >= target) {
				nc = i + 1;
				break;
			}
		}
		kept = acc;
	}

	rnd = splitmix64(p->seed ^ splitmix64(counter));
	r = (float)(rnd >> 40) * (1.0f / 16777216.0f) * kept;
	acc = 0.0f;
	for (i = 0; i < nc; i++) {
		acc += c[i].p;
		if (r < acc)
			return (int)c[i].id;
	}
	return (int)c[nc ? nc - 1 : 0].id;
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_router.c - the router top-k of every ISA variant against the
 * insertion reference, cb_topk_ref().
 *
 * The ids and the bits of the values must be identical for any n (1 to
 * 256) and k (1 to 16, also k > n): descending order, ties to the lower
 * index, NaN (either sign, any payload) as -infinity, -0.0 equal to 0.0.
 * The inputs are chosen to reach every path of the SIMD variants: router-
 * like rows (the AVX-512 fast path: at most 16 candidates above the
 * threshold), the same with ties among the top values (its exact tie
 * ranking), with NaN and infinities, with signed zeros at the top, and
 * coarse or special values (more candidates: the SSE2 path and the
 * reference behind it).  Variants the CPU (or COLIBRI_ISA) lacks are SKIP.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cb_test.h"
#include "ops/cb_ops.h"
#include "core/cb_engine_priv.h"

#define MAXN 256
#define MAXK 16

#define CB_TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#include "cb_test_rng.h"

static unsigned int rndu(unsigned int n)
{
	return (unsigned int)(rnd64() % n);
}

/* uniform in [0, 1) */
static float unif(void)
{
	return (float)(rnd64() >> 40) / (float)(1 << 24);
}

static float bits_f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* One of the awkward values: signed zeros, infinities, NaNs, denormals... */
static float special(void)
{
	switch (rndu(12)) {
	case 0: return 0.0f;
	case 1: return -0.0f;
	case 2: return INFINITY;
	case 3: return -INFINITY;
	case 4: return NAN;
	case 5: return -NAN;
	case 6: return bits_f(0x7f800001u + rndu(0x7fffff));	/* NaN payloads */
	case 7: return bits_f(0xff800001u + rndu(0x7fffff));
	case 8: return bits_f(1u + rndu(0x7fffff));		/* denormals */
	case 9: return bits_f(0x80000001u + rndu(0x7fffff));
	case 10: return rndu(2) ? 3.4028235e38f : -3.4028235e38f;
	default: return (float)((int)rndu(5) - 2);
	}
}

enum gen {
	GEN_ROUTER,	/* sum of 4 uniforms, like bench --router */
	GEN_ROUTER_TIES,	/* the same, top values copied to other experts */
	GEN_ROUTER_NAN,	/* the same with a few NaN / inf */
	GEN_ZEROS_TOP,	/* negative values with signed zeros on top */
	GEN_WIDE,	/* both signs, many binades */
	GEN_COARSE,	/* small integers: ties everywhere */
	GEN_SPECIAL,	/* mostly special values */
	GEN_CONST,	/* one value repeated */
	GEN__COUNT
};

static void fill(float *l, int n, enum gen g)
{
	int i, j;

	switch (g) {
	case GEN_ROUTER:
	case GEN_ROUTER_TIES:
	case GEN_ROUTER_NAN:
		for (i = 0; i < n; i++)
			l[i] = (unif() + unif() + unif() + unif() - 2.0f) * 2.0f;
		if (g == GEN_ROUTER_TIES) {
			/* copy the largest few values over random others */
			for (j = 0; j < 1 + (int)rndu(4); j++) {
				int best = 0;

				for (i = 1; i < n; i++)
					if (l[i] > l[best] && rndu(3))
						best = i;
				l[rndu(n)] = l[best];
			}
		} else if (g == GEN_ROUTER_NAN) {
			for (j = 0; j < 1 + (int)rndu(3); j++)
				l[rndu(n)] = special();
		}
		break;
	case GEN_ZEROS_TOP:
		for (i = 0; i < n; i++)
			l[i] = -unif() - 1e-3f;
		for (j = 0; j < 1 + (int)rndu(12); j++)
			l[rndu(n)] = rndu(2) ? 0.0f : -0.0f;
		break;
	case GEN_WIDE:
		for (i = 0; i < n; i++)
			l[i] = (unif() - 0.5f) * ldexpf(1.0f, (int)rndu(60) - 30);
		break;
	case GEN_COARSE:
		for (i = 0; i < n; i++)
			l[i] = (float)(int)(unif() * 8);
		break;
	case GEN_SPECIAL:
		for (i = 0; i < n; i++)
			l[i] = rndu(4) ? special() : unif();
		break;
	case GEN_CONST: {
		float v = special();

		for (i = 0; i < n; i++)
			l[i] = v;
		break;
	}
	default:
		break;
	}
}

/* Compare one selection with the reference; report the first few misses. */
static int check_one(const struct cb_isa_ops *ops, const float *l, int n, int k,
		     const char *what)
{
	cb_u32 id[MAXK + 1], rid[MAXK + 1];
	float v[MAXK + 1], rv[MAXK + 1];
	int kk = k < MAXK ? k : MAXK;

	/* a canary past k: nothing may be written there */
	memset(id, 0xa5, sizeof(id));
	memset(v, 0xa5, sizeof(v));
	cb_topk_ref(l, n, k, rid, rv);
	ops->topk_f32(l, n, k, id, v);
	if (memcmp(id, rid, kk * sizeof(cb_u32)) || memcmp(v, rv, kk * sizeof(float)) ||
	    id[kk] != 0xa5a5a5a5u) {
		CB_CHECK(0, "%s %s n %d k %d: ids %u %u %u .. vs %u %u %u .., vals %a %a vs %a %a",
			 cb_isa_names[ops->level], what, n, k, id[0], id[1 % kk],
			 id[kk - 1], rid[0], rid[1 % kk], rid[kk - 1], v[0], v[kk - 1], rv[0],
			 rv[kk - 1]);
		return 1;
	}
	return 0;
}

static const char *const gen_name[GEN__COUNT] = {
	"router", "router+ties", "router+nan", "zeros-top", "wide", "coarse",
	"special", "const",
};

/* n and k over their whole range, the router shapes most often. */
static int run_random(const struct cb_isa_ops *ops, int cases)
{
	static const int shapes[][2] = {
		{ 64, 8 }, { 64, 6 }, { 64, 4 }, { 60, 4 }, { 128, 8 }, { 256, 8 },
		{ 8, 2 }, { 16, 4 }, { 32, 8 }, { 48, 8 }, { 160, 6 }, { 64, 16 },
	};
	float l[MAXN];
	int t, bad = 0;

	for (t = 0; t < cases && bad < 5; t++) {
		enum gen g = (enum gen)rndu(GEN__COUNT);
		int n, k;

		if (t % 3 == 0) {
			n = shapes[(t / 3) % CB_ARRAY_SIZE(shapes)][0];
			k = shapes[(t / 3) % CB_ARRAY_SIZE(shapes)][1];
		} else {
			n = 1 + (int)rndu(MAXN);
			k = 1 + (int)rndu(MAXK);
		}
		fill(l, n, g);
		bad += check_one(ops, l, n, k, gen_name[g]);
	}
	return bad;
}

/* Every n and k with router rows and with ties, exhaustively in shape. */
static int run_shapes(const struct cb_isa_ops *ops)
{
	float l[MAXN];
	int n, k, r, bad = 0;

	for (n = 1; n <= MAXN && bad < 5; n++)
		for (k = 1; k <= MAXK; k++)
			for (r = 0; r < 3; r++) {
				enum gen g = r == 0 ? GEN_ROUTER : r == 1 ? GEN_ROUTER_TIES :
					     GEN_ZEROS_TOP;

				fill(l, n, g);
				bad += check_one(ops, l, n, k, gen_name[g]);
			}
	return bad;
}

static void run_variant(int level)
{
	const struct cb_isa_ops *ops = cb_isa_get(level);

	if (!ops) {
		CB_SKIP("ISA variant not available (CPU or COLIBRI_ISA)");
		return;
	}
	run_random(ops, 300000);
	run_shapes(ops);
}

static void test_scalar_topk_matches_ref(void)
{
	run_variant(CB_ISA_SCALAR);
}

static void test_avx2_topk_matches_ref(void)
{
	run_variant(CB_ISA_AVX2);
}

static void test_avx512_topk_matches_ref(void)
{
	run_variant(CB_ISA_AVX512);
}

static void test_avx512_vnni_topk_matches_ref(void)
{
	run_variant(CB_ISA_AVX512_VNNI);
}

/* Every variant fills the slot. */
static void test_tables_have_topk(void)
{
	CB_CHECK(cb_isa_scalar.topk_f32 && cb_isa_avx2.topk_f32 && cb_isa_avx512.topk_f32 &&
		 cb_isa_avx512_vnni.topk_f32, "a table lacks topk_f32");
}

/* The rules themselves, spelled out on the reference and on every variant. */
static void test_reference_rules(void)
{
	const struct cb_isa_ops *all[] = { &cb_isa_scalar, &cb_isa_avx2, &cb_isa_avx512 };
	float l[64], v[8];
	cb_u32 id[8];
	unsigned int a;
	int i;

	for (a = 0; a <= CB_ARRAY_SIZE(all); a++) {
		const struct cb_isa_ops *ops = a < CB_ARRAY_SIZE(all) ? all[a] : NULL;
		void (*topk)(const float *, int, int, cb_u32 *, float *) =
			ops ? ops->topk_f32 : cb_topk_ref;

		if (ops && !ops->valid())
			continue;
		/* -0.0 == 0.0: the lower index first, each keeps its sign */
		for (i = 0; i < 64; i++)
			l[i] = -1.0f - (float)i;
		l[5] = 0.0f;
		l[2] = -0.0f;
		l[40] = 0.0f;
		topk(l, 64, 3, id, v);
		CB_CHECK(id[0] == 2 && id[1] == 5 && id[2] == 40 && signbit(v[0]) &&
			 !signbit(v[1]) && v[2] == 0.0f, "%s: signed zeros %u %u %u",
			 ops ? cb_isa_names[ops->level] : "ref", id[0], id[1], id[2]);
		/* NaN is -inf: it ties with -inf, and the lower index wins */
		for (i = 0; i < 64; i++)
			l[i] = -INFINITY;
		l[0] = NAN;
		l[1] = -NAN;
		l[9] = 1.0f;
		topk(l, 64, 4, id, v);
		CB_CHECK(id[0] == 9 && id[1] == 0 && id[2] == 1 && id[3] == 2 &&
			 v[1] == -INFINITY && v[2] == -INFINITY, "%s: NaN %u %u %u %u",
			 ops ? cb_isa_names[ops->level] : "ref", id[0], id[1], id[2], id[3]);
		/* a tie at the k-th place: the lower index is in, the other out */
		for (i = 0; i < 64; i++)
			l[i] = (float)(i % 7) * 0.01f - 1.0f;
		for (i = 0; i < 7; i++)
			l[10 + 3 * i] = 2.0f + (float)i;	/* 7 distinct tops */
		l[50] = 1.5f;
		l[45] = 1.5f;	/* the 8th value, twice */
		topk(l, 64, 8, id, v);
		CB_CHECK(id[6] == 10 && id[7] == 45 && v[7] == 1.5f, "%s: tie at k: %u %u",
			 ops ? cb_isa_names[ops->level] : "ref", id[6], id[7]);
	}
}

/* cb_route() gives the same ids and weights whatever the variant. */
static void test_route_same_for_every_variant(void)
{
	float l[MAXN], w0[MAXK], w[MAXK];
	cb_u32 id0[MAXK], id[MAXK];
	int t, lvl;

	for (t = 0; t < 20000; t++) {
		int n = t % 2 ? 64 : 1 + (int)rndu(MAXN);
		int k = t % 2 ? 8 : 1 + (int)rndu(n < MAXK ? n : MAXK);
		int renorm = t % 4 < 2;
		float sum = 0.0f;
		int j;

		fill(l, n, t % 3 ? GEN_ROUTER : GEN_WIDE);
		cb_route(&cb_isa_scalar, l, n, k, renorm, id0, w0);
		for (j = 0; j < k; j++)
			sum += w0[j];
		CB_CHECK(renorm ? fabsf(sum - 1.0f) < 1e-5f : sum <= 1.0f + 1e-5f,
			 "weights sum %g (renorm %d)", sum, renorm);
		for (lvl = CB_ISA_AVX2; lvl < CB_ISA__COUNT; lvl++) {
			const struct cb_isa_ops *ops = cb_isa_get(lvl);

			if (!ops)
				continue;
			cb_route(ops, l, n, k, renorm, id, w);
			CB_CHECK(!memcmp(id, id0, k * 4) && !memcmp(w, w0, k * 4),
				 "%s route differs (n %d k %d)", cb_isa_names[ops->level], n, k);
		}
	}
}

/* The k best of v[0..n) (descending, ties to the lower index) into id. */
static void best_k(const double *v, int n, int k, int *id)
{
	int j, i, b;
	char used[MAXN * 2] = { 0 };

	for (j = 0; j < k; j++) {
		for (b = -1, i = 0; i < n; i++)
			if (!used[i] && (b < 0 || v[i] > v[b]))
				b = i;
		used[b] = 1;
		id[j] = b;
	}
}

/*
 * DeepSeek's routing (cb_route_grouped) against its definition computed
 * here in double: softmax or sigmoid scores, a selection bias, groups
 * ranked by the sum of their group_top best, top_k of the kept groups,
 * weights the unbiased scores, renormalised, scaled; and the same ids
 * and bits from every variant.
 */
static void test_grouped_route_matches_definition(void)
{
	float l[MAXN], bias[MAXN], tmp[4 * MAXN], w0[MAXK], w[MAXK];
	double sc[MAXN], sel[MAXN], gs[MAXN], mx, sum;
	cb_u32 id0[MAXK], id[MAXK], gid[MAXN];
	int t, lvl, i, j, g, want[MAXK], gk[MAXN], top[MAXK];

	for (t = 0; t < 4000; t++) {
		struct cb_model_config c = { 0 };
		static const int groups[] = { 1, 2, 4, 8 };
		int ng = groups[t % 4], per = 1 + (int)rndu(32), E = ng * per, kg, K;
		int sig = t % 3 == 0, use_bias = t % 2, norm = t % 5 < 3;

		if (E > MAXN)
			continue;
		kg = 1 + (int)rndu(ng);
		K = 1 + (int)rndu(CB_MIN(MAXK, kg * per));
		c.n_experts = (cb_u32)E;
		c.top_k = (cb_u32)K;
		c.norm_topk_prob = (cb_u32)norm;
		c.mla.score_func = sig ? CB_SCORE_SIGMOID : CB_SCORE_SOFTMAX;
		c.mla.sel_bias = (cb_u32)use_bias;
		if (ng > 1) {
			c.mla.n_group = (cb_u32)ng;
			c.mla.topk_group = (cb_u32)kg;
			c.mla.group_top = 1 + rndu(CB_MIN(per, 2));
		}
		c.mla.route_scale_bits = t % 7 ? 0x40200000u /* 2.5 */ : 0;
		fill(l, E, GEN_ROUTER);
		for (i = 0; i < E; i++)
			bias[i] = 0.05f * unif();
		cb_route_grouped(&cb_isa_scalar, &c, l, use_bias ? bias : NULL, tmp, gid, id0, w0);

		/* the definition, in double */
		for (mx = l[0], i = 1; i < E; i++)
			mx = l[i] > mx ? l[i] : mx;
		for (sum = 0, i = 0; i < E; i++)
			sum += sc[i] = sig ? 1.0 / (1.0 + exp(-(double)l[i])) : exp(l[i] - mx);
		for (i = 0; i < E; i++) {
			sc[i] = sig ? sc[i] : sc[i] / sum;
			sel[i] = sc[i] + (use_bias ? bias[i] : 0.0);
		}
		if (ng > 1) {
			for (g = 0; g < ng; g++) {
				best_k(sel + g * per, per, (int)c.mla.group_top, top);
				for (gs[g] = 0, j = 0; j < (int)c.mla.group_top; j++)
					gs[g] += sel[g * per + top[j]];
			}
			best_k(gs, ng, kg, gk);
			for (g = 0; g < ng; g++) {
				for (j = 0; j < kg && gk[j] != g; j++)
					;
				for (i = 0; j == kg && i < per; i++)
					sel[g * per + i] = -INFINITY;
			}
		}
		best_k(sel, E, K, want);
		for (sum = 1e-20, j = 0; j < K; j++)
			sum += sc[want[j]];
		for (j = 0; j < K; j++) {
			double ww = norm ? sc[want[j]] / sum : sc[want[j]];

			ww *= c.mla.route_scale_bits ? 2.5 : 1.0;
			CB_CHECK(id0[j] == (cb_u32)want[j] && fabs(w0[j] - ww) <= 1e-5 * fabs(ww) + 1e-7,
				 "t %d rank %d: id %u weight %g, want %d %g (E %d K %d groups %d/%d)",
				 t, j, id0[j], w0[j], want[j], ww, E, K, kg, ng);
		}
		for (lvl = CB_ISA_AVX2; lvl < CB_ISA__COUNT; lvl++) {
			const struct cb_isa_ops *ops = cb_isa_get(lvl);

			if (!ops)
				continue;
			cb_route_grouped(ops, &c, l, use_bias ? bias : NULL, tmp, gid, id, w);
			CB_CHECK(!memcmp(id, id0, K * 4) && !memcmp(w, w0, K * 4),
				 "%s grouped route differs (E %d K %d)", cb_isa_names[ops->level], E, K);
		}
	}
}

int main(void)
{
	printf("# best variant: %s\n", cb_isa_names[cb_isa_select(CB_ISA__COUNT - 1)->level]);
	CB_RUN(test_tables_have_topk);
	CB_RUN(test_reference_rules);
	CB_RUN(test_scalar_topk_matches_ref);
	CB_RUN(test_avx2_topk_matches_ref);
	CB_RUN(test_avx512_topk_matches_ref);
	CB_RUN(test_avx512_vnni_topk_matches_ref);
	CB_RUN(test_route_same_for_every_variant);
	CB_RUN(test_grouped_route_matches_definition);
	return cb_test_done();
}

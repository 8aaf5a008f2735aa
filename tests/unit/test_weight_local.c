// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_weight_local.c - the engine reads gemm weights where the host says
 * (struct cb_exec.weight_local: the kernel answers with the copy of the
 * model on the running CPU's NUMA node, kmod/colibri_numa.c).
 *
 * What it proves: with a hook that sends every weight pointer to a
 * bit-identical copy of the model, the logits are bit-identical to the
 * engine without a hook, and every pointer the engine asked about was a
 * tensor of the model; with a hook that sends them to another model of the
 * same shapes, the logits change, so the gemm reads the bytes the hook
 * returns and not the ones the tensor table names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cb_engine.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "util/host.h"
#include "colibri_format.h"

#define VOCAB 61
#define MAXB 16
#define NTOK 9
#define MAXT 512	/* tensors of one model */

#define SHAPE								\
	.vocab = VOCAB, .n_layers = 3, .n_heads = 4, .n_kv_heads = 2,	\
	.head_dim = 16, .dense_ffn = 64, .scale = 0.25f, .router_scale = 0.5f

static const struct cb_tm_spec specs[] = {
	{ SHAPE, .name = "mixtral-q8_0", .arch = COLIBRI_ARCH_MIXTRAL, .hidden = 64, .ffn = 64,
	  .n_exp = 8, .top_k = 2, .norm_topk = 1, .dt = CB_DT_Q8_0 },
	{ SHAPE, .name = "qwen2moe-f32", .arch = COLIBRI_ARCH_QWEN2_MOE, .hidden = 64, .ffn = 48,
	  .n_exp = 8, .top_k = 3, .shared_ffn = 64, .shared_gate = 1, .qkv_bias = 1,
	  .dense_layer = 2, .dt = CB_DT_F32 },
};

/* The data pointer of every tensor of @m (these architectures'), in a fixed order. */
static int tensors(const struct cb_tm_model *m, const void **p)
{
	cb_u32 l, x, n = 0;

	p[n++] = m->w.embed.data;
	p[n++] = m->w.final_norm.data;
	p[n++] = m->w.lm_head.data;
	for (l = 0; l < m->cfg.n_layers; l++) {
		const struct cb_layer_weights *L = &m->layers[l];
		const struct cb_tensor *t[] = {
			&L->attn_norm, &L->wq, &L->wk, &L->wv, &L->wo, &L->bq, &L->bk, &L->bv,
			&L->q_norm, &L->k_norm, &L->ffn_norm, &L->router, &L->shared_gate_proj,
			&L->shared_up_proj, &L->shared_down_proj, &L->shared_expert_gate,
			&L->mlp_gate, &L->mlp_up, &L->mlp_down,
		};

		for (x = 0; x < CB_ARRAY_SIZE(t); x++)
			p[n++] = t[x]->data;
		for (x = 0; x < m->cfg.n_experts; x++) {
			p[n++] = m->experts[l][x].gate.data;
			p[n++] = m->experts[l][x].up.data;
			p[n++] = m->experts[l][x].down.data;
		}
	}
	return (int)n;
}

/* The hook's table: from[i] is read at to[i]. */
static struct {
	const void *from[MAXT], *to[MAXT];
	int n;
	int hits, misses;	/* updated by every worker thread */
} map;

static const void *hook(struct cb_exec *ex, const void *w)
{
	int i;

	(void)ex;
	for (i = 0; i < map.n; i++)
		if (w && map.from[i] == w) {
			__atomic_fetch_add(&map.hits, 1, __ATOMIC_RELAXED);
			return map.to[i];
		}
	__atomic_fetch_add(&map.misses, 1, __ATOMIC_RELAXED);
	return w;
}

/* Logits of NTOK tokens of @m, last row, through @ex; 0 or -errno. */
static int logits(const struct cb_tm_model *m, struct cb_exec *ex, float *out)
{
	struct cb_engine_params p = { MAXB, 1, 32, cb_host_isa_cap(), 0 };
	cb_u64 size = cb_engine_arena_size(&m->cfg, &p);
	cb_u32 tok[NTOK], seq[NTOK] = { 0 }, pos[NTOK];
	cb_u8 mask[NTOK] = { 0 };
	struct cb_batch b = { .n_tokens = NTOK, .tokens = tok, .seq = seq, .pos = pos,
			      .logits_mask = mask, .logits = out };
	struct cb_engine *e;
	void *arena;
	int r, i;

	if (!size || posix_memalign(&arena, 64, size))
		return -1;
	for (i = 0; i < NTOK; i++) {
		tok[i] = (cb_u32)(i * 17 + 5) % VOCAB;
		pos[i] = (cb_u32)i;
	}
	mask[NTOK - 1] = 1;
	r = cb_engine_init(&e, &m->cfg, &m->w, &p, arena, size);
	if (!r)
		r = cb_engine_forward(e, ex, &b);
	free(arena);
	return r;
}

static void run_spec(const struct cb_tm_spec *sp)
{
	static struct cb_tm_model a, same, other;
	static const void *pa[MAXT], *ps[MAXT], *po[MAXT];
	struct cb_exec *ex = cb_host_exec_create(2);
	float ref[VOCAB], got[VOCAB];
	int n, i;

	CB_CHECK(ex != NULL, "no executor");
	if (!ex)
		return;
	cb_tm_seed(7);
	cb_tm_build(&a, sp);
	cb_tm_seed(7);
	cb_tm_build(&same, sp);		/* the same bytes, elsewhere */
	cb_tm_seed(8);
	cb_tm_build(&other, sp);	/* other bytes, the same shapes */
	n = tensors(&a, pa);
	CB_CHECK(n == tensors(&same, ps) && n == tensors(&other, po) && n <= MAXT, "%s: tables",
		 sp->name);
	CB_CHECK(logits(&a, ex, ref) == 0, "%s: forward without a hook", sp->name);

	/* a copy of the same bytes: nothing changes, every ask is a tensor */
	map.n = 0;
	for (i = 0; i < n; i++)
		if (pa[i]) {
			map.from[map.n] = pa[i];
			map.to[map.n++] = ps[i];
		}
	map.hits = map.misses = 0;
	ex->weight_local = hook;
	CB_CHECK(logits(&a, ex, got) == 0, "%s: forward with a hook", sp->name);
	CB_CHECK(!memcmp(ref, got, sizeof(ref)), "%s: a bit-identical copy changed the logits",
		 sp->name);
	CB_CHECK(map.hits > 0 && map.misses == 0, "%s: %d weight reads moved, %d not a tensor",
		 sp->name, map.hits, map.misses);

	/* another model's bytes: the gemms read them, the logits change */
	for (i = 0, map.n = 0; i < n; i++)
		if (pa[i]) {
			map.from[map.n] = pa[i];
			map.to[map.n++] = po[i];
		}
	CB_CHECK(logits(&a, ex, got) == 0, "%s: forward with the other hook", sp->name);
	CB_CHECK(memcmp(ref, got, sizeof(ref)) != 0,
		 "%s: the gemms did not read where the hook said", sp->name);
	cb_host_exec_destroy(ex);
}

static void test_gemm_reads_where_weight_local_says(void)
{
	unsigned int i;

	for (i = 0; i < CB_ARRAY_SIZE(specs); i++)
		run_spec(&specs[i]);
}

int main(void)
{
	CB_RUN(test_gemm_reads_where_weight_local_says);
	return cb_test_done();
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cmd_synth.c - "colibri synth": a random-weight .colibri model of any
 * shape, for benchmarks (docs/performance.md) and quick experiments.
 *
 * The random weights are a tensor source for libcolibri's one conversion
 * pipeline (convert/tensor_source.h), which quantizes and writes them as
 * colibri convert does a checkpoint's: rows are generated (xorshift64*
 * into f32, uniform with a standard deviation of 0.02, the usual init
 * scale) on the host thread pool, each row's generator seeded from (seed,
 * tensor, row) only, so the file is the same whatever the thread count.  Norm
 * weights are 1, biases small and random; the router (and the Qwen2-MoE
 * shared-expert gate) stay f32 as `colibri convert` keeps them.  --quant
 * takes what convert's does (quant_preset.h): one type, TYPE:pure, or one
 * of llama.cpp's presets, which choose each matrix's type by its role and
 * layer exactly as convert --quant does.  DeepSeek-V2/V3's MLA takes its
 * own options and defaults (synth_deepseek.c), and so do the scored routers
 * of DeepSeek and GLM-4.5 (synth_scored.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cbfile.h"
#include "arch/cb_arch.h"
#include "convert/tensor_source.h"
#include "core/cb_engine.h"
#include "quant/quant_preset.h"
#include "cli.h"
#include "cli_opts.h"
#include "synth.h"
#include "tokenizer.h"
#include "util/util.h"

#define SYNTH_STD 0.02f

static uint64_t mix64(uint64_t x)
{
	/* splitmix64 finaliser: decorrelates neighbouring seeds */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Uniform floats of standard deviation @std: 23 random mantissa bits make
 * a float in [1, 2); centred and scaled (uniform on [-a, a] has std a/sqrt3).
 */
static void fill_row(float *x, uint32_t n, uint64_t s, float std)
{
	const float a = std * 1.7320508f * 2.0f;
	uint32_t i;

	s |= 1;
	for (i = 0; i + 1 < n; i += 2) {
		uint64_t r;
		union { uint32_t u; float f; } lo, hi;

		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		r = s * 0x2545f4914f6cdd1dull;
		lo.u = 0x3f800000u | (uint32_t)(r >> 41);
		hi.u = 0x3f800000u | ((uint32_t)(r >> 9) & 0x7fffffu);
		x[i] = (lo.f - 1.5f) * a;
		x[i + 1] = (hi.f - 1.5f) * a;
	}
	if (i < n)
		x[i] = 0.0f;
}

static int is_norm(uint32_t role)
{
	return role == COLIBRI_T_FINAL_NORM || role == COLIBRI_T_ATTN_NORM ||
	       role == COLIBRI_T_FFN_NORM || role == COLIBRI_T_Q_NORM ||
	       role == COLIBRI_T_K_NORM || role == COLIBRI_T_MLA_Q_A_NORM ||
	       role == COLIBRI_T_MLA_KV_A_NORM || role == COLIBRI_T_DELTA_NORM;
}

/* ---- the random weights, as a tensor source (convert/tensor_source.h) ---- */

/* Each slot's rows seeded from (seed, its index): the same file for any thread count. */
static int synth_find(void *ctx, uint32_t index, const struct cb_format_slot *s,
		      struct tsrc_slot *t, char *err, size_t errlen)
{
	const struct synth_opts *o = ctx;

	t->keep_dt = CB_DT_F32;
	t->key = mix64(o->seed ^ mix64(0x5a17000000000000ull + index));
	return 0;
}

/*
 * Norm weights are 1, a DeltaNet's decay rates -1 (A_log 0: a decaying
 * state); everything else uniform with a std of SYNTH_STD.
 */
static void synth_rows(void *ctx, const struct cb_format_slot *s, const struct tsrc_slot *t,
		       const void *made, uint64_t first, uint64_t n, float *dst)
{
	uint64_t r;
	uint32_t i;

	for (r = 0; r < n; r++, dst += s->cols) {
		if (is_norm(s->role) || s->role == COLIBRI_T_DELTA_DECAY)
			for (i = 0; i < s->cols; i++)
				dst[i] = s->role == COLIBRI_T_DELTA_DECAY ? -1.0f : 1.0f;
		else
			fill_row(dst, s->cols, mix64(t->key ^ mix64(first + r)), SYNTH_STD);
	}
}

static uint32_t f32_bits(float f)
{
	union { float f; uint32_t u; } v = { .f = f };

	return v.u;
}

/* Was any of the MLA options given? */
static int mla_given(const struct synth_mla_opts *x)
{
	return x->q_lora >= 0 || x->kv_lora >= 0 || x->qk_nope >= 0 || x->qk_rope >= 0 ||
	       x->v_head >= 0;
}

/* Was any of the scored routers' options given? */
static int scored_given(const struct synth_mla_opts *x)
{
	return x->n_group >= 0 || x->topk_group >= 0 || x->shared_experts >= 0 ||
	       x->dense_layers >= 0 || x->dense_ffn >= 0 || !isnan(x->routed_scale);
}

/* The config, with the per-architecture conventions hfmodel.c applies. */
static int synth_config(const struct synth_opts *o, struct cb_model_config *c)
{
	const char *why = NULL;
	int blocks = !o->q.preset && cb_dtype_block((cb_u32)o->dtype) > 1;
	const struct cb_arch_desc *a = cb_arch_of((cb_u32)o->arch);
	int ds = a->attn == CB_ATTN_MLA, dense = a->ffn == CB_FFN_DENSE;
	int delta = a->attn == CB_ATTN_GATED_DELTA;
	int scored = a->router == CB_ROUTER_SCORED;
	int oss = cb_arch_uses_oss(a);
	char buf[200];
	cb_u32 l;

	memset(c, 0, sizeof(*c));
	if (o->hidden <= 0 || o->layers <= 0 || o->heads <= 0 || o->vocab <= 0 || o->ffn <= 0)
		why = "--hidden, --layers, --heads, --ffn and --vocab are required and > 0";
	else if (o->layers > CB_MAX_LAYERS)
		why = "--layers is above the engine's limit of 256";
	else if (o->head_dim && !oss && !delta)
		why = "--head-dim is a gpt_oss and qwen3_5_moe option (elsewhere hidden / heads)";
	else if (!delta && (o->delta.k_heads >= 0 || o->delta.v_heads >= 0 ||
			    o->delta.head_dim >= 0 || o->delta.conv >= 0 || o->delta.interval >= 0))
		why = "the Gated DeltaNet options are for qwen3_5_moe";
	else if (!ds && !o->head_dim && o->hidden % o->heads)
		why = "--heads does not divide --hidden";
	else if (!ds && (o->head_dim ? o->head_dim : o->hidden / o->heads) % 2)
		why = "head_dim (hidden / heads, or --head-dim) must be even";
	else if (oss && (o->window < 1 || o->window > o->context))
		why = "--window must be in 1..--context";
	else if (o->kv_heads <= 0 || o->heads % o->kv_heads)
		why = "--kv-heads must divide --heads";
	else if (!ds && mla_given(&o->mla))
		why = "the MLA options are for deepseek_v2 and deepseek_v3";
	else if (!scored && scored_given(&o->mla))
		why = "the routing options are for deepseek_v2, deepseek_v3 and glm4_moe";
	else if (o->hidden > SYNTH_MAX_COLS || o->ffn > SYNTH_MAX_COLS ||
		 o->shared_ffn > SYNTH_MAX_COLS)
		why = "--hidden, --ffn and --shared-ffn are limited to 65536 here";
	else if (blocks && (o->hidden % cb_dtype_block((cb_u32)o->dtype) ||
			    o->ffn % cb_dtype_block((cb_u32)o->dtype) ||
			    o->shared_ffn % cb_dtype_block((cb_u32)o->dtype)))
		why = "a block type needs --hidden, --ffn and --shared-ffn to be whole blocks "
		      "(a preset falls back where they are not)";
	else if (dense && (o->experts > 0 || o->shared_ffn))
		why = "llama is dense: no --experts or --shared-ffn";
	else if (!dense && (o->experts <= 0 || o->experts > CB_MAX_EXPERTS))
		why = "an MoE architecture needs --experts in 1..256";
	else if (!dense && (o->top_k <= 0 || o->top_k > o->experts || o->top_k > CB_MAX_TOP_K))
		why = "--top-k must be in 1..min(experts, 16)";
	else if (o->shared_ffn && a->ffn != CB_FFN_MOE_SHARED_GATED)
		why = "--shared-ffn is a qwen2_moe feature";
	if (why) {
		fprintf(stderr, "colibri synth: bad shape: %s\n", why);
		return -1;
	}

	c->arch = (cb_u32)o->arch;
	c->vocab_size = (cb_u32)o->vocab;
	c->hidden = (cb_u32)o->hidden;
	c->n_layers = (cb_u32)o->layers;
	c->n_heads = (cb_u32)o->heads;
	c->n_kv_heads = (cb_u32)o->kv_heads;
	c->head_dim = (cb_u32)(o->head_dim ? o->head_dim : ds ? 0 : o->hidden / o->heads);
	c->decoder_sparse_step = 1;
	c->rope_layout = CB_ROPE_NEOX;
	c->rope_theta_bits = a->synth.rope_theta_bits;
	c->rms_eps_bits = a->synth.rms_eps_bits;
	c->max_context = (cb_u32)o->context;
	c->qk_norm = a->qk_norm;
	if (dense) {
		c->dense_ffn = (cb_u32)o->ffn;
		return 0;
	}
	c->n_experts = (cb_u32)o->experts;
	c->top_k = (cb_u32)o->top_k;
	c->expert_ffn = (cb_u32)o->ffn;
	c->norm_topk_prob = a->synth.norm_topk_prob;
	c->qkv_bias = a->synth.qkv_bias;
	if (a->ffn == CB_FFN_MOE_SHARED_GATED) {
		c->shared_ffn = (cb_u32)o->shared_ffn;
		c->shared_gate = o->shared_ffn != 0;
	}
	if (oss) {
		/* GPT-OSS-20B/120B: even layers slide, the odd ones see everything */
		c->oss.sliding_window = (cb_u32)o->window;
		c->oss.swiglu_limit_bits = f32_bits(7.0f);
		c->oss.swiglu_alpha_bits = f32_bits(1.702f);
		for (l = 0; l < c->n_layers; l += 2)
			c->oss.sliding_layers[l / 32] |= 1u << (l % 32);
	}
	if (ds)
		why = synth_deepseek_config(o, c);
	if (!why && scored)
		why = synth_scored_config(o, c, buf, sizeof(buf));
	if (!why && delta)
		why = synth_delta_config(o, c, buf, sizeof(buf));
	if (why) {
		fprintf(stderr, "colibri synth: bad shape: %s\n", why);
		return -1;
	}
	return 0;
}

static void synth_usage(FILE *f)
{
	cb_u32 i, col = 29;

	/* every architecture of the table, wrapped under the first */
	fprintf(f, "usage: colibri synth --arch ");
	for (i = 0; i < cb_arch_count; i++) {
		const char *n = cb_archs[i]->name;
		int last = i + 1 == cb_arch_count;

		if (col + strlen(n) + 1 > 80) {
			fprintf(f, "\n%28s", "");
			col = 28;
		}
		col += (cb_u32)fprintf(f, "%s%s", n, last ? "\n" : "|");
	}
	fprintf(f,
		"         --hidden H --layers L --ffn F --heads NH --vocab V\n"
		"         [--experts E --top-k K] [--kv-heads NKV] [--shared-ffn S]\n"
		"         [--head-dim D --window W (gpt_oss; even layers slide, W 128)]\n"
		"         [--q-lora-rank R --kv-lora-rank R --qk-nope-dim D --qk-rope-dim D\n"
		"          --v-head-dim D (MLA, deepseek_v2/v3; --q-lora-rank 0: q_proj,\n"
		"          as V2-Lite;\n");
	synth_deepseek_usage(f);
	fprintf(f,
		"          --n-group G --topk-group G --shared-experts N --dense-layers N\n"
		"          --dense-ffn F --routed-scale X (scored routers; --n-group 1: none;\n");
	synth_scored_usage(f);
	fprintf(f,
		"          GLM's heads rotate their leading half)]\n");
	synth_delta_usage(f);
	fprintf(f,
		"         [--quant T] [--seed S] [--context N]\n"
		"         [--name NAME] [--threads N] [--tokenizer tokenizer.json]\n"
		"         -o OUT.colibri\n"
		"Writes a model of random weights (uniform, std 0.02; norms 1), with\n"
		"no tokenizer unless --tokenizer gives one (its ids must fit --vocab).\n"
		"--ffn is the per-expert size (the MLP size for llama).  DeepSeek's\n"
		"head is --qk-nope-dim + --qk-rope-dim; --kv-heads does not apply.\n"
		"Matrices get what --quant chooses for them, as colibri convert does\n"
		"(a type or one of llama.cpp's presets, q4_k_m, ...; default q8_0); norms,\n"
		"biases and the router stay f32.  The same seed gives the same file for\n"
		"any --threads.\n");
}

static long num_arg(const char *opt, const char *s)
{
	char name[32];
	uint64_t v;

	snprintf(name, sizeof(name), "--%s", opt);
	if (cli_u64("synth", name, s, &v) || v > (1ul << 30))
		return v > (1ul << 30) ? (long)(1ul << 30) + 1 : -1;
	return (long)v;
}

static int synth_parse(int argc, char **argv, struct synth_opts *o)
{
	static const struct option opts[] = {
		{ "arch", required_argument, NULL, 'a' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "layers", required_argument, NULL, 'L' },
		{ "experts", required_argument, NULL, 'E' },
		{ "top-k", required_argument, NULL, 'K' },
		{ "ffn", required_argument, NULL, 'F' },
		{ "heads", required_argument, NULL, 'n' },
		{ "kv-heads", required_argument, NULL, 'v' },
		{ "vocab", required_argument, NULL, 'V' },
		{ "shared-ffn", required_argument, NULL, 'S' },
		{ "quant", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "context", required_argument, NULL, 'c' },
		{ "head-dim", required_argument, NULL, 'D' },
		{ "window", required_argument, NULL, 'W' },
		{ "name", required_argument, NULL, 'N' },
		{ "tokenizer", required_argument, NULL, 't' },
		{ "q-lora-rank", required_argument, NULL, 0x2000 },
		{ "kv-lora-rank", required_argument, NULL, 0x2001 },
		{ "qk-nope-dim", required_argument, NULL, 0x2002 },
		{ "qk-rope-dim", required_argument, NULL, 0x2003 },
		{ "v-head-dim", required_argument, NULL, 0x2004 },
		{ "n-group", required_argument, NULL, 0x2005 },
		{ "topk-group", required_argument, NULL, 0x2006 },
		{ "shared-experts", required_argument, NULL, 0x2007 },
		{ "dense-layers", required_argument, NULL, 0x2008 },
		{ "dense-ffn", required_argument, NULL, 0x2009 },
		{ "routed-scale", required_argument, NULL, 0x200a },
		{ "linear-k-heads", required_argument, NULL, 0x200b },
		{ "linear-v-heads", required_argument, NULL, 0x200c },
		{ "linear-head-dim", required_argument, NULL, 0x200d },
		{ "conv-kernel", required_argument, NULL, 0x200e },
		{ "full-interval", required_argument, NULL, 0x200f },
		CLI_OPTION_THREADS,
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long *num;
	int c, li = 0;

	while ((c = getopt_long(argc, argv, "o:h", opts, &li)) != -1) {
		num = NULL;
		switch (c) {
		case 'a':
			if (!cb_arch_by_name(optarg)) {
				fprintf(stderr, "colibri synth: unknown --arch '%s'\n", optarg);
				return -1;
			}
			o->arch = (int)cb_arch_by_name(optarg)->id;
			break;
		case 'H': num = &o->hidden; break;
		case 'L': num = &o->layers; break;
		case 'E': num = &o->experts; break;
		case 'K': num = &o->top_k; break;
		case 'F': num = &o->ffn; break;
		case 'n': num = &o->heads; break;
		case 'v': num = &o->kv_heads; break;
		case 'V': num = &o->vocab; break;
		case 'S': num = &o->shared_ffn; break;
		case 'c': num = &o->context; break;
		case 'D': num = &o->head_dim; break;
		case 'W': num = &o->window; break;
		case 0x2000: num = &o->mla.q_lora; break;
		case 0x2001: num = &o->mla.kv_lora; break;
		case 0x2002: num = &o->mla.qk_nope; break;
		case 0x2003: num = &o->mla.qk_rope; break;
		case 0x2004: num = &o->mla.v_head; break;
		case 0x2005: num = &o->mla.n_group; break;
		case 0x2006: num = &o->mla.topk_group; break;
		case 0x2007: num = &o->mla.shared_experts; break;
		case 0x2008: num = &o->mla.dense_layers; break;
		case 0x2009: num = &o->mla.dense_ffn; break;
		case 0x200b: num = &o->delta.k_heads; break;
		case 0x200c: num = &o->delta.v_heads; break;
		case 0x200d: num = &o->delta.head_dim; break;
		case 0x200e: num = &o->delta.conv; break;
		case 0x200f: num = &o->delta.interval; break;
		case 0x200a:
			if (cli_double("synth", "--routed-scale", optarg, 1e-6, 1e6,
				       &o->mla.routed_scale))
				return -1;
			break;
		case 'q':
			if (cb_quant_parse(optarg, &o->q)) {
				fprintf(stderr, "colibri synth: unknown --quant '%s' (%s)\n",
					optarg, cb_quant_names());
				return -1;
			}
			if (o->q.dtype == CB_QUANT_KEEP) {
				fprintf(stderr, "colibri synth: --quant keep: random weights have no "
					"source type to keep\n");
				return -1;
			}
			o->dtype = o->q.dtype;
			break;
		case 's':
			if (cli_u64("synth", "--seed", optarg, &o->seed))
				return -1;
			break;
		case 'N': o->name = optarg; break;
		case 't': o->tokenizer = optarg; break;
		case CLI_OPT_THREADS:
			if (cli_int("synth", "--threads", optarg, 1, 1024, &o->threads))
				return -1;
			break;
		case 'o': o->out = optarg; break;
		case 'h': synth_usage(stdout); return 1;
		default: synth_usage(stderr); return -1;
		}
		if (num) {
			*num = num_arg(opts[li].name, optarg);
			if (*num < 0 || *num > (1l << 30)) {
				if (*num > 0)
					fprintf(stderr, "colibri synth: '%s' is too large\n", optarg);
				return -1;
			}
		}
	}
	if (optind != argc || !o->out || o->arch < 0) {
		if (optind != argc)
			fprintf(stderr, "colibri synth: unexpected argument '%s'\n", argv[optind]);
		else
			fprintf(stderr, "colibri synth: %s is required\n", o->out ? "--arch" : "-o");
		synth_usage(stderr);
		return -1;
	}
	if (!o->kv_heads)
		o->kv_heads = o->heads;
	return 0;
}

/*
 * --tokenizer: the file's bytes, stored verbatim as convert stores a
 * tokenizer.json, once the tokenizer loads and its ids fit the vocabulary;
 * its BOS/EOS ids go in the header.  NULL (and a message) otherwise.
 */
static char *synth_tokenizer(const struct synth_opts *o, struct cbfile_meta *meta)
{
	struct cb_tokenizer *tok;
	char err[512], *json;
	size_t len;

	json = cb_read_file(o->tokenizer, 64u << 20, &len);
	if (!json) {
		fprintf(stderr, "colibri synth: cannot read %s\n", o->tokenizer);
		return NULL;
	}
	tok = cb_tok_load(json, len, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "colibri synth: %s: %s\n", o->tokenizer, err);
		free(json);
		return NULL;
	}
	if (cb_tok_vocab_size(tok) > (size_t)o->vocab) {
		fprintf(stderr, "colibri synth: %s has %zu ids, more than --vocab %ld\n",
			o->tokenizer, cb_tok_vocab_size(tok), o->vocab);
		cb_tok_free(tok);
		free(json);
		return NULL;
	}
	meta->tokenizer_json = json;
	meta->tokenizer_len = len;
	meta->bos_id = cb_tok_bos_id(tok);
	meta->eos_id = cb_tok_eos_id(tok);
	cb_tok_free(tok);
	return json;
}

int cmd_synth(int argc, char **argv)
{
	struct synth_opts o = { .arch = -1, .dtype = CB_DT_Q8_0, .q = { 0, CB_DT_Q8_0 }, .seed = 1,
				.context = 4096, .window = 128, .mla = SYNTH_MLA_UNSET,
				.delta = SYNTH_DELTA_UNSET };
	struct cb_model_config cfg;
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	struct cbfile_writer *w = NULL;
	struct convert_opts co = { 0 };
	struct tensor_source ts = { .cfg = &cfg, .ctx = &o, .find = synth_find,
				    .rows = synth_rows };
	char err[512], name[64];
	uint64_t total = 0;
	uint32_t n;
	char *tok_json = NULL;
	double t0 = now_s();
	int r;

	r = synth_parse(argc, argv, &o);
	if (r)
		return r > 0 ? 0 : 2;
	if (synth_config(&o, &cfg))
		return 2;
	if (!o.name) {
		snprintf(name, sizeof(name), "synth-%s-%s", cb_arch_of((cb_u32)o.arch)->name,
			 o.q.preset ? cb_preset_name(o.q.preset) : cb_dtype_name(o.dtype));
		o.name = name;
	}
	meta.name = o.name;
	if (o.tokenizer) {
		tok_json = synth_tokenizer(&o, &meta);
		if (!tok_json)
			return 1;
	}
	w = cbfile_writer_begin(o.out, &cfg, &meta, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "colibri synth: %s\n", err);
		goto err;
	}
	co.quant = o.q;
	co.threads = o.threads;
	if (convert_tensors(&ts, w, &co, &total, err, sizeof(err))) {
		fprintf(stderr, "colibri synth: %s\n", err);
		goto err_w;
	}
	n = cbfile_writer_count(w);
	if (cbfile_writer_finish(w, err, sizeof(err))) {
		fprintf(stderr, "colibri synth: %s\n", err);
		w = NULL;
		goto err;
	}
	fprintf(stderr, "colibri synth: %s: %s, %u tensors, %.3f GiB of weights in %.1f s\n",
		o.out, cb_arch_of((cb_u32)o.arch)->name, n, total / (double)(1u << 30), now_s() - t0);
	free(tok_json);
	return 0;

err_w:
	cbfile_writer_abort(w);
err:
	free(tok_json);
	return 1;
}

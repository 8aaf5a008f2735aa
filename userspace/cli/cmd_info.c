// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri info - describe a model: a .colibri file (validated, checksums
 * verified with --verify), a GGUF file (loaded as logits/generate/bench load
 * it; one that cannot run is still described, with the reason) or a Hugging
 * Face directory.
 *
 *   colibri info MODEL [--json] [--verify]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "arch/cb_arch.h"
#include "arch/cb_gpt_oss.h"
#include "arch/cb_delta.h"
#include "model/cbfile.h"
#include "cli.h"
#include "import/gguf.h"
#include "import/hf_tiktoken.h"
#include "import/hfmodel.h"
#include "import/safetensors.h"
#include "tokenizer.h"

/* The architecture's short name, "?" for an unknown one. */
static const char *arch_short(cb_u32 id)
{
	const struct cb_arch_desc *a = cb_arch_of(id);

	return a ? a->name : "?";
}

struct dtype_stat {
	uint64_t count[CB_DT__COUNT + 1];	/* last: other (HF only) */
	uint64_t bytes[CB_DT__COUNT + 1];
};

struct tok_desc {
	const char *kind;	/* "none", "byte-level BPE", ... */
	long vocab;		/* -1 if unknown */
};

static float f32_of(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

/* What kind of tokenizer a tokenizer.json is, and its vocabulary size. */
static void describe_tokenizer(const char *json, size_t len, struct tok_desc *d)
{
	struct cb_tokenizer *t;
	cJSON *root, *model, *pre, *type;
	char err[256];

	d->kind = "none";
	d->vocab = -1;
	if (!json)
		return;
	d->kind = "unparsable tokenizer.json";
	t = cb_tok_load(json, len, err, sizeof(err));
	if (t) {
		d->vocab = (long)cb_tok_vocab_size(t);
		cb_tok_free(t);
	}
	root = cJSON_ParseWithLength(json, len);
	model = cJSON_GetObjectItemCaseSensitive(root, "model");
	type = cJSON_GetObjectItemCaseSensitive(model, "type");
	pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
	if (cJSON_IsString(type) && !strcmp(type->valuestring, "BPE")) {
		cJSON *bf = cJSON_GetObjectItemCaseSensitive(model, "byte_fallback");

		char *p = pre ? cJSON_PrintUnformatted(pre) : NULL;

		if (cJSON_IsTrue(bf))
			d->kind = "SentencePiece-style BPE (byte fallback)";
		else if (p && strstr(p, "ByteLevel"))
			d->kind = "byte-level BPE";
		else
			d->kind = "BPE";
		free(p);
	} else if (cJSON_IsString(type)) {
		d->kind = "unsupported tokenizer model";
	}
	if (!t)
		d->kind = "tokenizer.json the tokenizer cannot load";
	cJSON_Delete(root);
}

/*
 * What one session costs at a context of @ctx (the model's, at most 32k):
 * its engine's arena, one sequence of batches of 64 (KV cache or
 * recurrent state, and scratch).  0 if the engine refuses the shape.
 */
#define SESSION_BATCH 64
static uint64_t session_bytes(const struct cb_model_config *c, uint32_t *ctx)
{
	struct cb_engine_params p = { .max_batch_tokens = SESSION_BATCH, .n_seqs = 1 };

	*ctx = c->max_context && c->max_context < 32768 ? c->max_context : 32768;
	p.max_context = *ctx;
	return cb_engine_arena_size(c, &p);
}

static void print_text(const char *path, const char *name, const char *arch_name,
		       const struct cb_model_config *c, const struct dtype_stat *ds,
		       uint64_t n_tensors, uint64_t weight_bytes, uint64_t file_bytes,
		       const struct tok_desc *td, int bos, int eos, int pad, int add_bos,
		       const char *format)
{
	uint32_t l, moe = 0;
	int i;

	for (l = 0; l < c->n_layers; l++)
		moe += cb_layer_is_moe(c, l);
	printf("model:        %s\n", name);
	printf("source:       %s (%s)\n", path, format);
	printf("architecture: %s (%s)\n", arch_name, arch_short(c->arch));
	printf("dimensions:   %u layers, hidden %u, %u heads (%u kv), head_dim %u, "
	       "vocab %u, context %u\n", c->n_layers, c->hidden, c->n_heads, c->n_kv_heads,
	       c->head_dim, c->vocab_size, c->max_context);
	if (c->n_experts)
		printf("experts:      %u routed, top-%u%s, expert_ffn %u, %u MoE layers\n",
		       c->n_experts, c->top_k, c->norm_topk_prob ? " renormalised" : "",
		       c->expert_ffn, moe);
	else
		printf("experts:      none (dense)\n");
	if (c->shared_ffn)
		printf("shared:       expert ffn %u%s\n", c->shared_ffn,
		       c->shared_gate ? ", sigmoid gate" : "");
	if (moe < c->n_layers)
		printf("dense mlp:    ffn %u on %u layers\n", c->dense_ffn, c->n_layers - moe);
	if (c->rope_dim)
		printf("rope:         the leading %u of each head's %u dimensions\n", c->rope_dim,
		       c->head_dim);
	printf("attention:    rope %s theta %g, rms_eps %g%s%s%s%s\n",
	       c->rope_layout ? "interleaved" : "neox", f32_of(c->rope_theta_bits),
	       f32_of(c->rms_eps_bits), c->qkv_bias ? ", qkv bias" : "",
	       c->qk_norm == 1 ? ", q/k norm per head" : c->qk_norm == 2 ? ", q/k norm full" : "",
	       c->clip_qkv_bits ? ", clip_qkv" : "", c->tied_embeddings ? ", tied embeddings" : "");
	if (cb_arch_uses_oss(cb_arch_of(c->arch))) {
		cb_u32 l, nsl = 0;

		for (l = 0; l < c->n_layers; l++)
			nsl += cb_gpt_oss_sliding(c, l);
		printf("gpt-oss:      sinks, o/router/expert biases, window %u on %u of %u "
		       "layers, swiglu limit %g alpha %g\n", c->oss.sliding_window, nsl,
		       c->n_layers, f32_of(c->oss.swiglu_limit_bits),
		       f32_of(c->oss.swiglu_alpha_bits));
	}
	if (cb_is_mla(c)) {
		const struct cb_mla_config *m = &c->mla;

		printf("mla:          q_lora_rank %u, kv_lora_rank %u, qk_nope %u, qk_rope %u, "
		       "v_head %u; cache %u floats per token and layer\n", m->q_lora_rank,
		       m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim,
		       m->kv_lora_rank + m->qk_rope_dim);
	}
	if (c->n_experts && cb_arch_of(c->arch)->router == CB_ROUTER_SCORED) {
		const struct cb_mla_config *m = &c->mla;
		char groups[96] = "no groups";

		if (m->n_group > 1)
			snprintf(groups, sizeof(groups), "%u groups (top %u, ranked by best %u)",
				 m->n_group, m->topk_group, m->group_top);
		printf("routing:      %s%s, %s, scale %g\n", m->score_func ? "sigmoid" : "softmax",
		       m->sel_bias ? " with selection bias" : "", groups,
		       m->route_scale_bits ? f32_of(m->route_scale_bits) : 1.0);
	}
	if (cb_has_delta(c)) {
		const struct cb_delta_config *d = &c->delta;
		uint32_t nd = 0;

		for (l = 0; l < c->n_layers; l++)
			nd += cb_layer_is_delta(c, l);
		printf("delta:        %u of %u layers Gated DeltaNet: %u key heads of %u, %u value "
		       "heads of %u (%s order), conv %u; %.1f KiB of state a session (kept twice)\n", nd,
		       c->n_layers, d->k_heads, d->k_dim, d->v_heads, d->v_dim,
		       d->flags & CB_DELTA_F_TILED ? "tiled" : "grouped", d->conv_kernel,
		       cb_delta_state_floats(c) * 4.0 / 1024);
	}
	{
		uint32_t ctx;
		uint64_t sb = session_bytes(c, &ctx);

		printf("session:      %.1f MiB at a context of %u (one sequence, batches of %d)\n",
		       sb / 1048576.0, ctx, SESSION_BATCH);
	}
	printf("tensors:      %llu, %llu bytes of weights; %llu bytes on disk\n",
	       (unsigned long long)n_tensors, (unsigned long long)weight_bytes,
	       (unsigned long long)file_bytes);
	for (i = 0; i <= CB_DT__COUNT; i++)
		if (ds->count[i])
			printf("  %-6s      %llu tensors, %llu bytes\n",
			       i < CB_DT__COUNT ? cb_dtype_name(i) : "other",
			       (unsigned long long)ds->count[i], (unsigned long long)ds->bytes[i]);
	printf("tokenizer:    %s", td->kind);
	if (td->vocab >= 0)
		printf(", %ld tokens", td->vocab);
	printf(", bos %d, eos %d, pad %d%s\n", bos, eos, pad, add_bos ? ", adds bos" : "");
}

/* A scored router's rule (DeepSeek's, GLM's), as config.json names it. */
static void add_routing(cJSON *x, const struct cb_mla_config *m)
{
	cJSON_AddStringToObject(x, "scoring_func", m->score_func ? "sigmoid" : "softmax");
	cJSON_AddNumberToObject(x, "n_group", m->n_group);
	cJSON_AddNumberToObject(x, "topk_group", m->topk_group);
	cJSON_AddNumberToObject(x, "group_top", m->group_top);
	cJSON_AddBoolToObject(x, "selection_bias", m->sel_bias);
	cJSON_AddNumberToObject(x, "routed_scaling_factor",
				m->route_scale_bits ? f32_of(m->route_scale_bits) : 1.0);
}

static void print_json(const char *path, const char *name, const char *arch_name,
		       const struct cb_model_config *c, const struct dtype_stat *ds,
		       uint64_t n_tensors, uint64_t weight_bytes, uint64_t file_bytes,
		       const struct tok_desc *td, int bos, int eos, int pad, int add_bos,
		       const char *format)
{
	cJSON *o = cJSON_CreateObject(), *d = cJSON_CreateObject(), *t = cJSON_CreateObject();
	cJSON *ml = cJSON_CreateArray();
	uint32_t l;
	char *s;
	int i;

	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "source", path);
	cJSON_AddStringToObject(o, "format", format);
	cJSON_AddStringToObject(o, "architecture", arch_name);
	cJSON_AddStringToObject(o, "arch", arch_short(c->arch));
	cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
	cJSON_AddNumberToObject(o, "hidden", c->hidden);
	cJSON_AddNumberToObject(o, "n_layers", c->n_layers);
	cJSON_AddNumberToObject(o, "n_heads", c->n_heads);
	cJSON_AddNumberToObject(o, "n_kv_heads", c->n_kv_heads);
	cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
	cJSON_AddNumberToObject(o, "n_experts", c->n_experts);
	cJSON_AddNumberToObject(o, "top_k", c->top_k);
	cJSON_AddBoolToObject(o, "norm_topk_prob", c->norm_topk_prob);
	cJSON_AddNumberToObject(o, "expert_ffn", c->expert_ffn);
	cJSON_AddNumberToObject(o, "shared_ffn", c->shared_ffn);
	cJSON_AddBoolToObject(o, "shared_gate", c->shared_gate);
	cJSON_AddNumberToObject(o, "dense_ffn", c->dense_ffn);
	cJSON_AddNumberToObject(o, "decoder_sparse_step", c->decoder_sparse_step);
	for (l = 0; l < c->n_layers; l++)
		if (c->n_experts && !cb_layer_is_moe(c, l))
			cJSON_AddItemToArray(ml, cJSON_CreateNumber(l));
	cJSON_AddItemToObject(o, "dense_layers", ml);
	cJSON_AddStringToObject(o, "rope_layout", c->rope_layout ? "interleaved" : "neox");
	cJSON_AddNumberToObject(o, "rope_theta", f32_of(c->rope_theta_bits));
	cJSON_AddNumberToObject(o, "rope_dim", c->rope_dim ? c->rope_dim : c->head_dim);
	cJSON_AddNumberToObject(o, "rms_norm_eps", f32_of(c->rms_eps_bits));
	cJSON_AddNumberToObject(o, "clip_qkv", f32_of(c->clip_qkv_bits));
	cJSON_AddBoolToObject(o, "qkv_bias", c->qkv_bias);
	cJSON_AddStringToObject(o, "qk_norm", c->qk_norm == 1 ? "head" : c->qk_norm == 2 ? "full"
										: "none");
	cJSON_AddBoolToObject(o, "tied_embeddings", c->tied_embeddings);
	if (cb_arch_uses_oss(cb_arch_of(c->arch))) {
		cJSON *sl = cJSON_CreateArray();

		for (l = 0; l < c->n_layers; l++)
			if (cb_gpt_oss_sliding(c, l))
				cJSON_AddItemToArray(sl, cJSON_CreateNumber(l));
		cJSON_AddItemToObject(o, "sliding_layers", sl);
		cJSON_AddNumberToObject(o, "sliding_window", c->oss.sliding_window);
		cJSON_AddNumberToObject(o, "swiglu_limit", f32_of(c->oss.swiglu_limit_bits));
	}
	if (cb_is_mla(c)) {
		const struct cb_mla_config *m = &c->mla;
		cJSON *x = cJSON_CreateObject();

		cJSON_AddNumberToObject(x, "q_lora_rank", m->q_lora_rank);
		cJSON_AddNumberToObject(x, "kv_lora_rank", m->kv_lora_rank);
		cJSON_AddNumberToObject(x, "qk_nope_head_dim", m->qk_nope_dim);
		cJSON_AddNumberToObject(x, "qk_rope_head_dim", m->qk_rope_dim);
		cJSON_AddNumberToObject(x, "v_head_dim", m->v_head_dim);
		add_routing(x, m);
		cJSON_AddItemToObject(o, "mla", x);
	}
	if (cb_arch_of(c->arch)->router == CB_ROUTER_SCORED) {
		cJSON *x = cJSON_CreateObject();

		add_routing(x, &c->mla);
		cJSON_AddItemToObject(o, "routing", x);
	}
	if (cb_has_delta(c)) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddNumberToObject(x, "linear_num_key_heads", c->delta.k_heads);
		cJSON_AddNumberToObject(x, "linear_num_value_heads", c->delta.v_heads);
		cJSON_AddNumberToObject(x, "linear_key_head_dim", c->delta.k_dim);
		cJSON_AddNumberToObject(x, "linear_value_head_dim", c->delta.v_dim);
		cJSON_AddNumberToObject(x, "linear_conv_kernel_dim", c->delta.conv_kernel);
		cJSON_AddNumberToObject(x, "full_attention_interval", c->delta.full_interval);
		cJSON_AddBoolToObject(x, "tiled", !!(c->delta.flags & CB_DELTA_F_TILED));
		cJSON_AddNumberToObject(x, "state_bytes", (double)cb_delta_state_floats(c) * 4);
		cJSON_AddItemToObject(o, "delta", x);
	}
	cJSON_AddNumberToObject(o, "max_context", c->max_context);
	{
		uint32_t ctx;
		uint64_t sb = session_bytes(c, &ctx);

		cJSON_AddNumberToObject(o, "session_context", ctx);
		cJSON_AddNumberToObject(o, "session_bytes", (double)sb);
	}
	cJSON_AddNumberToObject(o, "n_tensors", (double)n_tensors);
	cJSON_AddNumberToObject(o, "weight_bytes", (double)weight_bytes);
	cJSON_AddNumberToObject(o, "file_bytes", (double)file_bytes);
	for (i = 0; i <= CB_DT__COUNT; i++) {
		cJSON *e;

		if (!ds->count[i])
			continue;
		e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "tensors", (double)ds->count[i]);
		cJSON_AddNumberToObject(e, "bytes", (double)ds->bytes[i]);
		cJSON_AddItemToObject(d, i < CB_DT__COUNT ? cb_dtype_name(i) : "other", e);
	}
	cJSON_AddItemToObject(o, "dtypes", d);
	cJSON_AddStringToObject(t, "kind", td->kind);
	cJSON_AddNumberToObject(t, "vocab_size", (double)td->vocab);
	cJSON_AddNumberToObject(t, "bos_id", bos);
	cJSON_AddNumberToObject(t, "eos_id", eos);
	cJSON_AddNumberToObject(t, "pad_id", pad);
	cJSON_AddBoolToObject(t, "add_bos", add_bos);
	cJSON_AddItemToObject(o, "tokenizer", t);
	s = cJSON_Print(o);
	if (s)
		puts(s);
	free(s);
	cJSON_Delete(o);
}

static int info_colibri(const char *path, int json, int verify)
{
	struct dtype_stat ds;
	struct tok_desc td;
	struct cbfile *f;
	const char *tok;
	char err[512], arch[32], fmt[32];
	uint64_t wb = 0;
	size_t tlen;
	uint32_t i;

	memset(&ds, 0, sizeof(ds));
	f = cbfile_open(path, verify ? CBFILE_VERIFY_CRC : 0, err, sizeof(err));
	if (!f) {
		fprintf(stderr, "colibri info: %s\n", err);
		return 1;
	}
	for (i = 0; i < f->info.n_tensors; i++) {
		ds.count[f->dir[i].dtype]++;
		ds.bytes[f->dir[i].dtype] += f->dir[i].size;
		wb += f->dir[i].size;
	}
	tok = cbfile_tokenizer(f, &tlen);
	describe_tokenizer(tok, tlen, &td);
	snprintf(arch, sizeof(arch), "%s", cb_arch_of(f->cfg.arch) ?
		 cb_arch_of(f->cfg.arch)->hf_classes[0] : "?");
	snprintf(fmt, sizeof(fmt), "colibri v%u%s", COLIBRI_FILE_VERSION,
		 verify ? ", checksums verified" : "");
	(json ? print_json : print_text)(path, f->info.name, arch, &f->cfg, &ds,
					 f->info.n_tensors, wb, f->info.file_size, &td,
					 f->info.bos_id, f->info.eos_id, f->info.pad_id,
					 !!(f->info.tok_flags & COLIBRI_TOK_F_ADD_BOS), fmt);
	cbfile_close(f);
	return 0;
}

static int info_hf(const char *dir, int json)
{
	struct dtype_stat ds;
	struct cb_model_config c;
	struct tok_desc td;
	struct st_set *st;
	char err[512], arch[64];
	uint64_t wb = 0, n = 0, fb = 0;
	const char *base;
	char *tok = NULL;
	size_t tlen = 0;
	int i, j;

	memset(&ds, 0, sizeof(ds));
	if (hf_config_load(dir, &c, arch, sizeof(arch), err, sizeof(err))) {
		fprintf(stderr, "colibri info: %s\n", err);
		return 1;
	}
	st = st_set_open_dir(dir, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "colibri info: %s\n", err);
		return 1;
	}
	for (i = 0; i < st->nfiles; i++) {
		fb += st->files[i]->map_size;
		for (j = 0; j < st->files[i]->ntensors; j++) {
			const struct st_tensor *t = &st->files[i]->tensors[j];
			int k = t->dtype == ST_F32 ? CB_DT_F32 : t->dtype == ST_F16 ? CB_DT_F16 :
				t->dtype == ST_BF16 ? CB_DT_BF16 : CB_DT__COUNT;

			ds.count[k]++;
			ds.bytes[k] += t->nbytes;
			wb += t->nbytes;
			n++;
		}
	}
	/* tokenizer.json, or the one its tiktoken.model stands for */
	tok = hf_tokenizer_json(dir, &tlen, err, sizeof(err));
	describe_tokenizer(tok, tok ? tlen : 0, &td);
	for (base = dir + strlen(dir); base > dir && base[-1] != '/'; base--)
		;
	(json ? print_json : print_text)(dir, *base ? base : dir, arch, &c, &ds, n, wb, fb, &td,
					 -1, -1, -1, 0, "Hugging Face directory");
	free(tok);
	st_set_close(st);
	return 0;
}

/* general.name, printable ASCII only, or the file's base name */
static void gguf_name(const struct gguf_file *gf, const char *path, char *out, size_t n)
{
	const char *base = strrchr(path, '/');
	struct gguf_str gs;
	size_t k = 0;

	if (!gguf_get_str(gf, "general.name", &gs))
		for (; k < gs.n && k < n - 1; k++)
			out[k] = gs.p[k] >= 0x20 && gs.p[k] < 0x7f ? gs.p[k] : '_';
	out[k] = 0;
	if (!k)
		snprintf(out, n, "%s", base ? base + 1 : path);
}

/*
 * A GGUF file the engine will not run: what its header says (name,
 * architecture, tensors by ggml type) on stdout, the loader's reason on
 * stderr, exit 1.
 */
static int info_gguf_refused(const char *path, int json, const char *why)
{
	uint64_t cnt[64] = { 0 }, bytes[64] = { 0 }, other = 0, ob = 0, i;
	char err[512], name[128], arch[64] = "?";
	struct gguf_file *gf;
	struct gguf_str gs;
	cJSON *o, *d;
	char *s;
	int k;

	gf = gguf_open(path, err, sizeof(err));
	if (!gf) {
		fprintf(stderr, "colibri info: %s\n", err);
		return 1;
	}
	gguf_name(gf, path, name, sizeof(name));
	if (!gguf_get_str(gf, "general.architecture", &gs))
		snprintf(arch, sizeof(arch), "%.*s", (int)(gs.n < 63 ? gs.n : 63), gs.p);
	for (i = 0; i < gf->n_tensors; i++) {
		const struct gguf_tensor *t = &gf->tensors[i];

		if (t->type < 64) {
			cnt[t->type]++;
			bytes[t->type] += t->nbytes;
		} else {
			other++;
			ob += t->nbytes;
		}
	}
	if (json) {
		o = cJSON_CreateObject();
		d = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddStringToObject(o, "source", path);
		cJSON_AddStringToObject(o, "format", "GGUF");
		cJSON_AddNumberToObject(o, "gguf_version", gf->version);
		cJSON_AddStringToObject(o, "architecture", arch);
		cJSON_AddNumberToObject(o, "n_tensors", (double)gf->n_tensors);
		for (k = 0; k < 64; k++)
			if (cnt[k])
				cJSON_AddNumberToObject(d, gguf_type_name(k), (double)cnt[k]);
		if (other)
			cJSON_AddNumberToObject(d, "other", (double)other);
		cJSON_AddItemToObject(o, "gguf_types", d);
		cJSON_AddBoolToObject(o, "runs", 0);
		cJSON_AddStringToObject(o, "error", why);
		s = cJSON_Print(o);
		if (s)
			puts(s);
		free(s);
		cJSON_Delete(o);
	} else {
		printf("model:        %s\n", name);
		printf("source:       %s (GGUF v%u)\n", path, gf->version);
		printf("architecture: %s\n", arch);
		printf("tensors:      %llu, by ggml type:\n", (unsigned long long)gf->n_tensors);
		for (k = 0; k < 64; k++)
			if (cnt[k])
				printf("  %-8s    %llu tensors, %llu bytes\n", gguf_type_name(k),
				       (unsigned long long)cnt[k], (unsigned long long)bytes[k]);
		if (other)
			printf("  other       %llu tensors, %llu bytes\n",
			       (unsigned long long)other, (unsigned long long)ob);
		printf("runs:         no (below)\n");
	}
	fflush(stdout);
	fprintf(stderr, "colibri info: %s\n", why);
	gguf_close(gf);
	return 1;
}

static int info_gguf(const char *path, int json)
{
	struct gguf_tok_ids ids = { -1, -1, -1, 0 };
	const struct gguf_file *gf;
	struct gguf_model *m;
	struct dtype_stat ds;
	struct tok_desc td;
	char err[512], name[128], fmt[32];
	uint64_t wb = 0, i;
	char *tok = NULL;
	size_t tlen = 0;

	m = gguf_model_load(path, err, sizeof(err));
	if (!m)
		return info_gguf_refused(path, json, err);
	gf = m->gf;
	memset(&ds, 0, sizeof(ds));
	for (i = 0; i < gf->n_tensors; i++) {
		int k = gguf_type_to_cb(gf->tensors[i].type);

		if (k < 0 || k >= CB_DT__COUNT)
			k = CB_DT__COUNT;
		ds.count[k]++;
		ds.bytes[k] += gf->tensors[i].nbytes;
		wb += gf->tensors[i].nbytes;
	}
	if (gguf_find_kv(gf, "tokenizer.ggml.model")) {
		tok = gguf_tokenizer_json(gf, &tlen, err, sizeof(err));
		gguf_tokenizer_ids(gf, &ids);
	}
	describe_tokenizer(tok, tlen, &td);
	if (!tok && gguf_find_kv(gf, "tokenizer.ggml.model"))
		td.kind = "tokenizer metadata the tokenizer cannot read";
	gguf_name(gf, path, name, sizeof(name));
	snprintf(fmt, sizeof(fmt), "GGUF v%u", gf->version);
	(json ? print_json : print_text)(path, name, m->hf.arch_name, &m->hf.cfg, &ds,
					 gf->n_tensors, wb, gf->size, &td, ids.bos, ids.eos,
					 ids.pad, !!(ids.flags & COLIBRI_TOK_F_ADD_BOS), fmt);
	free(tok);
	gguf_model_free(m);
	return 0;
}

static const char usage[] =
	"usage: colibri info MODEL.colibri|MODEL.gguf|HF_DIR [--json] [--verify]\n";

int cmd_info(int argc, char **argv)
{
	const char *model = NULL;
	int json = 0, verify = 0, i;
	struct stat sb;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--verify")) {
			verify = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (argv[i][0] != '-' && !model) {
			model = argv[i];
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!model) {
		fputs(usage, stderr);
		return 2;
	}
	if (stat(model, &sb)) {
		fprintf(stderr, "colibri info: %s: %m\n", model);
		return 1;
	}
	if (S_ISDIR(sb.st_mode))
		return info_hf(model, json);
	if (gguf_is_gguf(model) == 1) {
		if (verify) {
			fprintf(stderr, "colibri info: --verify checks a .colibri file's %s\n",
				"checksums; a GGUF file has none (its blocks are checked on every load)");
			return 2;
		}
		return info_gguf(model, json);
	}
	return info_colibri(model, json, verify);
}

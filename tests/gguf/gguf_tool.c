// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_tool - test helper for tests/gguf/run, linked with libcolibri.
 *
 *   gguf_tool info FILE.gguf          header, metadata keys, tensors
 *   gguf_tool load FILE.gguf          gguf_model_load(): config or the error
 *   gguf_tool tokjson FILE.gguf OUT   the generated tokenizer.json
 *   gguf_tool tokcmp FILE.gguf tokenizer.json CORPUS.jsonl
 *        encodes every corpus string (one JSON string per line) with the
 *        GGUF-derived tokenizer and with the original tokenizer.json, plain
 *        and with CB_TOK_ADD_SPECIAL, decodes both, and prints
 *        "strings N ids_differ N decode_differ N" (plus the first mismatch).
 *   gguf_tool logits MODEL "ID ID ..."
 *        MODEL is a .gguf or a .colibri file: one prefill forward pass on one
 *        thread, logits of every position printed with %.9g (one line each),
 *        so a GGUF and the .colibri converted from it can be compared bitwise.
 *   gguf_tool coltok FILE.colibri FILE.gguf
 *        the .colibri's tokenizer section is byte-identical to the GGUF's
 *        generated tokenizer.json and loads; prints its ids and flags.
 *   gguf_tool quant TYPE COLS IN.f32 OUT
 *        rows of COLS little-endian floats quantized to the engine weight
 *        type TYPE (its name: q4_K, iq4_xs, ...) with cb_quantize_row(), the
 *        quantizers `colibri convert` uses; for the test GGUF writer.
 *   gguf_tool dequant TYPE COLS IN OUT.f32
 *        the engine's cb_dequantize_row() of rows of TYPE.
 * Exit status: 0 on success, 1 on failure (error on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "ops/cb_ops.h"
#include "model/cbfile.h"
#include "import/gguf.h"
#include "util/host.h"
#include "tokenizer.h"
#include "util/util.h"

static int info(const char *path)
{
	char err[512];
	struct gguf_file *f = gguf_open(path, err, sizeof(err));
	uint64_t i;

	if (!f) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("version %u alignment %u n_kv %llu n_tensors %llu data_offset %llu\n",
	       f->version, f->alignment, (unsigned long long)f->n_kv,
	       (unsigned long long)f->n_tensors, (unsigned long long)f->data_offset);
	for (i = 0; i < f->n_kv; i++)
		printf("kv %.*s %s\n", (int)f->kv[i].key.n, f->kv[i].key.p,
		       gguf_vtype_name(f->kv[i].type));
	for (i = 0; i < f->n_tensors; i++) {
		const struct gguf_tensor *t = &f->tensors[i];

		printf("tensor %s %s %llu %llu %llu %llu offset %llu bytes %llu type %u rel %llu "
		       "dims %u\n", t->name, gguf_type_name(t->type),
		       (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
		       (unsigned long long)t->ne[2], (unsigned long long)t->ne[3],
		       (unsigned long long)(f->data_offset + t->offset),
		       (unsigned long long)t->nbytes, t->type, (unsigned long long)t->offset,
		       t->n_dims);
	}
	gguf_close(f);
	return 0;
}

static int load(const char *path)
{
	char err[512];
	struct gguf_model *m = gguf_model_load(path, err, sizeof(err));
	const struct cb_model_config *c;

	if (!m) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	c = &m->hf.cfg;
	printf("arch %u (%s) vocab %u hidden %u layers %u heads %u/%u head_dim %u experts %u "
	       "top_k %u expert_ffn %u shared_ffn %u dense_ffn %u rope_layout %u qk_norm %u "
	       "qkv_bias %u tied %u norm_topk %u\n", c->arch, m->hf.arch_name, c->vocab_size,
	       c->hidden, c->n_layers, c->n_heads, c->n_kv_heads, c->head_dim, c->n_experts,
	       c->top_k, c->expert_ffn, c->shared_ffn, c->dense_ffn, c->rope_layout,
	       c->qk_norm, c->qkv_bias, c->tied_embeddings, c->norm_topk_prob);
	gguf_model_free(m);
	return 0;
}

static int tokjson(const char *path, const char *out)
{
	char err[512];
	struct gguf_file *f = gguf_open(path, err, sizeof(err));
	size_t n;
	char *js;
	FILE *fp;

	if (!f) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	js = gguf_tokenizer_json(f, &n, err, sizeof(err));
	gguf_close(f);
	if (!js) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	fp = fopen(out, "wb");
	if (!fp || fwrite(js, 1, n, fp) != n || fclose(fp)) {
		fprintf(stderr, "%s: cannot write\n", out);
		free(js);
		return 1;
	}
	free(js);
	return 0;
}

static void show(const char *what, const int32_t *a, long n)
{
	long i;

	printf("# %s:", what);
	for (i = 0; i < n && i < 40; i++)
		printf(" %d", a[i]);
	printf("%s\n", n > 40 ? " ..." : "");
}

static int tokcmp(const char *path, const char *orig, const char *corpus)
{
	char err[512], line[1 << 16];
	struct gguf_file *f = gguf_open(path, err, sizeof(err));
	struct cb_tokenizer *a = NULL, *b = NULL;
	long strings = 0, idiff = 0, ddiff = 0;
	FILE *fp = fopen(corpus, "r");
	int rc = 1;

	if (!f || !fp) {
		fprintf(stderr, "%s\n", f ? "cannot open corpus" : err);
		goto out;
	}
	a = gguf_tokenizer_load(f, err, sizeof(err));
	if (!a) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	b = cb_tok_load_file(orig, err, sizeof(err));
	if (!b) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	while (fgets(line, sizeof(line), fp)) {
		cJSON *j = cJSON_Parse(line);
		const char *s;
		size_t len;
		unsigned int fl;

		if (!cJSON_IsString(j)) {
			cJSON_Delete(j);
			continue;
		}
		s = j->valuestring;
		len = strlen(s);
		strings++;
		for (fl = 0; fl <= CB_TOK_ADD_SPECIAL; fl += CB_TOK_ADD_SPECIAL) {
			int32_t *x = NULL, *y = NULL;
			long nx = cb_tok_encode_alloc(a, s, len, fl, &x);
			long ny = cb_tok_encode_alloc(b, s, len, fl, &y);

			if (nx != ny || (nx > 0 && memcmp(x, y, nx * sizeof(*x)))) {
				if (!idiff)
					printf("# first difference (flags %u) on %s", fl, line),
					show("gguf", x, nx), show("orig", y, ny);
				idiff++;
			} else if (nx > 0) {
				long dx = cb_tok_decode(a, x, nx, 0, NULL, 0);
				long dy = cb_tok_decode(b, y, ny, 0, NULL, 0);
				char *bx = malloc(dx + 1), *by = malloc(dy + 1);

				if (dx != dy || !bx || !by ||
				    cb_tok_decode(a, x, nx, 0, bx, dx) != dx ||
				    cb_tok_decode(b, y, ny, 0, by, dy) != dy || memcmp(bx, by, dx))
					ddiff++;
				free(bx);
				free(by);
			}
			free(x);
			free(y);
		}
		cJSON_Delete(j);
	}
	printf("strings %ld ids_differ %ld decode_differ %ld bos %d/%d eos %d/%d vocab %zu/%zu\n",
	       strings, idiff, ddiff, cb_tok_bos_id(a), cb_tok_bos_id(b), cb_tok_eos_id(a),
	       cb_tok_eos_id(b), cb_tok_vocab_size(a), cb_tok_vocab_size(b));
	rc = 0;
out:
	if (fp)
		fclose(fp);
	cb_tok_free(a);
	cb_tok_free(b);
	gguf_close(f);
	return rc;
}

static int logits(const char *path, const char *ids)
{
	const struct cb_model_config *cfg;
	const struct cb_model_weights *w;
	struct gguf_model *gm = NULL;
	struct cbfile *cf = NULL;
	struct cb_engine *e = NULL;
	struct cb_engine_params p = { 0 };
	struct cb_exec *ex = NULL;
	cb_u32 tok[256], seq[256] = { 0 }, pos[256];
	float *out = NULL;
	void *arena = NULL;
	char err[512], *end;
	int n = 0, i, j, rc = 1;
	cb_u64 asz;

	while (n < 256) {
		unsigned long v = strtoul(ids, &end, 10);

		if (end == ids)
			break;
		tok[n] = (cb_u32)v;
		pos[n] = n;
		n++;
		ids = end;
	}
	if (cbfile_is_colibri(path)) {
		cf = cbfile_open(path, CBFILE_VERIFY_CRC, err, sizeof(err));
		if (!cf)
			goto fail;
		cfg = &cf->cfg;
		w = &cf->w;
	} else {
		gm = gguf_model_load(path, err, sizeof(err));
		if (!gm)
			goto fail;
		cfg = &gm->hf.cfg;
		w = &gm->hf.w;
	}
	p.max_batch_tokens = n;
	p.n_seqs = 1;
	p.max_context = n;
	p.isa_max_level = cb_host_isa_cap();
	asz = cb_engine_arena_size(cfg, &p);
	arena = asz ? aligned_alloc(64, asz) : NULL;
	out = malloc((size_t)n * cfg->vocab_size * sizeof(float));
	ex = cb_host_exec_create(1);
	if (!n || !arena || !out || !ex) {
		snprintf(err, sizeof(err), "%s: bad tokens or out of memory", path);
		goto fail;
	}
	if (cb_engine_init(&e, cfg, w, &p, arena, asz)) {
		snprintf(err, sizeof(err), "%s: engine init failed", path);
		goto fail;
	}
	{
		struct cb_batch b = { .n_tokens = n, .tokens = tok, .seq = seq, .pos = pos,
				      .logits = out };

		if (cb_engine_forward(e, ex, &b)) {
			snprintf(err, sizeof(err), "%s: forward failed", path);
			goto fail;
		}
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < (int)cfg->vocab_size; j++)
			printf(j ? " %.9g" : "%.9g", out[(size_t)i * cfg->vocab_size + j]);
		putchar('\n');
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "%s\n", err);
out:
	cb_host_exec_destroy(ex);
	free(arena);
	free(out);
	gguf_model_free(gm);
	cbfile_close(cf);
	return rc;
}

static int coltok(const char *cpath, const char *gpath)
{
	char err[512];
	struct cbfile *cf = cbfile_open(cpath, 0, err, sizeof(err));
	struct gguf_file *g = cf ? gguf_open(gpath, err, sizeof(err)) : NULL;
	struct cb_tokenizer *tok = NULL;
	const char *t;
	char *js = NULL;
	size_t tl = 0, jl = 0;
	int rc = 1;

	if (!cf || !g)
		goto fail;
	t = cbfile_tokenizer(cf, &tl);
	js = gguf_tokenizer_json(g, &jl, err, sizeof(err));
	if (!js)
		goto fail;
	if (!t || tl != jl || memcmp(t, js, jl)) {
		snprintf(err, sizeof(err), "%s: tokenizer section (%zu bytes) differs from the "
			 "GGUF's tokenizer.json (%zu bytes)", cpath, tl, jl);
		goto fail;
	}
	tok = cb_tok_load(t, tl, err, sizeof(err));
	if (!tok)
		goto fail;
	printf("tokenizer %zu bytes vocab %zu bos %d eos %d pad %d flags %u\n", tl,
	       cb_tok_vocab_size(tok), cf->info.bos_id, cf->info.eos_id, cf->info.pad_id,
	       cf->info.tok_flags);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "%s\n", err);
out:
	cb_tok_free(tok);
	free(js);
	gguf_close(g);
	cbfile_close(cf);
	return rc;
}

static int dtype_of(const char *name)
{
	int dt;

	for (dt = 0; dt < CB_DT__COUNT; dt++)
		if (!strcasecmp(name, cb_dtype_name(dt)))
			return dt;
	return -1;
}

/* quant / dequant: whole files of rows through the engine's scalar code */
static int rows_tool(int quant, const char *type, const char *cols_s, const char *in,
		     const char *out)
{
	int dt = dtype_of(type), cols = atoi(cols_s), rc = 1;
	size_t rb = dt >= 0 && cols > 0 ? cb_dtype_row_bytes(dt, cols) : 0;
	size_t ib = quant ? 4 * (size_t)cols : rb, ob = quant ? rb : 4 * (size_t)cols, len;
	char *src = NULL, *dst = NULL;
	FILE *f = NULL;
	size_t r, n;

	if (!rb) {
		fprintf(stderr, "%s: not a weight type with rows of %s\n", type, cols_s);
		return 1;
	}
	src = cb_read_file(in, (size_t)1 << 34, &len);
	if (!src || len % ib) {
		fprintf(stderr, "%s: cannot read whole rows\n", in);
		goto out;
	}
	n = len / ib;
	dst = malloc(n * ob + 1);
	if (!dst)
		goto out;
	for (r = 0; r < n; r++) {
		if (quant)
			cb_quantize_row(dt, dst + r * ob, (const float *)(src + r * ib), cols);
		else
			cb_dequantize_row(dt, (float *)(dst + r * ob), src + r * ib, cols);
	}
	f = fopen(out, "wb");
	if (!f || fwrite(dst, ob, n, f) != n || fclose(f)) {
		fprintf(stderr, "%s: cannot write\n", out);
		f = NULL;
		goto out;
	}
	f = NULL;
	rc = 0;
out:
	if (f)
		fclose(f);
	free(src);
	free(dst);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 6 && (!strcmp(argv[1], "quant") || !strcmp(argv[1], "dequant")))
		return rows_tool(argv[1][0] == 'q', argv[2], argv[3], argv[4], argv[5]);
	if (argc == 4 && !strcmp(argv[1], "coltok"))
		return coltok(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "logits"))
		return logits(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "load"))
		return load(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "tokjson"))
		return tokjson(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "tokcmp"))
		return tokcmp(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: gguf_tool info|load FILE | tokjson FILE OUT | "
		"tokcmp FILE TOKENIZER.json CORPUS | quant|dequant TYPE COLS IN OUT\n");
	return 2;
}

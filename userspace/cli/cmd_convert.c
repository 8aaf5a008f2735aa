// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri convert - Hugging Face directory -> .colibri file.
 *
 *   colibri convert SRC -o OUT.colibri [--quant T] [--threads N]
 *                   [--name NAME] [--no-tokenizer]
 *
 * Streams: the safetensors shards are mmap'ed, the output is laid out from
 * the config first, then each tensor is converted a block of rows at a time
 * and written at its final offset.  Norms, biases, the router and the shared
 * expert gate stay f32; other matrices take what --quant chooses for their
 * role (quant_preset.h), quantized on every core (default: the source
 * type; bf16 for FP8 weights, which are dequantized with their block
 * scales as they are read, st_fp8.c).  The output appears under OUT only
 * when complete; OUT.tmp.PID is removed on error and on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "cbfile.h"
#include "chat_template.h"
#include "cli.h"
#include "cli_tmp.h"
#include "gguf.h"
#include "hf_gpt_oss.h"
#include "hf_deepseek.h"
#include "hfmodel.h"
#include "host.h"
#include "quant_par.h"
#include "quant_preset.h"
#include "safetensors.h"
#include "tokenizer.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: colibri convert HF_DIR -o OUT.colibri "
		"[--quant T] [--threads N] [--name NAME] [--no-tokenizer]\n"
		"       colibri convert FILE.gguf -o OUT.colibri [--name NAME] [--no-tokenizer]\n");
}

/* ---- progress ---------------------------------------------------------- */

struct progress {
	int on;
	uint64_t total, done;
	int last;
};

static void progress(struct progress *p, uint64_t add)
{
	int pct, i;

	p->done += add;
	if (!p->on || !p->total)
		return;
	pct = (int)(p->done * 100 / p->total);
	if (pct == p->last)
		return;
	p->last = pct;
	fputs("\r[", stderr);
	for (i = 0; i < 40; i++)
		fputc(i < pct * 40 / 100 ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%% %.1f/%.1f MiB", pct, p->done / 1048576.0,
		p->total / 1048576.0);
	if (p->done >= p->total)
		fputc('\n', stderr);
}

/* ---- tokenizer --------------------------------------------------------- */

/* A JSON integer id (or the first of a list of them), else -1. */
static int32_t json_id(const cJSON *v)
{
	if (cJSON_IsArray(v))
		v = cJSON_GetArrayItem(v, 0);
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 2147483647.0)
		return (int32_t)v->valuedouble;
	return -1;
}

/*
 * tokenizer.json verbatim, checked by loading it; ids from the tokenizer,
 * then tokenizer_config.json (BOS/EOS names, add_bos_token, pad_token),
 * then generation_config.json (bos/eos/pad ids), later sources winning.
 */
static int read_tokenizer(const char *dir, const struct cb_model_config *cfg,
			  struct cbfile_meta *meta, char **tok_json, char *err, size_t errlen)
{
	char path[PATH_MAX], terr[256];
	struct cb_tokenizer *tok;
	cJSON *root, *v;
	char *txt;
	size_t len;
	int add_bos = -1;

	snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
	*tok_json = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, &len);
	if (!*tok_json) {
		snprintf(err, errlen, "%s: %s (use --no-tokenizer to convert without one)", path,
			 errno ? strerror(errno) : "cannot read");
		return -1;
	}
	tok = cb_tok_load(*tok_json, len, terr, sizeof(terr));
	if (!tok) {
		snprintf(err, errlen, "%s: %s", path, terr);
		return -1;
	}
	meta->tokenizer_json = *tok_json;
	meta->tokenizer_len = len;

	snprintf(path, sizeof(path), "%s/tokenizer_config.json", dir);
	txt = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, &len);
	if (txt) {
		if (cb_tok_apply_config(tok, txt, len)) {
			snprintf(err, errlen, "%s: not valid JSON", path);
			free(txt);
			cb_tok_free(tok);
			return -1;
		}
		root = cJSON_ParseWithLength(txt, len);
		v = cJSON_GetObjectItemCaseSensitive(root, "add_bos_token");
		if (cJSON_IsBool(v))
			add_bos = cJSON_IsTrue(v);
		v = cJSON_GetObjectItemCaseSensitive(root, "pad_token");
		if (cJSON_IsObject(v))
			v = cJSON_GetObjectItemCaseSensitive(v, "content");
		if (cJSON_IsString(v))
			meta->pad_id = cb_tok_token_id(tok, v->valuestring, strlen(v->valuestring));
		cJSON_Delete(root);
		free(txt);
	}
	meta->bos_id = cb_tok_bos_id(tok);
	meta->eos_id = cb_tok_eos_id(tok);
	cb_tok_free(tok);

	snprintf(path, sizeof(path), "%s/generation_config.json", dir);
	txt = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, &len);
	if (txt) {
		root = cJSON_ParseWithLength(txt, len);
		if (!cJSON_IsObject(root)) {
			snprintf(err, errlen, "%s: not a JSON object", path);
			cJSON_Delete(root);
			free(txt);
			return -1;
		}
		v = cJSON_GetObjectItemCaseSensitive(root, "bos_token_id");
		if (json_id(v) >= 0)
			meta->bos_id = json_id(v);
		v = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
		if (json_id(v) >= 0)
			meta->eos_id = json_id(v);
		v = cJSON_GetObjectItemCaseSensitive(root, "pad_token_id");
		if (json_id(v) >= 0)
			meta->pad_id = json_id(v);
		cJSON_Delete(root);
		free(txt);
	}
	/* SentencePiece models (Llama, Mixtral) add BOS unless told otherwise */
	if (add_bos < 0)
		add_bos = cfg->arch == CB_ARCH_LLAMA || cfg->arch == CB_ARCH_MIXTRAL;
	if (add_bos && meta->bos_id >= 0)
		meta->tok_flags |= COLIBRI_TOK_F_ADD_BOS;
	return 0;
}

/* ---- tensors ----------------------------------------------------------- */

/* Find and check the source of every slot; choose its stored dtype. */
static int plan(struct cbfile_writer *w, const struct cb_model_config *cfg,
		const struct st_set *st, const struct cb_quant *quant, const struct st_tensor **src,
		uint8_t *dts, uint64_t *total, char *err, size_t errlen)
{
	uint32_t i, n = cbfile_writer_count(w);
	char name[256];

	*total = 0;
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;
		const struct st_tensor *t;
		int dt;

		cbfile_writer_slot(w, i, &s);
		if (hf_tensor_name(cfg, s.role, s.layer, s.expert, name, sizeof(name))) {
			snprintf(err, errlen, "no Hugging Face name for %s", cb_format_role_name(s.role));
			return -1;
		}
		t = st_set_find(st, name);
		if (!t) {
			snprintf(err, errlen, "tensor '%s' is missing", name);
			return -1;
		}
		if (t->dtype == ST_OTHER) {
			snprintf(err, errlen, "tensor '%s': dtype %s is not supported (F32, F16, BF16, "
				 "F8_E4M3, F8_E5M2 are)", name, t->dtype_name);
			return -1;
		}
		if (hf_deepseek_is_split(s.role) ? !hf_deepseek_kv_b_ok(cfg, t) :
		    s.vector ? (t->ndim != 1 || t->shape[0] != s.cols)
			     : (t->ndim != 2 || t->shape[0] != s.rows || t->shape[1] != s.cols)) {
			snprintf(err, errlen,
				 "tensor '%s': shape does not match config.json (want %u x %u)",
				 name, s.rows, s.cols);
			return -1;
		}
		if (s.vector)
			dt = CB_DT_F32;
		else	/* router and shared-expert gate: f32 there too */
			dt = cb_quant_choose(quant, cfg, s.role, s.layer, s.cols, st_keep_dtype(t));
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, dt)) {
			snprintf(err, errlen, "%s", cbfile_writer_error(w));
			return -1;
		}
		src[i] = t;
		dts[i] = (uint8_t)dt;
		*total += cbfile_writer_tensor_size(w, s.role, s.layer, s.expert);
	}
	return 0;
}

#define CHUNK_BYTES (4u << 20)

/* DeepSeek's k_b / v_b: cut from kv_b_proj in f32, then quantized */
static int convert_split(struct cbfile_writer *w, const struct cb_model_config *cfg,
			 const struct cb_format_slot *s, const struct st_tensor *t, uint32_t dt,
			 struct progress *pg, char *err, size_t errlen)
{
	uint64_t size = cb_dtype_row_bytes(dt, s->cols) * s->rows;
	char *q = malloc(size ? size : 1);
	int ret = -2;

	if (!q || hf_deepseek_split_rows(cfg, s->role, t, dt, q)) {
		snprintf(err, errlen, "%s: out of memory", t->name);
		goto out;
	}
	if (cb_quant_find_bad_scale(dt, q, size / cb_dtype_info(dt)->block_bytes) >= 0) {
		snprintf(err, errlen, "tensor '%s' (%s): quantized to %s, a scale is not finite",
			 t->name, cb_format_role_name(s->role), cb_dtype_name(dt));
		goto out;
	}
	ret = cbfile_writer_tensor_write(w, q, size) ? -1 : cbfile_writer_tensor_end(w);
	progress(pg, size);
out:
	free(q);
	return ret;
}

/*
 * Convert one tensor, a block of rows at a time (quantized on @ex's threads),
 * into the writer.  Return: 0, -1 for a writer error, -2 (with @err) for a
 * tensor whose quantized scales are not finite.
 */
static int convert_tensor(struct cbfile_writer *w, const struct cb_model_config *cfg,
			  const struct cb_format_slot *s,
			  const struct st_tensor *t, uint32_t dt, void *buf, struct cb_exec *ex,
			  struct progress *pg, char *err, size_t errlen)
{
	uint64_t rb = cb_dtype_row_bytes(dt, s->cols), r = 0, size = rb * s->rows;

	/* FP8: no NaN codes (read here, tensor by tensor, as it is converted) */
	if (st_check_values(t, err, errlen))
		return -2;
	if (cbfile_writer_tensor_begin(w, s->role, s->layer, s->expert))
		return -1;
	if (hf_deepseek_is_split(s->role))
		return convert_split(w, cfg, s, t, dt, pg, err, errlen);
	if ((int)dt == st_cb_dtype(t)) {
		/* same type: the stored bytes, unchanged */
		uint64_t off;

		for (off = 0; off < size; off += CHUNK_BYTES) {
			size_t n = size - off < CHUNK_BYTES ? size - off : CHUNK_BYTES;

			if (cbfile_writer_tensor_write(w, (const char *)t->data + off, n))
				return -1;
			progress(pg, n);
		}
		return cbfile_writer_tensor_end(w);
	}
	while (r < s->rows) {
		uint64_t nr = CHUNK_BYTES / rb ? CHUNK_BYTES / rb : 1, k;
		cb_s64 bad;

		if (nr > s->rows - r)
			nr = s->rows - r;
		if (cb_quantize_st_rows(ex, t, s->cols, r, nr, (int)dt, buf)) {
			snprintf(err, errlen, "%s: out of memory", t->name);
			return -2;
		}
		bad = cb_quant_find_bad_scale(dt, buf, nr * rb / cb_dtype_info(dt)->block_bytes);
		if (bad >= 0) {
			k = r + (uint64_t)bad * cb_dtype_info(dt)->block / s->cols;
			snprintf(err, errlen, "tensor '%s' (%s): row %llu quantized to %s has a scale "
				 "that is not finite (weights too large for the type)", t->name,
				 cb_format_role_name(s->role), (unsigned long long)k,
				 cb_dtype_name(dt));
			return -2;
		}
		if (cbfile_writer_tensor_write(w, buf, nr * rb))
			return -1;
		progress(pg, nr * rb);
		r += nr;
	}
	return cbfile_writer_tensor_end(w);
}

static int is_dir(const char *p)
{
	struct stat sb;

	return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

/* Default model name: the last component of the source path. */
static void default_name(const char *src, char *out, size_t len)
{
	const char *b;
	size_t n = strlen(src), i, j = 0;

	while (n > 1 && src[n - 1] == '/')
		n--;
	for (b = src + n; b > src && b[-1] != '/'; b--)
		;
	for (i = 0; b + i < src + n && j + 1 < len && j + 1 < COLIBRI_FILE_NAME_LEN; i++)
		if ((unsigned char)b[i] >= 0x20 && b[i] != 0x7f)
			out[j++] = b[i];
	out[j] = 0;
}

int cmd_convert(int argc, char **argv)
{
	const char *src = NULL, *out = NULL, *name = NULL;
	struct cb_quant quant = { CB_PRESET_NONE, CB_QUANT_KEEP };
	int no_tok = 0, i, rc = 1, threads = 0, r;
	struct cb_exec *ex = NULL;
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	const struct st_tensor **srcs = NULL;
	uint8_t *dts = NULL;
	struct cbfile_writer *w = NULL;
	struct st_set *st = NULL;
	struct cb_model_config cfg;
	struct progress pg = { .on = isatty(2), .last = -1 };
	char err[2 * PATH_MAX], defname[COLIBRI_FILE_NAME_LEN];
	const char *where = NULL;	/* prefix of the error line */
	const char *tmp;
	char *tok_json = NULL;
	struct cb_chat chat = { 0 };	/* the model's chat template, if any */
	void *buf = NULL;
	uint32_t n, k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--no-tokenizer")) {
			no_tok = 1;
		} else if (a[0] == '-' && i + 1 >= argc) {
			usage(stderr);
			return 2;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			out = argv[++i];
		} else if (!strcmp(a, "--name")) {
			name = argv[++i];
		} else if (!strcmp(a, "--quant")) {
			if (cb_quant_parse(argv[++i], &quant)) {
				fprintf(stderr, "colibri convert: unknown --quant '%s' (%s)\n",
					argv[i], cb_quant_names());
				return 2;
			}
		} else if (!strcmp(a, "--threads")) {
			threads = atoi(argv[++i]);
		} else if (a[0] != '-' && !src) {
			src = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!src || !out) {
		usage(stderr);
		return 2;
	}
	/* GGUF input: userspace/lib/gguf_convert.c (tensors kept as stored) */
	if (gguf_is_gguf(src)) {
		if (quant.preset || quant.dtype != CB_QUANT_KEEP) {
			fprintf(stderr, "colibri convert: %s: --quant is not supported for GGUF "
				"input (tensors are kept as stored)\n", src);
			return 2;
		}
		/* the writer inside names its temporary file this way */
		snprintf(err, sizeof(err), "%s.tmp.%ld", out, (long)getpid());
		tmp = err;
		cli_tmp_guard(&tmp, 1);
		rc = gguf_convert(src, out, name, no_tok, err, sizeof(err));
		cli_tmp_guard(NULL, 0);
		if (rc) {
			fprintf(stderr, "colibri convert: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (!is_dir(src)) {
		if (access(src, F_OK))
			fprintf(stderr, "colibri convert: %s: %s\n", src, strerror(errno));
		else
			fprintf(stderr, "colibri convert: %s: neither a Hugging Face model "
				"directory nor a GGUF file\n", src);
		return 1;
	}
	if (hf_config_load(src, &cfg, NULL, 0, err, sizeof(err)))
		goto fail;
	if (name) {
		meta.name = name;
	} else {
		default_name(src, defname, sizeof(defname));
		meta.name = defname;
	}
	if (!no_tok && read_tokenizer(src, &cfg, &meta, &tok_json, err, sizeof(err)))
		goto fail;
	if (cb_chat_from_model(&chat, src, 0, err, sizeof(err))) {
		where = "tokenizer_config.json";
		goto fail;
	}
	meta.chat_template = chat.tmpl;
	meta.chat_template_len = chat.tmpl_len;
	st = hf_open_tensors(src, err, sizeof(err));
	if (!st)
		goto fail;
	w = cbfile_writer_begin(out, &cfg, &meta, err, sizeof(err));
	if (!w) {
		/* name the source: the config came from there */
		where = "config.json";
		goto fail;
	}
	tmp = cbfile_writer_tmp_path(w);
	cli_tmp_guard(&tmp, 1);
	if (cfg.arch == CB_ARCH_GPT_OSS) {
		/* fused experts, rebuilt in memory (userspace/lib/hf_gpt_oss.c) */
		if (hf_gpt_oss_write(src, &quant, w, err, sizeof(err)))
			goto fail_src;
		goto finish;
	}
	n = cbfile_writer_count(w);
	srcs = calloc(n, sizeof(*srcs));
	dts = calloc(n, 1);
	if (!srcs || !dts) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	if (plan(w, &cfg, st, &quant, srcs, dts, &pg.total, err, sizeof(err)))
		goto fail_src;
	if (cbfile_writer_layout(w)) {
		snprintf(err, sizeof(err), "%s", cbfile_writer_error(w));
		goto fail;
	}
	buf = malloc(CHUNK_BYTES + 64 * 1024);
	ex = cb_host_exec_create(threads);
	if (!buf || !ex) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	for (k = 0; k < n; k++) {
		struct cb_format_slot s;

		cbfile_writer_slot(w, k, &s);
		r = convert_tensor(w, &cfg, &s, srcs[k], dts[k], buf, ex, &pg, err, sizeof(err));
		if (r == -2)
			goto fail_src;
		if (r) {
			snprintf(err, sizeof(err), "%s", cbfile_writer_error(w));
			goto fail;
		}
	}
finish:
	if (cbfile_writer_finish(w, err, sizeof(err))) {
		w = NULL;
		goto fail;
	}
	w = NULL;
	cli_tmp_guard(NULL, 0);
	rc = 0;
	goto out;
fail_src:
	where = "";
fail:
	if (where)
		fprintf(stderr, "colibri convert: %s%s%s: %s\n", src, *where ? "/" : "", where, err);
	else
		fprintf(stderr, "colibri convert: %s\n", err);
out:
	cbfile_writer_abort(w);
	cli_tmp_guard(NULL, 0);
	st_set_close(st);
	free(srcs);
	free(dts);
	free(tok_json);
	cb_chat_release(&chat);
	free(buf);
	cb_host_exec_destroy(ex);
	return rc;
}

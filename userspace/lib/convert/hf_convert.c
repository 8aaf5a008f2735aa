// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_convert.c - a Hugging Face directory to a .colibri file: the pipeline
 * `colibri convert` runs (cmd_convert.c only parses its options).
 *
 * Streams: the safetensors shards are mmap'ed, the output is laid out from
 * the config first, then each tensor is converted a block of rows at a time
 * and written at its final offset.  Norms, biases, the router and the shared
 * expert gate stay f32; other matrices take what the quant choice gives
 * their role (quant_preset.h), quantized on every core (default: the source
 * type; bf16 for FP8 weights, which are dequantized with their block
 * scales as they are read, st_fp8.c).  The output appears under OUT only
 * when complete; the writer's temporary file is removed on error.
 *
 * Each slot's source is import/hf_slot.h's: a tensor's rows as they are,
 * or made from fused tensors one slot at a time (GPT-OSS's experts, one
 * expert's matrix; DeepSeek's k_b and v_b).  Memory is bounded whatever the
 * model's size: the largest made slot's values in f32 (GPT-OSS-20B and
 * 120B: one 2880 x 2880 expert matrix, 31.6 MiB), a 4 MiB chunk and its
 * quantized copy; the shards themselves are mapped, not read in.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "arch/cb_arch.h"
#include "model/cbfile.h"
#include "chat/chat_template.h"
#include "convert/hf_convert.h"
#include "import/hf_slot.h"
#include "import/hfmodel.h"
#include "util/host.h"
#include "quant/quant_par.h"
#include "quant/quant_preset.h"
#include "import/safetensors.h"
#include "tokenizer.h"
#include "util/util.h"

/* The bytes written so far, told to the caller's progress hook. */
struct hf_progress {
	const struct hf_convert_opts *o;
	uint64_t total, done;
};

static void progress(struct hf_progress *p, uint64_t add)
{
	p->done += add;
	if (p->o->progress)
		p->o->progress(p->o->progress_arg, p->done, p->total);
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
		add_bos = cb_arch_of(cfg->arch)->hf_add_bos;
	if (add_bos && meta->bos_id >= 0)
		meta->tok_flags |= COLIBRI_TOK_F_ADD_BOS;
	return 0;
}

/* ---- tensors ----------------------------------------------------------- */

/*
 * Find and check the source of every slot (hf_slot_find()); choose its
 * stored dtype; the bytes to write and the largest made slot's buffer.
 */
static int plan(struct cbfile_writer *w, const struct cb_model_config *cfg,
		const struct st_set *st, const struct cb_quant *quant, struct hf_slot_src *src,
		uint8_t *dts, uint64_t *total, uint64_t *made_max, char *err, size_t errlen)
{
	uint32_t i, n = cbfile_writer_count(w);

	*total = 0;
	*made_max = 0;
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;
		int dt;

		cbfile_writer_slot(w, i, &s);
		if (hf_slot_find(st, cfg, &s, &src[i], err, errlen))
			return -1;
		if (s.vector)
			dt = CB_DT_F32;
		else if (src[i].raw_dt >= 0)	/* GPT-OSS's MXFP4 experts, kept */
			dt = src[i].raw_dt;
		else	/* router and shared-expert gate: f32 there too */
			dt = cb_quant_choose(quant, cfg, s.role, s.layer, s.cols, src[i].keep_dt);
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, dt)) {
			snprintf(err, errlen, "%s", cbfile_writer_error(w));
			return -1;
		}
		dts[i] = (uint8_t)dt;
		*total += cbfile_writer_tensor_size(w, s.role, s.layer, s.expert);
		if (src[i].made_bytes > *made_max)
			*made_max = src[i].made_bytes;
	}
	return 0;
}

#define CHUNK_BYTES (4u << 20)

/* A made slot's f32 values as a tensor of their own, read like any other. */
static struct st_tensor made_tensor(const struct st_tensor *from, const struct cb_format_slot *s,
				    const void *values)
{
	return (struct st_tensor){ .name = from->name, .dtype = ST_F32, .dtype_name = "F32",
				   .ndim = 2, .shape = { s->rows, s->cols },
				   .nelem = (uint64_t)s->rows * s->cols, .data = values,
				   .nbytes = (uint64_t)s->rows * s->cols * sizeof(float) };
}

/*
 * Convert one slot, a block of rows at a time (quantized on @ex's threads),
 * into the writer; a made slot is first made into @made.  Return: 0, -1
 * for a writer error, -2 (with @err) for a source that cannot be read or
 * a tensor whose quantized scales are not finite.
 */
static int convert_tensor(struct cbfile_writer *w, const struct cb_model_config *cfg,
			  const struct cb_format_slot *s, const struct hf_slot_src *src,
			  uint32_t dt, void *buf, void *made, struct cb_exec *ex,
			  struct hf_progress *pg, char *err, size_t errlen)
{
	uint64_t rb = cb_dtype_row_bytes(dt, s->cols), r = 0, size = rb * s->rows;
	const struct st_tensor *t = src->t;
	struct st_tensor mt;

	if (src->made) {
		if (hf_slot_fill(cfg, s, src, made, err, errlen))
			return -2;
		if (src->raw_dt >= 0) {
			/* made in its stored type: the bytes as they are */
			if (cbfile_writer_tensor_begin(w, s->role, s->layer, s->expert) ||
			    cbfile_writer_tensor_write(w, made, size))
				return -1;
			progress(pg, size);
			return cbfile_writer_tensor_end(w);
		}
		mt = made_tensor(src->t, s, made);
		t = &mt;
	} else if (st_check_values(t, err, errlen)) {
		/* FP8: no NaN codes (read here, tensor by tensor, as it is converted) */
		return -2;
	}
	if (cbfile_writer_tensor_begin(w, s->role, s->layer, s->expert))
		return -1;
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

/**
 * hf_convert() - see hf_convert.h.
 */
int hf_convert(const char *src, const char *out, const struct hf_convert_opts *o,
	       char *err, size_t errlen)
{
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	struct hf_progress pg = { .o = o };
	struct hf_slot_src *srcs = NULL;
	struct cbfile_writer *w = NULL;
	struct st_set *st = NULL;
	struct cb_exec *ex = NULL;
	struct cb_model_config cfg;
	struct cb_chat chat = { 0 };	/* the model's chat template, if any */
	char why[2 * PATH_MAX], defname[COLIBRI_FILE_NAME_LEN];
	const char *where = NULL;	/* prefix of the message: SRC/WHERE */
	char *tok_json = NULL;
	uint8_t *dts = NULL;
	void *buf = NULL, *made = NULL;
	uint64_t made_max;
	uint32_t n, k;
	int rc = -1, r;

	if (hf_config_load(src, &cfg, NULL, 0, why, sizeof(why)))
		goto fail;
	if (o->name) {
		meta.name = o->name;
	} else {
		default_name(src, defname, sizeof(defname));
		meta.name = defname;
	}
	if (!o->no_tokenizer && read_tokenizer(src, &cfg, &meta, &tok_json, why, sizeof(why)))
		goto fail;
	if (cb_chat_from_model(&chat, src, 0, why, sizeof(why))) {
		where = "tokenizer_config.json";
		goto fail;
	}
	meta.chat_template = chat.tmpl;
	meta.chat_template_len = chat.tmpl_len;
	st = hf_open_tensors(src, why, sizeof(why));
	if (!st)
		goto fail;
	w = cbfile_writer_begin(out, &cfg, &meta, why, sizeof(why));
	if (!w) {
		/* name the source: the config came from there */
		where = "config.json";
		goto fail;
	}
	n = cbfile_writer_count(w);
	srcs = calloc(n, sizeof(*srcs));
	dts = calloc(n, 1);
	if (!srcs || !dts) {
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	if (plan(w, &cfg, st, &o->quant, srcs, dts, &pg.total, &made_max, why, sizeof(why)))
		goto fail_src;
	if (cbfile_writer_layout(w)) {
		snprintf(why, sizeof(why), "%s", cbfile_writer_error(w));
		goto fail;
	}
	buf = malloc(CHUNK_BYTES + 64 * 1024);
	made = made_max ? aligned_alloc(64, (made_max + 63) / 64 * 64) : NULL;
	ex = cb_host_exec_create(o->threads);
	if (!buf || (made_max && !made) || !ex) {
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	for (k = 0; k < n; k++) {
		struct cb_format_slot s;

		cbfile_writer_slot(w, k, &s);
		r = convert_tensor(w, &cfg, &s, &srcs[k], dts[k], buf, made, ex, &pg, why,
				   sizeof(why));
		if (r == -2)
			goto fail_src;
		if (r) {
			snprintf(why, sizeof(why), "%s", cbfile_writer_error(w));
			goto fail;
		}
	}
	r = cbfile_writer_finish(w, why, sizeof(why));
	w = NULL;
	if (r)
		goto fail;
	rc = 0;
	goto out;
fail_src:
	where = "";
fail:
	if (where)
		snprintf(err, errlen, "%s%s%s: %s", src, *where ? "/" : "", where, why);
	else
		snprintf(err, errlen, "%s", why);
out:
	cbfile_writer_abort(w);
	st_set_close(st);
	free(srcs);
	free(dts);
	free(tok_json);
	cb_chat_release(&chat);
	free(buf);
	free(made);
	cb_host_exec_destroy(ex);
	return rc;
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_convert.c - a Hugging Face directory to a .colibri file, what
 * `colibri convert` runs (cmd_convert.c only parses its options): the
 * config, tokenizer and chat template here, the tensors through the one
 * pipeline (convert.c) with the checkpoint as its tensor source.
 *
 * The safetensors shards are mmap'ed.  Norms, biases, the router and the
 * shared expert gate stay f32; other matrices take what the quant choice
 * gives their role (quant_preset.h; default: the source type; bf16 for FP8
 * weights, which are dequantized with their block scales as they are
 * read, st_fp8.c).  Each slot's source is import/hf_slot.h's: a tensor's
 * rows as they are, or made from fused tensors one slot at a time
 * (GPT-OSS's experts, one expert's matrix; DeepSeek's k_b and v_b).
 * Memory is bounded whatever the model's size: the largest made slot's
 * values in f32 (GPT-OSS-20B and 120B: one 2880 x 2880 expert matrix,
 * 31.6 MiB), a 4 MiB chunk and its quantized copy.  The output appears
 * under OUT only when complete; the writer's temporary file is removed on
 * error.
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
#include "convert/tensor_source.h"
#include "import/hf_slot.h"
#include "import/hf_tiktoken.h"
#include "import/hfmodel.h"
#include "import/safetensors.h"
#include "quant/quant_preset.h"
#include "tokenizer.h"
#include "util/util.h"

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

	/* tokenizer.json, or the one its tiktoken.model stands for */
	*tok_json = hf_tokenizer_json(dir, &len, terr, sizeof(terr));
	if (!*tok_json) {
		snprintf(err, errlen, "%s (use --no-tokenizer to convert without one)", terr);
		return -1;
	}
	tok = cb_tok_load(*tok_json, len, terr, sizeof(terr));
	if (!tok) {
		snprintf(err, errlen, "%s/tokenizer.json: %s", dir, terr);
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

/* ---- tensors: the checkpoint as a tensor source ------------------------ */

struct hf_source {
	const struct st_set *st;
	const struct cb_model_config *cfg;
};

/* The slot's source as hf_slot.h says it (hf_slot_find()). */
static void to_hf(const struct tsrc_slot *t, struct hf_slot_src *h)
{
	*h = (struct hf_slot_src){ .t = t->src[0], .scales = t->src[1], .keep_dt = t->keep_dt,
				   .raw_dt = t->raw_dt, .made = !!t->made_bytes,
				   .made_bytes = t->made_bytes };
}

static int hf_find(void *ctx, uint32_t index, const struct cb_format_slot *s,
		   struct tsrc_slot *t, char *err, size_t errlen)
{
	const struct hf_source *hs = ctx;
	struct hf_slot_src h;

	if (hf_slot_find(hs->st, hs->cfg, s, &h, err, errlen))
		return -1;
	t->name = h.t->name;
	t->keep_dt = h.keep_dt;
	t->raw_dt = h.raw_dt;
	t->made_bytes = h.made ? h.made_bytes : 0;
	t->src[0] = h.t;
	t->src[1] = h.scales;
	if (!h.made) {
		/* F32, F16, BF16: the mapped bytes are the engine's */
		t->bytes = h.t->data;
		t->bytes_dt = st_cb_dtype(h.t);
	}
	return 0;
}

static int hf_begin(void *ctx, const struct cb_format_slot *s, struct tsrc_slot *t, void *made,
		    char *err, size_t errlen)
{
	const struct hf_source *hs = ctx;
	struct hf_slot_src h;

	if (!t->made_bytes)	/* FP8: no NaN codes (read here, as it is converted) */
		return st_check_values(t->src[0], err, errlen);
	to_hf(t, &h);
	if (hf_slot_fill(hs->cfg, s, &h, made, err, errlen))
		return -1;
	t->bytes = made;
	t->bytes_dt = t->raw_dt >= 0 ? t->raw_dt : CB_DT_F32;
	return 0;
}

static void hf_rows(void *ctx, const struct cb_format_slot *s, const struct tsrc_slot *t,
		    const void *made, uint64_t first, uint64_t n, float *dst)
{
	if (t->made_bytes)
		memcpy(dst, (const float *)made + first * s->cols, n * s->cols * sizeof(float));
	else
		st_to_f32(dst, t->src[0], first * s->cols, n * s->cols);
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
	struct convert_opts co = { .quant = o->quant, .threads = o->threads,
				   .progress = o->progress, .progress_arg = o->progress_arg };
	struct cbfile_writer *w = NULL;
	struct st_set *st = NULL;
	struct cb_model_config cfg;
	struct cb_chat chat = { 0 };	/* the model's chat template, if any */
	struct hf_source hs;
	struct tensor_source ts = { .cfg = &cfg, .ctx = &hs, .find = hf_find, .begin = hf_begin,
				    .rows = hf_rows };
	char why[2 * PATH_MAX], defname[COLIBRI_FILE_NAME_LEN];
	const char *where = NULL;	/* prefix of the message: SRC/WHERE */
	char *tok_json = NULL;
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
	hs = (struct hf_source){ .st = st, .cfg = &cfg };
	r = convert_tensors(&ts, w, &co, NULL, why, sizeof(why));
	if (r == -2)
		goto fail_src;
	if (r)
		goto fail;
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
	free(tok_json);
	cb_chat_release(&chat);
	return rc;
}

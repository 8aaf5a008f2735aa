// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_convert.c - GGUF -> .colibri for `colibri convert`.  Kept apart from
 * gguf_model.c so that programs which only run GGUF files do not link the
 * .colibri writer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/cb_format.h"
#include "model/cbfile.h"
#include "convert/model_source.h"
#include "import/gguf.h"
#include "tokenizer.h"

int gguf_convert(const char *src, const char *out, const char *name, int no_tokenizer,
		 char *err, size_t errlen)
{
	struct gguf_model *m = gguf_model_load(src, err, errlen);
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	struct cbfile_writer *w = NULL;
	struct convert_opts co = { .quant = { 0 } };
	struct tensor_source ts;
	char *tj = NULL, gname[COLIBRI_FILE_NAME_LEN], why[1024];
	struct gguf_tok_ids ids;
	struct gguf_str gs;
	size_t tl = 0, k;
	int r = -1;

	if (!m)
		return -1;
	/* the tokenizer is optional; a present but unusable one is an error */
	if (!no_tokenizer && gguf_find_kv(m->gf, "tokenizer.ggml.model")) {
		struct cb_tokenizer *tok;

		tj = gguf_tokenizer_json(m->gf, &tl, err, errlen);
		if (!tj)
			goto out;
		/* store only what the reader will be able to load */
		tok = gguf_tokenizer_load(m->gf, err, errlen);
		if (!tok)
			goto out;
		cb_tok_free(tok);
		meta.tokenizer_json = tj;
		meta.tokenizer_len = tl;
		gguf_tokenizer_ids(m->gf, &ids);
		meta.bos_id = ids.bos;
		meta.eos_id = ids.eos;
		meta.pad_id = ids.pad;
		meta.tok_flags = ids.flags;
	}
	/* the chat template, verbatim (it stays mapped until the writer is done) */
	if (!gguf_get_str(m->gf, "tokenizer.chat_template", &gs) && gs.n) {
		meta.chat_template = gs.p;
		meta.chat_template_len = (size_t)gs.n;
	}
	if (!name && !gguf_get_str(m->gf, "general.name", &gs)) {
		/* printable ASCII only, truncated: the header's name rules */
		for (k = 0; k < gs.n && k < sizeof(gname) - 1; k++)
			gname[k] = gs.p[k] >= 0x20 && gs.p[k] < 0x7f ? gs.p[k] : '_';
		gname[k] = 0;
		name = k ? gname : NULL;
	}
	meta.name = name;
	w = cbfile_writer_begin(out, &m->hf.cfg, &meta, err, errlen);
	if (!w)
		goto out;
	model_source(&ts, &m->hf);
	r = convert_tensors(&ts, w, &co, NULL, why, sizeof(why));
	if (r) {
		/* a tensor the file lacks is the source's; the writer's, the output's */
		snprintf(err, errlen, "%s: %s", r == -2 ? src : out, why);
		r = -1;
		goto abort;
	}
	r = cbfile_writer_finish(w, err, errlen);
	w = NULL;
	goto out;
abort:
	cbfile_writer_abort(w);
out:
	free(tj);
	gguf_model_free(m);
	return r;
}

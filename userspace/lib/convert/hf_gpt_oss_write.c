// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_gpt_oss_write.c - `colibri convert` of a GPT-OSS directory: the model
 * is loaded whole (hf_model_load(): its fused experts are rebuilt in
 * memory, hf_gpt_oss.c), and every tensor the .colibri file's config
 * requires is put in the type the load gave it.
 */
#include <stdio.h>

#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "model/cbfile.h"
#include "import/hf_gpt_oss.h"
#include "import/hfmodel.h"
#include "convert/model_write.h"

int hf_gpt_oss_write(const char *dir, const struct cb_quant *q, struct cbfile_writer *w,
		     char *err, size_t errlen)
{
	struct hf_model *m = hf_model_load(dir, q, err, errlen);
	int r;

	if (!m)
		return -1;
	r = hf_model_write(m, w, err, errlen);
	hf_model_free(m);
	return r ? -1 : 0;
}

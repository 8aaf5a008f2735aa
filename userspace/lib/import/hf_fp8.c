// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_fp8.c - a Hugging Face directory's tensors, with the FP8 block
 * scales its config.json declares attached (st_fp8.c):
 *
 *   "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
 *                           "weight_block_size": [128, 128],
 *                           "activation_scheme": "dynamic"}
 *
 * as DeepSeek-V3/R1 and Kimi-K2 ship, for any architecture.  The
 * activation scheme is not used: the engine's activations stay f32 (or its
 * own integer forms), whatever the checkpoint was trained to run with.
 * Another quant_method (GPT-OSS's "mxfp4", ...) declares no FP8 blocks: an
 * FP8 tensor next to it is refused by name.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "import/hfmodel.h"
#include "import/safetensors.h"
#include "util/util.h"

/* config.json's block size: 0 x 0 when it declares none; -1 if malformed. */
static int block_size(const char *dir, const cJSON *root, uint32_t *br, uint32_t *bc,
		      char *err, size_t errlen)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
	const cJSON *m, *f, *b;
	double v[2];
	int i;

	*br = *bc = 0;
	if (!q || cJSON_IsNull(q))
		return 0;
	if (!cJSON_IsObject(q)) {
		snprintf(err, errlen, "%s/config.json: 'quantization_config' is not an object", dir);
		return -1;
	}
	m = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
	if (!cJSON_IsString(m) || strcmp(m->valuestring, "fp8"))
		return 0;
	f = cJSON_GetObjectItemCaseSensitive(q, "fmt");
	if (f && (!cJSON_IsString(f) || (strcmp(f->valuestring, "e4m3") &&
					 strcmp(f->valuestring, "e5m2")))) {
		snprintf(err, errlen, "%s/config.json: quantization_config 'fmt' must be \"e4m3\" "
			 "or \"e5m2\"", dir);
		return -1;
	}
	b = cJSON_GetObjectItemCaseSensitive(q, "weight_block_size");
	if (!b || cJSON_IsNull(b)) {
		snprintf(err, errlen, "%s/config.json: quantization_config fp8 without "
			 "'weight_block_size' (one scale per tensor) is not supported", dir);
		return -1;
	}
	for (i = 0; i < 2 && cJSON_IsArray(b) && cJSON_GetArraySize(b) == 2; i++) {
		const cJSON *x = cJSON_GetArrayItem(b, i);

		v[i] = cJSON_IsNumber(x) ? x->valuedouble : -1;
		if (!(v[i] >= 1 && v[i] <= 65536 && v[i] == (double)(uint32_t)v[i]))
			break;
	}
	if (i != 2) {
		snprintf(err, errlen, "%s/config.json: quantization_config 'weight_block_size' "
			 "must be two integers from 1 to 65536", dir);
		return -1;
	}
	*br = (uint32_t)v[0];
	*bc = (uint32_t)v[1];
	return 0;
}

struct st_set *hf_open_tensors(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct st_set *st;
	cJSON *root;
	uint32_t br, bc;
	char *txt;
	int r;

	snprintf(path, sizeof(path), "%s/config.json", dir);
	txt = cb_read_file(path, (16u << 20) - 1, NULL);
	if (!txt) {
		snprintf(err, errlen, "%s: cannot read", path);
		return NULL;
	}
	root = cJSON_Parse(txt);
	free(txt);
	r = cJSON_IsObject(root) ? block_size(dir, root, &br, &bc, err, errlen) : -1;
	if (!cJSON_IsObject(root))
		snprintf(err, errlen, "%s: not a JSON object", path);
	cJSON_Delete(root);
	if (r)
		return NULL;
	st = st_set_open_dir(dir, err, errlen);
	if (st && st_set_fp8_blocks(st, br, bc, err, errlen)) {
		st_set_close(st);
		return NULL;
	}
	return st;
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_gpt_oss.c - a GGUF "gpt-oss" file's architecture words.
 *
 * llama.cpp's converter writes gpt-oss.attention.sliding_window; which
 * layers slide is not in the file (llama.cpp makes every other layer, from
 * layer 0, a sliding one: GPT-OSS's layer_types), nor are the clamped
 * SwiGLU's constants (llama.cpp uses GPT-OSS's 7.0 and 1.702).  The
 * tensors are read by gguf_model.c.
 */
#include <stdio.h>
#include <string.h>

#include "import/gguf.h"
#include "import/gguf_gpt_oss.h"

static cb_u32 bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

int gguf_gpt_oss_config(const struct gguf_file *gf, struct cb_model_config *c, char *err,
			size_t errlen)
{
	uint64_t w;
	cb_u32 l;

	if (gguf_get_uint(gf, "gpt-oss.attention.sliding_window", &w) || !w ||
	    w > CB_MAX_CONTEXT) {
		snprintf(err, errlen, "%s: metadata 'gpt-oss.attention.sliding_window' is "
			 "missing or out of range", gf->path);
		return -1;
	}
	if (c->max_context && w > c->max_context) {
		snprintf(err, errlen, "%s: gpt-oss.attention.sliding_window %llu is larger than "
			 "the context (gpt-oss.context_length %u)", gf->path,
			 (unsigned long long)w, c->max_context);
		return -1;
	}
	c->norm_topk_prob = 1;		/* softmax over the selected logits */
	c->oss.sliding_window = (cb_u32)w;
	c->oss.swiglu_limit_bits = bits(7.0f);
	c->oss.swiglu_alpha_bits = bits(1.702f);
	for (l = 0; l < c->n_layers && l < CB_MAX_LAYERS; l += 2)
		c->oss.sliding_layers[l / 32] |= 1u << (l % 32);
	return 0;
}

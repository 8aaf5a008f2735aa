// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * make_seeds.c - write the fuzzer's seed corpus: tiny valid .colibri files
 * that together reach every branch of the format (dense and MoE layers,
 * shared experts with and without gate, biases, both q/k norm kinds, tied
 * embeddings, every dtype, files of mixed block types, with and without
 * tokenizer, wide alignment).
 *
 * usage: make_seeds OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cbfile.h"

static const char tok[] = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[]}}";

static struct cb_model_config base(void)
{
	struct cb_model_config c;

	memset(&c, 0, sizeof(c));
	c.vocab_size = 8;
	c.hidden = 4;
	c.n_layers = 1;
	c.n_heads = 2;
	c.n_kv_heads = 1;
	c.head_dim = 2;
	c.decoder_sparse_step = 1;
	c.rope_theta_bits = 0x461c4000;	/* 10000 */
	c.rms_eps_bits = 0x3727c5ac;	/* 1e-5 */
	c.max_context = 64;
	return c;
}

/*
 * Mixed files: each role its own type, as llama.cpp's presets write them
 * (MIX_K: the k-quants and iq4_xs on rows of 256; MIX_LEGACY: q4_1, q5_0,
 * q5_1, iq4_nl on rows of 32).  Rows that do not fit keep f32.
 */
#define MIX_K 1000
#define MIX_LEGACY 1001

static uint32_t mixed_dtype(uint32_t mix, uint32_t role)
{
	switch (role) {
	case COLIBRI_T_EMBED: return mix == MIX_K ? CB_DT_Q6_K : CB_DT_Q5_1;
	case COLIBRI_T_WQ: return mix == MIX_K ? CB_DT_Q2_K : CB_DT_Q4_1;
	case COLIBRI_T_WK: return mix == MIX_K ? CB_DT_Q3_K : CB_DT_Q5_0;
	case COLIBRI_T_WV: return mix == MIX_K ? CB_DT_Q5_K : CB_DT_IQ4_NL;
	case COLIBRI_T_MLP_GATE: return mix == MIX_K ? CB_DT_IQ4_XS : CB_DT_Q5_1;
	case COLIBRI_T_EXPERT_GATE: return CB_DT_IQ4_NL;
	case COLIBRI_T_EXPERT_UP: return CB_DT_Q5_0;
	default: return mix == MIX_K ? CB_DT_Q4_K : CB_DT_Q4_1;
	}
}

static int write(const char *dir, const char *name, const struct cb_model_config *c,
		 int with_tok, uint32_t mdt, uint32_t align)
{
	struct cbfile_meta m = { .name = name, .bos_id = -1, .eos_id = -1, .pad_id = -1,
				 .data_align = align };
	char path[512], err[256];
	struct cbfile_writer *w;
	uint32_t i, n, seed = 1;

	if (with_tok) {
		m.tokenizer_json = tok;
		m.tokenizer_len = sizeof(tok) - 1;
		m.bos_id = 0;
		m.eos_id = 1;
		m.tok_flags = COLIBRI_TOK_F_ADD_BOS;
	}
	snprintf(path, sizeof(path), "%s/seed-%s.colibri", dir, name);
	w = cbfile_writer_begin(path, c, &m, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	n = cbfile_writer_count(w);
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;

		uint32_t dt = mdt;

		cbfile_writer_slot(w, i, &s);
		if (mdt >= MIX_K)
			dt = mixed_dtype(mdt, s.role);
		if (!s.vector && cb_dtype_row_bytes(dt, s.cols))
			cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, dt);
	}
	if (cbfile_writer_layout(w))
		goto fail;
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;
		uint64_t sz, k;
		unsigned char *b;

		cbfile_writer_slot(w, i, &s);
		sz = cbfile_writer_tensor_size(w, s.role, s.layer, s.expert);
		b = malloc(sz);
		for (k = 0; k < sz; k++) {
			seed = seed * 1103515245u + 12345u;
			b[k] = (unsigned char)(seed >> 16) & 0x3f;	/* small, finite */
		}
		if (cbfile_writer_put(w, s.role, s.layer, s.expert, b, sz)) {
			free(b);
			goto fail;
		}
		free(b);
	}
	if (cbfile_writer_finish(w, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	return 0;
fail:
	fprintf(stderr, "%s: %s\n", path, cbfile_writer_error(w));
	cbfile_writer_abort(w);
	return -1;
}

int main(int argc, char **argv)
{
	struct cb_model_config c;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: make_seeds OUTDIR\n");
		return 2;
	}
	c = base();			/* dense llama, f32, no tokenizer */
	c.dense_ffn = 4;
	bad |= write(argv[1], "llama", &c, 0, CB_DT_F32, 0);

	c = base();			/* Qwen2-MoE shape: shared + gate, biases */
	c.arch = COLIBRI_ARCH_QWEN2_MOE;
	c.n_layers = 2;
	c.n_kv_heads = 2;
	c.n_experts = 3;
	c.top_k = 2;
	c.expert_ffn = 4;
	c.shared_ffn = 4;
	c.shared_gate = 1;
	c.dense_ffn = 4;
	c.decoder_sparse_step = 2;
	c.qkv_bias = 1;
	bad |= write(argv[1], "qwen2moe", &c, 1, CB_DT_F16, 0);

	c = base();			/* OLMoE shape: full q/k norm, tied, clip */
	c.arch = COLIBRI_ARCH_OLMOE;
	c.n_experts = 2;
	c.top_k = 1;
	c.expert_ffn = 4;
	c.qk_norm = CB_QK_NORM_FULL;
	c.tied_embeddings = 1;
	c.clip_qkv_bits = 0x40400000;	/* 3.0 */
	bad |= write(argv[1], "olmoe", &c, 1, CB_DT_BF16, 256);

	c = base();			/* block types, Qwen3 per-head norm, mlp_only */
	c.arch = COLIBRI_ARCH_QWEN3_MOE;
	c.hidden = 32;
	c.n_layers = 2;
	c.n_heads = 1;
	c.head_dim = 32;
	c.n_experts = 2;
	c.top_k = 2;
	c.norm_topk_prob = 1;
	c.expert_ffn = 32;
	c.dense_ffn = 32;
	c.mlp_only_layers[0] = 1;
	c.qk_norm = CB_QK_NORM_HEAD;
	c.rope_layout = CB_ROPE_INTERLEAVED;
	bad |= write(argv[1], "qwen3moe-q8", &c, 0, CB_DT_Q8_0, 0);
	bad |= write(argv[1], "qwen3moe-q4", &c, 1, CB_DT_Q4_0, 512);
	bad |= write(argv[1], "qwen3moe-legacy", &c, 0, MIX_LEGACY, 0);

	c = base();			/* the k-quants: rows of one 256 super-block */
	c.hidden = 256;
	c.head_dim = 2;
	c.dense_ffn = 4;
	bad |= write(argv[1], "llama-kquant", &c, 0, MIX_K, 0);

	c = base();			/* Mixtral shape, shared-free, no tokenizer */
	c.arch = COLIBRI_ARCH_MIXTRAL;
	c.n_experts = 4;
	c.top_k = 2;
	c.norm_topk_prob = 1;
	c.expert_ffn = 2;
	bad |= write(argv[1], "mixtral", &c, 0, CB_DT_F32, 0);
	return bad ? 1 : 0;
}

// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_format.c - the .colibri validator (kmod/engine/format/cb_format.c), CRC32C
 * and the userspace writer/reader (userspace/lib/model/cbfile.c).
 *
 * A small but complete model (dense and MoE layers, shared expert with
 * gate, q/k/v biases, per-head q/k norms, mixed dtypes) is written with the
 * writer API; every rejection path of the validator is then exercised by
 * changing one field of that good file (re-sealing the header checksum
 * where the test is about something else) and checking both the error code
 * and the reason string.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cb_test.h"
#include "model/cbfile.h"

#define HOFF(f) offsetof(struct colibri_file_header, f)
#define COFF(f) (HOFF(config) + offsetof(struct colibri_file_config, f))
#define TOFF(f) offsetof(struct colibri_file_tensor, f)

static char path[256];
static unsigned char *good;	/* the good file, 4096-aligned copy */
static size_t good_len;

static struct cb_model_config test_cfg(void)
{
	struct cb_model_config c;

	memset(&c, 0, sizeof(c));
	c.arch = COLIBRI_ARCH_QWEN2_MOE;
	c.vocab_size = 64;
	c.hidden = 32;
	c.n_layers = 3;
	c.n_heads = 2;
	c.n_kv_heads = 1;
	c.head_dim = 8;		/* q dim 16: wo rows have 16 columns */
	c.expert_ffn = 32;
	c.n_experts = 4;
	c.top_k = 2;
	c.norm_topk_prob = 1;
	c.shared_ffn = 32;
	c.shared_gate = 1;
	c.dense_ffn = 64;
	c.decoder_sparse_step = 1;
	c.mlp_only_layers[0] = 1;	/* layer 0 dense, layers 1, 2 MoE */
	c.rope_layout = CB_ROPE_NEOX;
	c.rope_theta_bits = 0x49742400;	/* 1e6 */
	c.rms_eps_bits = 0x358637bd;	/* 1e-6 */
	c.qkv_bias = 1;
	c.qk_norm = CB_QK_NORM_HEAD;
	c.max_context = 128;
	return c;
}

static const char tok_json[] = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},"
			       "\"merges\":[]}}";

static const char tmpl_text[] = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n"
				 "{% endfor %}";

/* Deterministic bytes for tensor i. */
static void fill(unsigned char *p, size_t n, uint32_t seed)
{
	size_t k;

	for (k = 0; k < n; k++) {
		seed = seed * 1103515245u + 12345u;
		p[k] = (unsigned char)(seed >> 16);
	}
}

/* A tensor's dtype in the test file: matrices q8_0 where possible, some f16. */
static uint32_t pick_dtype(const struct cb_format_slot *s)
{
	if (s->vector)
		return CB_DT_F32;
	if (s->role == COLIBRI_T_WO)
		return CB_DT_F16;	/* 16 columns: no block type */
	if (s->role == COLIBRI_T_EXPERT_DOWN)
		return CB_DT_Q4_0;
	if (s->role == COLIBRI_T_ROUTER || s->role == COLIBRI_T_SHARED_EXPERT_GATE)
		return CB_DT_F32;
	return s->role == COLIBRI_T_EMBED ? CB_DT_BF16 : CB_DT_Q8_0;
}

static int write_good(const char *out)
{
	struct cb_model_config c = test_cfg();
	struct cbfile_meta meta = {
		.name = "test-model", .tokenizer_json = tok_json,
		.tokenizer_len = sizeof(tok_json) - 1, .bos_id = 1, .eos_id = 2, .pad_id = -1,
		.tok_flags = COLIBRI_TOK_F_ADD_BOS,
		.chat_template = tmpl_text, .chat_template_len = sizeof(tmpl_text) - 1,
	};
	char err[256];
	struct cbfile_writer *w = cbfile_writer_begin(out, &c, &meta, err, sizeof(err));
	uint32_t i, n;

	if (!w) {
		printf("# writer_begin: %s\n", err);
		return -1;
	}
	n = cbfile_writer_count(w);
	for (i = 0; i < n; i++) {
		struct cb_format_slot s;

		cbfile_writer_slot(w, i, &s);
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, pick_dtype(&s)))
			goto fail;
	}
	if (cbfile_writer_layout(w))
		goto fail;
	/* in reverse order, in two pieces each: order must not matter */
	for (i = n; i-- > 0;) {
		struct cb_format_slot s;
		uint64_t sz;
		unsigned char *buf;

		cbfile_writer_slot(w, i, &s);
		sz = cbfile_writer_tensor_size(w, s.role, s.layer, s.expert);
		buf = malloc(sz);
		fill(buf, sz, i);
		if (cb_dtype_info(pick_dtype(&s))->nscale) {
			/* block types: scales 1.0 (a non-finite one is refused) */
			const struct cb_block_info *bi = cb_dtype_info(pick_dtype(&s));
			uint64_t k;

			for (k = 0; k + bi->block_bytes <= sz; k += bi->block_bytes) {
				buf[k + bi->scale_off[0]] = 0x00;
				buf[k + bi->scale_off[0] + 1] = 0x3c;
			}
		}
		if (s.vector || pick_dtype(&s) == CB_DT_F32) {
			/* real floats (1.0): the engine's check does not read data,
			 * but keep the file usable anyway */
			float one = 1.0f;
			uint64_t k;

			for (k = 0; k + 4 <= sz; k += 4)
				memcpy(buf + k, &one, 4);
		}
		if (cbfile_writer_tensor_begin(w, s.role, s.layer, s.expert) ||
		    cbfile_writer_tensor_write(w, buf, sz / 2) ||
		    cbfile_writer_tensor_write(w, buf + sz / 2, sz - sz / 2) ||
		    cbfile_writer_tensor_end(w)) {
			free(buf);
			goto fail;
		}
		free(buf);
	}
	if (cbfile_writer_finish(w, err, sizeof(err))) {
		printf("# finish: %s\n", err);
		return -1;
	}
	return 0;
fail:
	printf("# writer: %s\n", cbfile_writer_error(w));
	cbfile_writer_abort(w);
	return -1;
}

static unsigned char *read_file(const char *p, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	int fd = open(p, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = aligned_alloc(4096, ((size_t)sb.st_size + 4095) / 4096 * 4096 + 4096);
	if (buf && read(fd, buf, (size_t)sb.st_size) != sb.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

static void put(unsigned char *b, size_t off, int width, uint64_t v)
{
	memcpy(b + off, &v, (size_t)width);	/* little-endian host */
}

static void reseal(unsigned char *b)
{
	const struct colibri_file_header *h = (const void *)b;
	uint64_t dir_end = COLIBRI_FILE_HEADER_SIZE +
			   (uint64_t)h->n_tensors * COLIBRI_FILE_TENSOR_SIZE;
	uint32_t crc;

	if (dir_end > good_len + 4096)
		return;
	crc = cb_crc32c(0, b, COLIBRI_FILE_HEADER_CRC_OFFSET);
	crc = cb_crc32c(crc, "\0\0\0\0", 4);
	crc = cb_crc32c(crc, b + COLIBRI_FILE_HEADER_CRC_OFFSET + 4,
			dir_end - COLIBRI_FILE_HEADER_CRC_OFFSET - 4);
	put(b, HOFF(header_crc32c), 4, crc);
}

static int64_t entry(uint32_t role, uint32_t layer, uint32_t expert)
{
	struct cb_model_config c = test_cfg();

	return cb_format_tensor_index(&c, role, layer, expert);
}

static size_t entry_off(uint32_t role, uint32_t layer, uint32_t expert)
{
	return COLIBRI_FILE_HEADER_SIZE + (size_t)entry(role, layer, expert) *
	       COLIBRI_FILE_TENSOR_SIZE;
}

/* Run the validator on a modified copy; returns the error code. */
static int check_copy(unsigned char *b, size_t len, char *why)
{
	struct cb_format_info info;

	why[0] = 0;
	return cb_format_check_directory(b, len, len, &info, why, CB_FORMAT_WHY_LEN);
}

#define NONE COLIBRI_FILE_NONE
#define H 0			/* "role" 0: a header field */

/* One field changed; the expected error and a piece of the reason. */
struct mcase {
	const char *name;
	uint32_t role, layer, expert;	/* H: header; else that entry */
	size_t off;			/* field offset in header or entry */
	int width;
	uint64_t val;
	int err;
	const char *needle;
};

static const struct mcase cases[] = {
	{ "bad_magic", H, 0, 0, 0, 1, 'X', -CB_EINVAL, "bad magic" },
	{ "version_2", H, 0, 0, HOFF(version), 4, 2, -CB_EINVAL, "version 2 not supported" },
	{ "header_size", H, 0, 0, HOFF(header_size), 4, 1024, -CB_EINVAL, "header_size 1024" },
	{ "unknown_flag", H, 0, 0, HOFF(flags), 8, 1ULL << 40, -CB_EINVAL, "unknown flags" },
	{ "header_ext_delta", H, 0, 0, HOFF(ext_delta) + 8, 4, 1, -CB_EINVAL,
	  "Gated DeltaNet word 2 set for" },
	{ "rope_scaling_kind_2", H, 0, 0, HOFF(rope_scaling), 4, 2, -CB_EINVAL,
	  "unknown rope_scaling kind 2" },
	{ "rope_scaling_none_with_flags", H, 0, 0, HOFF(rope_scaling) + 28, 4, 1, -CB_EINVAL,
	  "rope_scaling kind none with its fields set" },
	{ "rope_scaling_yarn_unset", H, 0, 0, HOFF(rope_scaling), 4, 1, -CB_EINVAL,
	  "rope_scaling factor" },
	{ "header_ext_gpt_oss", H, 0, 0, HOFF(ext_gpt_oss) + 44, 4, 1, -CB_EINVAL,
	  "GPT-OSS word 11 set for another arch" },
	/* ext_mla is the config's too: on a model without MLA it must be 0 */
	{ "header_ext_mla", H, 0, 0, HOFF(ext_mla) + 4, 4, 1u << 31, -CB_EINVAL,
	  "kv_lora_rank 2147483648 on an architecture without MLA" },
	{ "header_ext_mla_rope", H, 0, 0, HOFF(ext_mla) + 12, 4, 8, -CB_EINVAL,
	  "MLA fields set but kv_lora_rank is 0" },
	{ "header_ext_mla_groups", H, 0, 0, HOFF(ext_mla) + 28, 4, 3, -CB_EINVAL,
	  "n_group 3 does not divide n_experts" },
	{ "header_ext_mla_score", H, 0, 0, HOFF(ext_mla) + 24, 4, 2, -CB_EINVAL,
	  "unknown score_func 2" },
	{ "header_after_ext_mla", H, 0, 0, HOFF(ext_mla) + 48, 4, 1, -CB_EINVAL,
	  "Gated DeltaNet word 0 set for" },
	{ "config_rope_dim_odd", H, 0, 0, COFF(rope_dim), 4, 1, -CB_EINVAL, "rope_dim 1" },
	{ "config_reserved", H, 0, 0, COFF(reserved) + 12, 4, 7, -CB_EINVAL,
	  "config reserved word 3" },
	{ "file_size_field", H, 0, 0, HOFF(file_size), 8, 12345, -CB_EOVERFLOW,
	  "file_size field 12345" },
	{ "arch_unknown", H, 0, 0, COFF(arch), 4, 77, -CB_EINVAL, "unknown architecture 77" },
	{ "vocab_zero", H, 0, 0, COFF(vocab_size), 4, 0, -CB_EINVAL, "vocab_size 0" },
	{ "hidden_huge", H, 0, 0, COFF(hidden), 4, 1u << 21, -CB_EINVAL, "hidden 2097152" },
	{ "layers_300", H, 0, 0, COFF(n_layers), 4, 300, -CB_EINVAL, "n_layers 300" },
	{ "heads_zero", H, 0, 0, COFF(n_heads), 4, 0, -CB_EINVAL, "n_heads 0" },
	{ "kv_heads_not_dividing", H, 0, 0, COFF(n_kv_heads), 4, 3, -CB_EINVAL,
	  "does not divide" },
	{ "head_dim_odd", H, 0, 0, COFF(head_dim), 4, 7, -CB_EINVAL, "head_dim 7" },
	{ "experts_600", H, 0, 0, COFF(n_experts), 4, 600, -CB_EINVAL, "n_experts 600" },
	{ "hidden_2pow20", H, 0, 0, COFF(hidden), 4, 1u << 20, -CB_EINVAL, "hidden 1048576" },
	{ "head_dim_1024", H, 0, 0, COFF(head_dim), 4, 1024, -CB_EINVAL, "head_dim 1024" },
	{ "expert_ffn_65537", H, 0, 0, COFF(expert_ffn), 4, 65537, -CB_EINVAL,
	  "expert_ffn 65537" },
	{ "top_k_above_experts", H, 0, 0, COFF(top_k), 4, 5, -CB_EINVAL, "top_k 5" },
	{ "top_k_zero", H, 0, 0, COFF(top_k), 4, 0, -CB_EINVAL, "top_k 0" },
	{ "expert_ffn_zero", H, 0, 0, COFF(expert_ffn), 4, 0, -CB_EINVAL, "expert_ffn 0" },
	{ "shared_ffn_huge", H, 0, 0, COFF(shared_ffn), 4, 1u << 21, -CB_EINVAL, "shared_ffn" },
	{ "shared_gate_2", H, 0, 0, COFF(shared_gate), 4, 2, -CB_EINVAL, "shared_gate 2" },
	{ "norm_topk_2", H, 0, 0, COFF(norm_topk_prob), 4, 2, -CB_EINVAL, "norm_topk_prob 2" },
	{ "dense_ffn_huge", H, 0, 0, COFF(dense_ffn), 4, 1u << 21, -CB_EINVAL, "dense_ffn" },
	{ "dense_ffn_zero", H, 0, 0, COFF(dense_ffn), 4, 0, -CB_EINVAL, "dense_ffn is 0" },
	{ "sparse_step_zero", H, 0, 0, COFF(decoder_sparse_step), 4, 0, -CB_EINVAL,
	  "decoder_sparse_step 0" },
	{ "rope_layout_5", H, 0, 0, COFF(rope_layout), 4, 5, -CB_EINVAL, "rope_layout 5" },
	{ "qk_norm_7", H, 0, 0, COFF(qk_norm), 4, 7, -CB_EINVAL, "qk_norm 7" },
	{ "qkv_bias_2", H, 0, 0, COFF(qkv_bias), 4, 2, -CB_EINVAL, "qkv_bias 2" },
	{ "tied_2", H, 0, 0, COFF(tied_embeddings), 4, 2, -CB_EINVAL, "tied_embeddings 2" },
	{ "rope_theta_nan", H, 0, 0, COFF(rope_theta_bits), 4, 0x7fc00000, -CB_EINVAL,
	  "rope_theta" },
	{ "rope_theta_zero", H, 0, 0, COFF(rope_theta_bits), 4, 0, -CB_EINVAL, "rope_theta" },
	{ "rms_eps_negative", H, 0, 0, COFF(rms_eps_bits), 4, 0xb58637bd, -CB_EINVAL,
	  "rms_eps" },
	{ "clip_qkv_inf", H, 0, 0, COFF(clip_qkv_bits), 4, 0x7f800000, -CB_EINVAL, "clip_qkv" },
	{ "mlp_only_beyond_layers", H, 0, 0, COFF(mlp_only_layers), 8, 1 | 1ULL << 5,
	  -CB_EINVAL, "bit 5 at or above n_layers 3" },
	{ "entry_size_32", H, 0, 0, HOFF(tensor_entry_size), 4, 32, -CB_EINVAL,
	  "tensor_entry_size 32" },
	{ "dir_offset_moved", H, 0, 0, HOFF(dir_offset), 8, 1024, -CB_EINVAL,
	  "directory at 1024" },
	{ "n_tensors_short", H, 0, 0, HOFF(n_tensors), 4, 10, -CB_EINVAL,
	  "10 tensors, the config requires" },
	{ "data_offset_unaligned", H, 0, 0, HOFF(data_offset), 8, 4096 + 64, -CB_EINVAL,
	  "not a multiple of 4096" },
	{ "data_offset_in_directory", H, 0, 0, HOFF(data_offset), 8, 0, -CB_EINVAL,
	  "overlaps the directory" },
	{ "data_size_overflow", H, 0, 0, HOFF(data_size), 8, ~0ULL - 100, -CB_EOVERFLOW,
	  "does not end at end of file" },
	{ "data_align_48", H, 0, 0, HOFF(data_align), 4, 48, -CB_EINVAL, "data_align 48" },
	{ "data_align_4M", H, 0, 0, HOFF(data_align), 4, 4u << 20, -CB_EINVAL,
	  "data_align 4194304" },
	{ "tok_kind_5", H, 0, 0, HOFF(tok_kind), 4, 5, -CB_EINVAL, "tokenizer kind 5" },
	{ "tok_none_with_size", H, 0, 0, HOFF(tok_kind), 4, 0, -CB_EINVAL,
	  "no tokenizer but" },
	{ "tok_size_zero", H, 0, 0, HOFF(tok_size), 8, 0, -CB_EINVAL, "tokenizer size 0" },
	{ "tok_size_huge", H, 0, 0, HOFF(tok_size), 8, 1ULL << 40, -CB_EINVAL,
	  "tokenizer size" },
	{ "tok_in_directory", H, 0, 0, HOFF(tok_offset), 8, 600, -CB_EINVAL,
	  "overlaps header or directory" },
	{ "tok_into_data", H, 0, 0, HOFF(tok_offset), 8, ~0ULL - 10, -CB_EOVERFLOW,
	  "runs into the data region" },
	{ "tok_flags_unknown", H, 0, 0, HOFF(tok_flags), 4, 8, -CB_EINVAL, "tok_flags 8" },
	{ "tmpl_fields_without_flag", H, 0, 0, HOFF(flags), 8, 0, -CB_EINVAL,
	  "no chat template but" },
	{ "tmpl_size_zero", H, 0, 0, HOFF(tmpl_size), 8, 0, -CB_EINVAL, "chat template size 0" },
	{ "tmpl_size_huge", H, 0, 0, HOFF(tmpl_size), 8, 2u << 20, -CB_EINVAL,
	  "chat template size 2097152 outside 1..1048576" },
	{ "tmpl_in_directory", H, 0, 0, HOFF(tmpl_offset), 8, 600, -CB_EINVAL,
	  "chat template at 600 overlaps header or directory" },
	{ "tmpl_into_data", H, 0, 0, HOFF(tmpl_offset), 8, ~0ULL - 10, -CB_EOVERFLOW,
	  "chat template [" },
	{ "add_bos_without_bos", H, 0, 0, HOFF(bos_id), 4, 0xffffffff, -CB_EINVAL,
	  "add_bos set without" },
	{ "eos_outside_vocab", H, 0, 0, HOFF(eos_id), 4, 64, -CB_EINVAL,
	  "outside the vocabulary" },
	{ "pad_negative", H, 0, 0, HOFF(pad_id), 4, 0xfffffffe, -CB_EINVAL,
	  "outside the vocabulary" },
	{ "name_control_char", H, 0, 0, HOFF(name) + 2, 1, '\n', -CB_EINVAL,
	  "control character at byte 2" },
	{ "name_junk_after_nul", H, 0, 0, HOFF(name) + 40, 1, 'x', -CB_EINVAL,
	  "non-zero byte after its NUL" },
	{ "name_unterminated", H, 0, 0, HOFF(name) + 63, 1, 'x', -CB_EINVAL,
	  "non-zero byte after its NUL" },

	/* directory entries */
	{ "entry_role_changed", COLIBRI_T_WK, 1, NONE, TOFF(role), 4, COLIBRI_T_WV, -CB_EINVAL,
	  "tensor 19 (layer 1 expert -1 wk): found role 19 (wv)" },
	{ "entry_unknown_role", COLIBRI_T_WK, 1, NONE, TOFF(role), 4, 120, -CB_EINVAL,
	  "found role 120 (?)" },
	{ "entry_layer_out_of_range", COLIBRI_T_ROUTER, 2, NONE, TOFF(layer), 4, 3, -CB_EINVAL,
	  "layer 3" },
	{ "entry_expert_out_of_range", COLIBRI_T_EXPERT_UP, 1, 3, TOFF(expert), 4, 4,
	  -CB_EINVAL, "expert 4 instead" },
	{ "entry_expert_on_dense_role", COLIBRI_T_ATTN_NORM, 0, NONE, TOFF(expert), 4, 0,
	  -CB_EINVAL, "expert 0 instead" },
	{ "entry_flags", COLIBRI_T_EMBED, NONE, NONE, TOFF(flags), 4, 1, -CB_EINVAL,
	  "unknown flags" },
	{ "entry_reserved", COLIBRI_T_FINAL_NORM, NONE, NONE, TOFF(reserved) + 8, 4, 1,
	  -CB_EINVAL, "reserved word 2" },
	{ "entry_dtype_unknown", COLIBRI_T_WQ, 0, NONE, TOFF(dtype), 4, 99, -CB_EINVAL,
	  "unknown dtype 99" },
	{ "entry_dtype_first_unknown", COLIBRI_T_WQ, 0, NONE, TOFF(dtype), 4,
	  CB_DT__COUNT, -CB_EINVAL, "unknown dtype 16" },
	{ "entry_rows_wrong", COLIBRI_T_WQ, 0, NONE, TOFF(rows), 4, 17, -CB_EINVAL,
	  "shape [17, 32], the config requires [16, 32]" },
	{ "entry_cols_wrong", COLIBRI_T_EXPERT_DOWN, 2, 1, TOFF(cols), 4, 64, -CB_EINVAL,
	  "shape [32, 64]" },
	{ "entry_norm_not_f32", COLIBRI_T_Q_NORM, 1, NONE, TOFF(dtype), 4, CB_DT_F16,
	  -CB_EINVAL, "norm/bias stored as f16" },
	{ "entry_block_type_odd_cols", COLIBRI_T_WO, 1, NONE, TOFF(dtype), 4, CB_DT_Q8_0,
	  -CB_EINVAL, "q8_0 needs cols (16) to be a multiple of 32" },
	{ "entry_size_wrong", COLIBRI_T_MLP_UP, 0, NONE, TOFF(size), 8, 100, -CB_EINVAL,
	  "size 100, but 64 rows of q8_0 need 2176" },
	{ "entry_offset_unaligned", COLIBRI_T_BK, 2, NONE, TOFF(offset), 8, 12345 * 64 + 8,
	  -CB_EINVAL, "not aligned to 64" },
	{ "entry_beyond_eof", COLIBRI_T_EXPERT_GATE, 2, 3, TOFF(offset), 8, 1ULL << 30,
	  -CB_EOVERFLOW, "tensor 66 (layer 2 expert 3 expert_gate): offset+size beyond end of file" },
	{ "entry_offset_overflow", COLIBRI_T_LM_HEAD, NONE, NONE, TOFF(offset), 8,
	  ~0ULL - 63, -CB_EOVERFLOW, "offset+size beyond end of file" },
};

static void test_good_file_accepted(void)
{
	struct cb_format_info info;
	char why[CB_FORMAT_WHY_LEN];
	int r;

	CB_CHECK(good, "writer failed");
	if (!good)
		return;
	r = cb_format_check_header(good, good_len, good_len, &info, why, sizeof(why));
	CB_CHECK(r == 0, "check_header: %d %s", r, why);
	r = cb_format_check_directory(good, good_len, good_len, &info, why, sizeof(why));
	CB_CHECK(r == 0, "check_directory: %d %s", r, why);
	CB_CHECK(info.data_offset % 4096 == 0, "data offset %llu",
		 (unsigned long long)info.data_offset);
	CB_CHECK(!strcmp(info.name, "test-model"), "name '%s'", info.name);
	CB_CHECK(info.bos_id == 1 && info.eos_id == 2 && info.pad_id == -1 &&
		 info.tok_flags == COLIBRI_TOK_F_ADD_BOS, "token ids");
	CB_CHECK(info.tok_size == sizeof(tok_json) - 1 &&
		 !memcmp(good + info.tok_offset, tok_json, info.tok_size), "tokenizer bytes");
	CB_CHECK(info.n_tensors == cb_format_tensor_count(&info.cfg), "count");
	CB_CHECK(info.tmpl_size == sizeof(tmpl_text) - 1 && info.tmpl_offset >= info.dir_end &&
		 info.tmpl_offset % 64 == 0 &&
		 info.tmpl_offset >= info.tok_offset + info.tok_size &&
		 !memcmp(good + info.tmpl_offset, tmpl_text, info.tmpl_size),
		 "chat template section at %llu", (unsigned long long)info.tmpl_offset);
}

/* The chat template section may not overlap the tokenizer section. */
static void test_chat_template_overlap(void)
{
	char why[CB_FORMAT_WHY_LEN];
	unsigned char *b = aligned_alloc(4096, good_len + 4096);
	const struct colibri_file_header *h = (const void *)good;
	int r;

	if (!good || !b) {
		CB_CHECK(0, "no good file");
		free(b);
		return;
	}
	memcpy(b, good, good_len);
	put(b, HOFF(tmpl_offset), 8, h->tok_offset + 8);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "overlaps the tokenizer"), "%d %s", r, why);
	free(b);
}

static void test_every_rejection(void)
{
	char why[CB_FORMAT_WHY_LEN];
	unsigned char *b = aligned_alloc(4096, good_len + 4096);
	size_t i;

	if (!good || !b) {
		CB_CHECK(0, "no good file");
		free(b);
		return;
	}
	for (i = 0; i < CB_ARRAY_SIZE(cases); i++) {
		const struct mcase *m = &cases[i];
		size_t base = m->role == H ? 0 : entry_off(m->role, m->layer, m->expert);
		int r;

		memcpy(b, good, good_len);
		put(b, base + m->off, m->width, m->val);
		reseal(b);
		r = check_copy(b, good_len, why);
		CB_CHECK(r == m->err && strstr(why, m->needle),
			 "%s: got %d '%s', want %d '...%s...'", m->name, r, why, m->err, m->needle);
	}
	free(b);
}

static void test_structural_rejections(void)
{
	char why[CB_FORMAT_WHY_LEN];
	struct cb_format_info info;
	unsigned char *b = aligned_alloc(4096, good_len + 4096);
	size_t wq = entry_off(COLIBRI_T_WQ, 1, NONE), wk = entry_off(COLIBRI_T_WK, 1, NONE);
	size_t up = entry_off(COLIBRI_T_EXPERT_UP, 1, 2);
	unsigned char tmp[64];
	uint64_t off;
	int r;

	if (!good || !b) {
		CB_CHECK(0, "no good file");
		free(b);
		return;
	}
	/* shorter than the header */
	r = cb_format_check_header(good, 100, 100, &info, why, sizeof(why));
	CB_CHECK(r == -CB_EINVAL && strstr(why, "shorter than the 512-byte header"), "%s", why);
	/* truncated file: the real size disagrees with the header */
	r = cb_format_check_directory(good, good_len - 1, good_len - 1, &info, why, sizeof(why));
	CB_CHECK(r == -CB_EOVERFLOW && strstr(why, "file_size field"), "truncated: %s", why);
	/* buffer shorter than the directory */
	r = cb_format_check_directory(good, 600, good_len, &info, why, sizeof(why));
	CB_CHECK(r == -CB_EINVAL && strstr(why, "the directory ends at"), "short dir: %s", why);
	/* one flipped bit in the directory, not resealed */
	memcpy(b, good, good_len);
	b[wq + TOFF(crc32c)] ^= 1;
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "checksum mismatch"), "crc: %s", why);
	/* two entries swapped (out of order) */
	memcpy(b, good, good_len);
	memcpy(tmp, b + wq, 64);
	memcpy(b + wq, b + wk, 64);
	memcpy(b + wk, tmp, 64);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "out of order"), "swap: %s", why);
	/* a duplicate entry (replacing the next one) */
	memcpy(b, good, good_len);
	memcpy(b + wk, b + wq, 64);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "found role 17 (wq) layer 1"), "dup: %s", why);
	/* overlap: the expert-up tensor starts inside the gate before it */
	memcpy(b, good, good_len);
	memcpy(&off, b + up - 64 + TOFF(offset), 8);
	put(b, up + TOFF(offset), 8, off + 64);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "overlaps the previous tensor"), "overlap: %s",
		 why);
	/* the header claims (and the file has) fewer bytes than the directory */
	memcpy(b, good, good_len);
	put(b, HOFF(file_size), 8, 1000);
	reseal(b);
	r = cb_format_check_header(b, 1000, 1000, &info, why, sizeof(why));
	CB_CHECK(r == -CB_EOVERFLOW && strstr(why, "directory (end 5184) beyond end of file (1000)"),
		 "dir beyond eof: %s", why);
	/* a file above the format's size limit */
	put(b, HOFF(file_size), 8, COLIBRI_FILE_MAX_SIZE + 4096);
	r = cb_format_check_header(b, good_len, COLIBRI_FILE_MAX_SIZE + 4096, &info, why,
				   sizeof(why));
	CB_CHECK(r == -CB_EOVERFLOW && strstr(why, "above the"), "too big: %s", why);
	/* add_eos without an eos id */
	memcpy(b, good, good_len);
	put(b, HOFF(tok_flags), 4, COLIBRI_TOK_F_ADD_EOS);
	put(b, HOFF(eos_id), 4, 0xffffffff);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "add_eos set without an eos id"), "eos: %s", why);
	/* a name without any NUL */
	memcpy(b, good, good_len);
	memset(b + HOFF(name), 'n', COLIBRI_FILE_NAME_LEN);
	reseal(b);
	r = check_copy(b, good_len, why);
	CB_CHECK(r == -CB_EINVAL && strstr(why, "not NUL-terminated"), "name: %s", why);
	memcpy(b, good, good_len);
	b[wq + TOFF(offset)] ^= 0x40;	/* breaks order/overlap, checksum stale */
	/* NULL why is allowed */
	r = cb_format_check_directory(b, good_len, good_len, &info, NULL, 0);
	CB_CHECK(r == -CB_EINVAL, "NULL why: %d", r);
	/* a tiny why buffer is truncated, never overrun */
	memset(why, 'Z', sizeof(why));
	r = cb_format_check_directory(b, good_len, good_len, &info, why, 8);
	CB_CHECK(r == -CB_EINVAL && strlen(why) == 7 && why[8] == 'Z', "truncation");
	free(b);
}

static void test_bind_and_crc(void)
{
	char why[CB_FORMAT_WHY_LEN];
	struct cb_format_info info;
	struct cb_model_config cfg;
	struct cb_model_weights w;
	unsigned char *mem;
	uint64_t sz;
	uint32_t i, bad = 0;
	int r;

	if (!good) {
		CB_CHECK(0, "no good file");
		return;
	}
	r = cb_format_check_directory(good, good_len, good_len, &info, why, sizeof(why));
	CB_CHECK(r == 0, "%s", why);
	sz = cb_format_bind_size(&info);
	mem = aligned_alloc(64, sz);
	r = cb_format_bind(&info, good, good + info.data_offset, info.data_size, mem, sz - 64,
			   &cfg, &w, why, sizeof(why));
	CB_CHECK(r == -CB_ENOMEM, "small table memory: %d %s", r, why);
	r = cb_format_bind(&info, good, good + info.data_offset + 4, info.data_size, mem, sz,
			   &cfg, &w, why, sizeof(why));
	CB_CHECK(r == -CB_EINVAL && strstr(why, "misaligned"), "misaligned data: %s", why);
	r = cb_format_bind(&info, good, good + info.data_offset, info.data_size - 1, mem, sz,
			   &cfg, &w, why, sizeof(why));
	CB_CHECK(r == -CB_EINVAL, "short data: %d", r);
	r = cb_format_bind(&info, good, good + info.data_offset, info.data_size, mem, sz,
			   &cfg, &w, why, sizeof(why));
	CB_CHECK(r == 0, "bind: %d %s", r, why);
	CB_CHECK(r || cb_engine_check_model(&cfg, &w) == 0, "engine rejects bound model");
	CB_CHECK(r || (w.layers[1].experts[3].down.dtype == CB_DT_Q4_0 &&
		       w.layers[1].experts[3].down.rows == 32 &&
		       w.layers[0].mlp_gate.rows == 64 && w.layers[0].experts == NULL &&
		       w.layers[2].shared_expert_gate.rows == 1 &&
		       w.embed.dtype == CB_DT_BF16 && w.lm_head.data != NULL),
		 "bound tensors wrong");
	for (i = 0; i < info.n_tensors; i++)
		bad += !cb_format_tensor_crc_ok(good, &info, i, good + info.data_offset);
	CB_CHECK(bad == 0, "%u tensors fail their crc", bad);
	CB_CHECK(!cb_format_tensor_crc_ok(good, &info, info.n_tensors, good + info.data_offset),
		 "index out of range accepted");
	good[good_len - 1] ^= 0x40;	/* last byte of the last tensor */
	CB_CHECK(!cb_format_tensor_crc_ok(good, &info, info.n_tensors - 1,
					  good + info.data_offset), "corruption not seen");
	good[good_len - 1] ^= 0x40;
	free(mem);
}

static void test_cbfile_open_and_verify(void)
{
	char err[512];
	struct cbfile *f = cbfile_open(path, CBFILE_VERIFY_CRC, err, sizeof(err));
	char bad[300];
	FILE *fp;
	size_t tl;

	CB_CHECK(f, "open: %s", err);
	if (f) {
		CB_CHECK(cbfile_tokenizer(f, &tl) && tl == sizeof(tok_json) - 1, "tokenizer");
		CB_CHECK(cbfile_chat_template(f, &tl) && tl == sizeof(tmpl_text) - 1 &&
			 !memcmp(cbfile_chat_template(f, &tl), tmpl_text, tl), "chat template");
		CB_CHECK(f->cfg.n_experts == 4 && f->w.layers[2].router.rows == 4, "bound");
		cbfile_close(f);
	}
	/* a corrupted tensor byte: open succeeds, verify names the tensor */
	snprintf(bad, sizeof(bad), "%s.bad", path);
	fp = fopen(bad, "wb");
	good[good_len - 1] ^= 1;
	fwrite(good, 1, good_len, fp);
	fclose(fp);
	good[good_len - 1] ^= 1;
	f = cbfile_open(bad, 0, err, sizeof(err));
	CB_CHECK(f, "open without verify: %s", err);
	cbfile_close(f);
	f = cbfile_open(bad, CBFILE_VERIFY_CRC, err, sizeof(err));
	CB_CHECK(!f && strstr(err, "checksum mismatch") && strstr(err, bad) &&
		 strstr(err, "tensor 72 (layer 2 expert -1 shared_expert_gate)"), "verify: %s", err);
	cbfile_close(f);
	/* a corrupted tokenizer byte: refused at open */
	{
		const struct colibri_file_header *h = (const void *)good;

		fp = fopen(bad, "r+b");
		fseek(fp, (long)h->tok_offset + 3, SEEK_SET);
		fputc('#', fp);
		fclose(fp);
	}
	f = cbfile_open(bad, 0, err, sizeof(err));
	CB_CHECK(!f && strstr(err, "tokenizer section checksum"), "tokenizer crc: %s", err);
	cbfile_close(f);
	/* a corrupted chat template byte: refused at open too */
	{
		const struct colibri_file_header *h = (const void *)good;

		fp = fopen(bad, "wb");
		fwrite(good, 1, good_len, fp);
		fseek(fp, (long)h->tmpl_offset + 5, SEEK_SET);
		fputc('#', fp);
		fclose(fp);
	}
	f = cbfile_open(bad, 0, err, sizeof(err));
	CB_CHECK(!f && strstr(err, "chat template section checksum"), "template crc: %s", err);
	cbfile_close(f);
	/* a q8_0 block scale of -inf, checksums right: verify names the block */
	{
		const struct colibri_file_header *h = (const void *)good;
		unsigned char *c = malloc(good_len);
		uint32_t i, crc;
		int t = -1;

		memcpy(c, good, good_len);
		for (i = 0; i < h->n_tensors && t < 0; i++)
			if (((const struct colibri_file_tensor *)(c + 512))[i].dtype == CB_DT_Q8_0)
				t = (int)i;
		CB_CHECK(t >= 0, "the test file has a q8_0 tensor");
		if (t >= 0) {
			struct colibri_file_tensor *e = (struct colibri_file_tensor *)(c + 512) + t;
			unsigned char *d = c + h->data_offset + e->offset;

			d[34 + 0] = 0x00;	/* block 1's half d = -inf */
			d[34 + 1] = 0xfc;
			e->crc32c = cb_crc32c(0, d, e->size);
			memset(c + 108, 0, 4);
			crc = cb_crc32c(0, c, 512 + 64 * (size_t)h->n_tensors);
			memcpy(c + 108, &crc, 4);
			fp = fopen(bad, "wb");
			fwrite(c, 1, good_len, fp);
			fclose(fp);
			f = cbfile_open(bad, CBFILE_VERIFY_CRC, err, sizeof(err));
			CB_CHECK(!f && strstr(err, "q8_0 block 1 has a scale that is not finite"),
				 "bad scale: %s", err);
			cbfile_close(f);
		}
		free(c);
	}
	f = cbfile_open("/nonexistent.colibri", 0, err, sizeof(err));
	CB_CHECK(!f && strstr(err, "/nonexistent.colibri"), "missing: %s", err);
	unlink(bad);
}

static void test_crc32c(void)
{
	static const char v[] = "123456789";
	unsigned char buf[1000];
	uint32_t a, b;
	size_t off, len;
	int bad = 0;

	CB_CHECK(cb_crc32c(0, v, 9) == 0xE3069283u, "portable check value %08x",
		 cb_crc32c(0, v, 9));
	CB_CHECK(cbfile_crc32c(0, v, 9) == 0xE3069283u, "sse4.2 check value");
	CB_CHECK(cb_crc32c(0, v, 0) == 0, "empty");
	fill(buf, sizeof(buf), 7);
	for (off = 0; off < 9; off++)
		for (len = 0; len + off <= sizeof(buf); len += 37) {
			a = cb_crc32c(0, buf + off, len);
			b = cbfile_crc32c(0, buf + off, len);
			bad += a != b;
			/* chaining at any split point equals one pass */
			bad += cb_crc32c(cb_crc32c(0, buf + off, len / 3), buf + off + len / 3,
					 len - len / 3) != a;
		}
	CB_CHECK(!bad, "%d mismatches between portable, sse4.2 and chained", bad);
}

static void test_slot_index_round_trip(void)
{
	struct cb_model_config c = test_cfg();
	uint32_t n = cb_format_tensor_count(&c), i, bad = 0;
	struct cb_format_slot s;

	/* 3 global; dense layer 0: 11 + 3; MoE layers: 11 + 1 + 4 * 3 + 4 */
	CB_CHECK(n == 3 + 14 + 28 + 28, "count %u", n);
	for (i = 0; i < n; i++) {
		if (cb_format_tensor_slot(&c, i, &s) ||
		    cb_format_tensor_index(&c, s.role, s.layer, s.expert) != i)
			bad++;
	}
	CB_CHECK(!bad, "%u slots do not round-trip", bad);
	CB_CHECK(cb_format_tensor_slot(&c, n, &s) == -CB_EINVAL, "slot past the end");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_ROUTER, 0, NONE) == -1, "router in dense");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_MLP_GATE, 1, NONE) == -1, "mlp in moe");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_EXPERT_UP, 1, 4) == -1, "expert 4");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_WQ, 3, NONE) == -1, "layer 3");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_EMBED, NONE, 0) == -1, "global expert");
	c.tied_embeddings = 1;
	CB_CHECK(cb_format_tensor_count(&c) == n - 1, "tied: no lm_head");
	CB_CHECK(cb_format_tensor_index(&c, COLIBRI_T_LM_HEAD, NONE, NONE) == -1, "tied lm_head");
	c.n_experts = 0;
	CB_CHECK(cb_format_tensor_count(&c) == 0, "dense config with expert fields accepted");
	CB_CHECK(!strcmp(cb_format_role_name(COLIBRI_T_SHARED_EXPERT_GATE), "shared_expert_gate") &&
		 !strcmp(cb_format_role_name(1234), "?"), "role names");
}

static void test_writer_errors(void)
{
	struct cb_model_config c = test_cfg();
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	char out[300], err[256], tmp[400];
	struct cbfile_writer *w;
	unsigned char buf[64] = { 0 };

	snprintf(out, sizeof(out), "%s.w", path);
	/* bad config and bad meta refused up front, nothing created */
	c.head_dim = 7;
	w = cbfile_writer_begin(out, &c, &meta, err, sizeof(err));
	CB_CHECK(!w && strstr(err, "head_dim 7"), "bad config: %s", err);
	c = test_cfg();
	meta.bos_id = 64;
	w = cbfile_writer_begin(out, &c, &meta, err, sizeof(err));
	CB_CHECK(!w && strstr(err, "outside the vocabulary"), "bad bos: %s", err);
	meta.bos_id = -1;
	meta.name = "a\tb";
	w = cbfile_writer_begin(out, &c, &meta, err, sizeof(err));
	CB_CHECK(!w && strstr(err, "control character"), "bad name: %s", err);
	meta.name = NULL;

	w = cbfile_writer_begin(out, &c, &meta, err, sizeof(err));
	CB_CHECK(w, "begin: %s", err);
	if (!w)
		return;
	snprintf(tmp, sizeof(tmp), "%s", cbfile_writer_tmp_path(w));
	CB_CHECK(!access(tmp, F_OK), "no temporary file %s", tmp);
	CB_CHECK(cbfile_writer_set_dtype(w, COLIBRI_T_ATTN_NORM, 0, NONE, CB_DT_Q8_0) &&
		 strstr(cbfile_writer_error(w), "must be f32"), "norm as q8_0");
	CB_CHECK(cbfile_writer_set_dtype(w, COLIBRI_T_WO, 0, NONE, CB_DT_Q4_0) &&
		 strstr(cbfile_writer_error(w), "multiple of 32"), "q4_0 on 16 cols");
	CB_CHECK(cbfile_writer_set_dtype(w, COLIBRI_T_ROUTER, 0, NONE, CB_DT_F32) &&
		 strstr(cbfile_writer_error(w), "no tensor router (layer 0"), "router in dense");
	CB_CHECK(cbfile_writer_put(w, COLIBRI_T_FINAL_NORM, NONE, NONE, buf, 4) &&
		 strstr(cbfile_writer_error(w), "before layout"), "write before layout");
	CB_CHECK(!cbfile_writer_layout(w), "layout: %s", cbfile_writer_error(w));
	/* final_norm is 32 f32 = 128 bytes: 64 is too short */
	CB_CHECK(cbfile_writer_put(w, COLIBRI_T_FINAL_NORM, NONE, NONE, buf, 64) &&
		 strstr(cbfile_writer_error(w), "64 bytes written, 128 expected"), "short: %s",
		 cbfile_writer_error(w));
	CB_CHECK(cbfile_writer_tensor_begin(w, COLIBRI_T_BQ, 0, NONE) == 0 &&
		 cbfile_writer_tensor_write(w, buf, 64) == 0 &&
		 cbfile_writer_tensor_write(w, buf, 64) != 0 &&
		 strstr(cbfile_writer_error(w), "more than its 64 bytes"), "overlong: %s",
		 cbfile_writer_error(w));
	cbfile_writer_tensor_end(w);
	CB_CHECK(cbfile_writer_finish(w, err, sizeof(err)) && strstr(err, "never written"),
		 "finish incomplete: %s", err);
	CB_CHECK(access(tmp, F_OK) && access(out, F_OK), "files left behind after failure");
}

/*
 * The limits (cb_limits.h) against real models and against the shapes a
 * hostile file used to get past them: every real model's shape accepted;
 * each hostile one refused with a reason that names the field.
 */
static void test_limits(void)
{
	static const struct {
		const char *name;
		cb_u32 hidden, heads, kv, hd, ffn, dense, experts, top_k, vocab, layers;
	} real[] = {
		/* the GQA shapes of their attention; DeepSeek's MLA is not an arch yet */
		{ "deepseek-v3", 7168, 128, 128, 192, 2048, 18432, 256, 8, 129280, 61 },
		{ "llama-3.1-405b", 16384, 128, 8, 128, 0, 53248, 0, 0, 128256, 126 },
		{ "gpt-oss-120b", 2880, 64, 8, 64, 2880, 0, 128, 4, 201088, 36 },
		{ "qwen3-235b", 4096, 64, 4, 128, 1536, 0, 128, 8, 151936, 94 },
		{ "kimi-k2", 7168, 64, 64, 192, 2048, 18432, 384, 8, 163840, 61 },
		{ "qwen3-next", 2048, 16, 2, 256, 512, 0, 512, 10, 151936, 48 },
	};
	static const struct {
		const char *name, *needle;
		cb_u32 hidden, heads, hd, ffn, dense, experts;
	} bad[] = {
		{ "hidden 2^20", "hidden 1048576", 1u << 20, 1, 2, 64, 64, 8 },
		{ "1024 heads of 1024", "head_dim 1024", 4096, 1024, 1024, 64, 64, 8 },
		{ "1024 heads of 256", "n_heads 1024 x head_dim 256", 4096, 1024, 256, 64, 64, 8 },
		{ "expert ffn 2^20", "expert_ffn 1048576", 4096, 32, 128, 1u << 20, 64, 8 },
		{ "dense ffn 2^20", "dense_ffn 1048576", 4096, 32, 128, 64, 1u << 20, 8 },
		{ "1024 experts", "n_experts 1024", 4096, 32, 128, 64, 64, 1024 },
	};
	char why[CB_FORMAT_WHY_LEN];
	unsigned i;

	for (i = 0; i < CB_ARRAY_SIZE(real); i++) {
		struct cb_model_config c = test_cfg();

		c.hidden = real[i].hidden;
		c.n_heads = real[i].heads;
		c.n_kv_heads = real[i].kv;
		c.head_dim = real[i].hd;
		c.vocab_size = real[i].vocab;
		c.n_layers = real[i].layers;
		c.n_experts = real[i].experts;
		c.top_k = real[i].top_k;
		c.expert_ffn = real[i].ffn;
		c.dense_ffn = real[i].dense ? real[i].dense : 64;
		c.shared_ffn = real[i].experts ? c.shared_ffn : 0;
		c.shared_gate = real[i].experts ? c.shared_gate : 0;
		c.norm_topk_prob = real[i].experts ? 1 : 0;
		why[0] = 0;
		CB_CHECK(cb_config_check(&c, why, sizeof(why)) == 0, "%s refused: %s",
			 real[i].name, why);
	}
	for (i = 0; i < CB_ARRAY_SIZE(bad); i++) {
		struct cb_model_config c = test_cfg();

		c.hidden = bad[i].hidden;
		c.n_heads = bad[i].heads;
		c.head_dim = bad[i].hd;
		c.expert_ffn = bad[i].ffn;
		c.dense_ffn = bad[i].dense;
		c.n_experts = bad[i].experts;
		why[0] = 0;
		CB_CHECK(cb_config_check(&c, why, sizeof(why)) == -CB_EINVAL &&
			 strstr(why, bad[i].needle), "%s: '%s', want '...%s...'", bad[i].name, why,
			 bad[i].needle);
	}
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/colibri_test_format.%d.colibri", (int)getpid());
	if (!write_good(path))
		good = read_file(path, &good_len);
	CB_RUN(test_crc32c);
	CB_RUN(test_slot_index_round_trip);
	CB_RUN(test_good_file_accepted);
	CB_RUN(test_every_rejection);
	CB_RUN(test_chat_template_overlap);
	CB_RUN(test_limits);
	CB_RUN(test_structural_rejections);
	CB_RUN(test_bind_and_crc);
	CB_RUN(test_cbfile_open_and_verify);
	CB_RUN(test_writer_errors);
	unlink(path);
	free(good);
	return cb_test_done();
}

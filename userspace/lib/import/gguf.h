/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf.h - read-only access to GGUF model files (versions 2 and 3).
 *
 * Layout (all little-endian):
 *   "GGUF", u32 version, u64 n_tensors, u64 n_kv
 *   n_kv x { string key, u32 value type, value }
 *   n_tensors x { string name, u32 n_dims, u64 ne[n_dims], u32 ggml type,
 *                 u64 offset (from the start of the data section) }
 *   padding to general.alignment (default 32), then the data section.
 * A string is u64 length + bytes (no NUL).  An array value is u32 element
 * type, u64 count, elements.  ne[0] is the number of columns (the fastest
 * varying dimension): a row-major [rows, cols] matrix has ne = {cols, rows}.
 *
 * Version 1 used 32-bit counts and lengths and is refused; version 2 moved
 * them to 64 bits and version 3 only added big-endian files (refused too:
 * they are recognised by a byte-swapped version number).
 *
 * The file is mmap'ed and fully validated by gguf_open(): every count,
 * string, array and tensor extent is checked against the file size with
 * overflow-safe arithmetic before anything points into the mapping.
 */
#ifndef COLIBRI_GGUF_H
#define COLIBRI_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "import/hf_loader.h"

/* Metadata value types (GGUF ABI). */
enum gguf_vtype {
	GGUF_VT_U8 = 0,
	GGUF_VT_I8 = 1,
	GGUF_VT_U16 = 2,
	GGUF_VT_I16 = 3,
	GGUF_VT_U32 = 4,
	GGUF_VT_I32 = 5,
	GGUF_VT_F32 = 6,
	GGUF_VT_BOOL = 7,
	GGUF_VT_STRING = 8,
	GGUF_VT_ARRAY = 9,
	GGUF_VT_U64 = 10,
	GGUF_VT_I64 = 11,
	GGUF_VT_F64 = 12,
	GGUF_VT__COUNT
};

/* The ggml tensor types this code reads (ggml ABI numbers). */
enum gguf_ttype {
	GGUF_TT_F32 = 0,
	GGUF_TT_F16 = 1,
	GGUF_TT_Q4_0 = 2,
	GGUF_TT_Q4_1 = 3,
	GGUF_TT_Q5_0 = 6,
	GGUF_TT_Q5_1 = 7,
	GGUF_TT_Q8_0 = 8,
	GGUF_TT_Q2_K = 10,
	GGUF_TT_Q3_K = 11,
	GGUF_TT_Q4_K = 12,
	GGUF_TT_Q5_K = 13,
	GGUF_TT_Q6_K = 14,
	GGUF_TT_IQ4_NL = 20,
	GGUF_TT_IQ4_XS = 23,
	GGUF_TT_BF16 = 30,
	GGUF_TT_MXFP4 = 39,
};

/*
 * gguf_type_to_cb() - the engine weight type (enum cb_dtype) of a ggml type
 * whose bytes the engine reads as they are, or -1 (the IQ1/IQ2/IQ3
 * families, TQ1_0/TQ2_0, integer and f64 tensors, unknown numbers): the
 * engine's type of the same name and block (gguf.c).
 */
int gguf_type_to_cb(uint32_t type);

/* gguf_supported_types() - "F32, F16, ...", the ggml types read, in @buf. */
const char *gguf_supported_types(char *buf, size_t len);

#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32

/* A string inside the mapping (not NUL-terminated). */
struct gguf_str {
	const char *p;
	uint64_t n;
};

struct gguf_kv {
	struct gguf_str key;
	uint32_t type;		/* enum gguf_vtype */
	uint32_t arr_type;	/* element type when type == GGUF_VT_ARRAY */
	uint64_t arr_n;		/* element count when type == GGUF_VT_ARRAY */
	const uint8_t *val;	/* the value (for arrays: the first element) */
	uint64_t val_size;	/* bytes of the value (arrays: all elements) */
};

struct gguf_tensor {
	char *name;		/* NUL-terminated copy */
	uint32_t n_dims;
	uint64_t ne[GGUF_MAX_DIMS];	/* unused dimensions are 1 */
	uint32_t type;		/* ggml type */
	uint64_t offset;	/* from the start of the data section */
	uint64_t nbytes;	/* 0 if the type's block size is not known here */
	const void *data;	/* inside the mapping */
};

struct gguf_file {
	char *path;
	const uint8_t *map;
	size_t size;
	uint32_t version;
	uint32_t alignment;
	uint64_t data_offset;	/* start of the data section in the file */
	struct gguf_kv *kv;
	uint64_t n_kv;
	struct gguf_tensor *tensors;
	uint64_t n_tensors;
	struct gguf_tensor **by_name;	/* sorted, for look-ups */
	int mapped;		/* map is our mmap (gguf_open) */
};

/**
 * gguf_open() - map and validate a GGUF file.
 * @path:   the file
 * @err:    receives one line "PATH: problem" on failure
 * @errlen: size of @err
 *
 * Return: the parsed file, or NULL.
 */
struct gguf_file *gguf_open(const char *path, char *err, size_t errlen);

/**
 * gguf_parse() - validate a GGUF image already in memory.
 * @name: used in messages; @buf/@size: the bytes (must outlive the result).
 *
 * Same checks as gguf_open(); gguf_close() does not unmap @buf.
 */
struct gguf_file *gguf_parse(const char *name, const void *buf, size_t size, char *err,
			     size_t errlen);

void gguf_close(struct gguf_file *f);

/* 1 if @path is a regular file that starts with the GGUF magic. */
int gguf_is_gguf(const char *path);

/* Look-ups.  Keys are compared as exact byte strings. */
const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key);
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f, const char *name);

/*
 * Typed getters: 0 on success, -1 if the key is absent, -2 if it has another
 * type or does not fit.  gguf_get_uint accepts any integer type with a
 * non-negative value; gguf_get_f32 accepts F32 and F64; gguf_get_bool also
 * accepts integers 0/1.
 */
int gguf_get_uint(const struct gguf_file *f, const char *key, uint64_t *out);
int gguf_get_f32(const struct gguf_file *f, const char *key, float *out);
int gguf_get_bool(const struct gguf_file *f, const char *key, int *out);
int gguf_get_str(const struct gguf_file *f, const char *key, struct gguf_str *out);

/*
 * gguf_str_array() - the elements of an array of strings, as a malloc'ed
 * array of @kv->arr_n entries pointing into the mapping (free() it).
 * Return: NULL if @kv is not an array of strings or memory ran out.
 */
struct gguf_str *gguf_str_array(const struct gguf_kv *kv);

/* Element i of an integer/float array as int64/double (caller checks i). */
int64_t gguf_arr_int(const struct gguf_kv *kv, uint64_t i);
double gguf_arr_num(const struct gguf_kv *kv, uint64_t i);

/* Names and sizes of ggml types ("Q4_K", ...); "type N" style when unknown. */
const char *gguf_type_name(uint32_t type);
const char *gguf_vtype_name(uint32_t vtype);

/* Bytes of n elements of a ggml type, 0 if unknown or not a whole block. */
uint64_t gguf_type_bytes(uint32_t type, uint64_t n);

/* ---- gguf_model.c: GGUF -> engine model ---------------------------------- */

struct cb_tokenizer;

/**
 * struct gguf_model - a GGUF file as an engine model.
 * @hf:  config, tensor table, layer and expert arrays, arch_name, exactly as
 *       hf_model_load() fills them (hf.st is NULL); callers that take a
 *       struct hf_model use &m->hf, and must free with gguf_model_free().
 * @gf:  the mapped file; matrices point into it (never requantized).
 */
struct gguf_model {
	struct hf_model hf;
	struct gguf_file *gf;
};

/**
 * gguf_model_load() - map @path and build the engine model from it.
 *
 * Architectures (general.architecture): llama (dense, or Mixtral-style with
 * llama.expert_count and stacked ffn_*_exps or per-expert ffn_*.E tensors;
 * RoPE interleaved because GGUF's converter permuted q/k), qwen2moe (with a
 * shared expert), qwen3moe, olmoe (NeoX RoPE), gpt-oss (gguf_gpt_oss.c).
 * Every tensor keeps its own
 * type: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K .. Q6_K, IQ4_NL,
 * IQ4_XS and MXFP4 are used in place (the embedding and output.weight too); norms
 * and biases stored as F16/BF16 are widened to f32.  Other types are
 * refused naming the tensor and the type; so is a block type whose scales
 * are not all finite (every scale is read once here; MXFP4's E8M0 byte 255
 * is NaN).  On failure returns
 * NULL with one line in @err.
 */
struct gguf_model *gguf_model_load(const char *path, char *err, size_t errlen);
void gguf_model_free(struct gguf_model *m);

/* ---- gguf_tokenizer.c: GGUF metadata -> tokenizer ------------------------ */

/**
 * gguf_tokenizer_json() - a Hugging Face tokenizer.json equivalent of the
 * tokenizer.ggml.* metadata.
 * @len: receives the length of the returned text.
 *
 * tokenizer.ggml.model "gpt2" becomes byte-level BPE with the pre-tokenizer
 * regex named by tokenizer.ggml.pre; "llama" (SentencePiece) becomes BPE
 * with byte fallback, merges derived from the scores as Hugging Face's
 * SentencePiece converter does.  Return: malloc'ed NUL-terminated JSON, or
 * NULL with one line in @err.
 */
char *gguf_tokenizer_json(const struct gguf_file *f, size_t *len, char *err, size_t errlen);

/**
 * gguf_tokenizer_config_json() - a tokenizer_config.json with bos_token,
 * eos_token, add_bos_token, add_eos_token from the GGUF metadata (as
 * cb_tok_apply_config() reads it), and chat_template from
 * tokenizer.chat_template when the file has one.  Return: malloc'ed JSON or
 * NULL.
 */
char *gguf_tokenizer_config_json(const struct gguf_file *f, size_t *len, char *err,
				 size_t errlen);

/**
 * struct gguf_tok_ids - a GGUF tokenizer's special ids, as a .colibri stores them
 * @bos: tokenizer.ggml.bos_token_id, or -1
 * @eos: tokenizer.ggml.eos_token_id, or -1
 * @pad: tokenizer.ggml.padding_token_id, or -1
 * @flags: COLIBRI_TOK_F_ADD_BOS (add_bos_token, or by default for a
 *	"llama" SentencePiece vocabulary) and COLIBRI_TOK_F_ADD_EOS, each only
 *	with its id present
 */
struct gguf_tok_ids {
	int32_t bos, eos, pad;
	uint32_t flags;
};

void gguf_tokenizer_ids(const struct gguf_file *f, struct gguf_tok_ids *ids);

/* Both of the above, loaded: the tokenizer of a GGUF file. */
struct cb_tokenizer *gguf_tokenizer_load(const struct gguf_file *f, char *err, size_t errlen);

/* ---- gguf_convert.c ------------------------------------------------------ */

/**
 * gguf_convert() - write a GGUF model as a .colibri file.
 * @src: the GGUF file; @out: the .colibri to write (atomically replaced).
 * @name: model name for the header, or NULL for general.name.
 * @no_tokenizer: leave the tokenizer out even if the file has one.
 *
 * Tensors keep their GGUF type and bytes (every type gguf_model_load()
 * takes: no requantization; norms stored as F16/BF16 become f32); the tokenizer, if
 * the file has one, is stored as the tokenizer.json gguf_tokenizer_json()
 * makes, with its BOS/EOS/padding ids and add_bos/add_eos flags; and
 * tokenizer.chat_template, if present, as the chat template section.
 * Return: 0, or -1 with one line in @err.
 */
int gguf_convert(const char *src, const char *out, const char *name, int no_tokenizer,
		 char *err, size_t errlen);

#endif /* COLIBRI_GGUF_H */

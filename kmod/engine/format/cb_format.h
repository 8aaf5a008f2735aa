/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_format.h - validate a .colibri file and bind it to the engine.
 *
 * One validator for the kernel and for userspace: freestanding, integer
 * only, no allocation, small stack frames.  The sequence is
 *
 *   cb_format_check_header(first >= 512 bytes)     -> sizes of what follows
 *   cb_format_check_directory(bytes [0, dir_end))  -> every entry checked
 *   (copy or map the data region somewhere, 64-byte aligned)
 *   cb_format_bind(...)                            -> cb_model_config +
 *                                                     cb_model_weights
 *
 * Nothing in a file is used before these checks pass; after them every
 * tensor lies inside the data region, in canonical order, without overlap,
 * with the size its dtype and shape imply and the shape the config implies.
 * Tensor contents are not read by the checks: cb_format_tensor_crc_ok()
 * verifies them when the caller wants to pay for it.
 *
 * The file layout itself is uapi/colibri_format.h.
 */
#ifndef CB_FORMAT_H
#define CB_FORMAT_H

#include "core/cb_platform.h"
#include "core/cb_engine.h"

/*
 * The uapi header uses the kernel's __u8..__u64.  The engine may not include
 * <linux/types.h>, so it declares them itself, with exactly the types Linux
 * uses on every architecture (int-ll64), so that a translation unit that also
 * sees the real <linux/types.h> gets compatible redeclarations.
 */
#ifndef COLIBRI_FORMAT_NO_LINUX_TYPES
#define COLIBRI_FORMAT_NO_LINUX_TYPES
#endif
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
/* relative: the engine is built with -Ikmod/engine only */
#include "../../../uapi/colibri_format.h"

/* Buffer size that always holds a reason string. */
#define CB_FORMAT_WHY_LEN 160

/**
 * struct cb_format_info - what the header says, once checked.
 * @file_size: bytes in the file.
 * @dir_offset: start of the tensor directory.
 * @dir_end: end of the directory: bytes [0, dir_end) are what
 *	cb_format_check_directory() and cb_format_bind() read.
 * @tok_offset: tokenizer section (0 if none).
 * @tok_size: its length.
 * @data_offset: start of the data region (multiple of 4096).
 * @data_size: its length (up to the end of the file).
 * @n_tensors: directory entries.
 * @data_align: alignment of every tensor inside the data region.
 * @tok_kind: COLIBRI_TOK_*.
 * @tok_flags: COLIBRI_TOK_F_*.
 * @tok_crc32c: expected CRC32C of the tokenizer section.
 * @bos_id: BOS token or -1.
 * @eos_id: EOS token or -1.
 * @pad_id: padding token or -1.
 * @tmpl_offset: chat template section (0 if none).
 * @tmpl_size: its length.
 * @tmpl_crc32c: expected CRC32C of the chat template section.
 * @name: model name, NUL-terminated.
 * @cfg: the architecture, as the engine wants it.
 */
struct cb_format_info {
	cb_u64 file_size;
	cb_u64 dir_offset;
	cb_u64 dir_end;
	cb_u64 tok_offset;
	cb_u64 tok_size;
	cb_u64 data_offset;
	cb_u64 data_size;
	cb_u32 n_tensors;
	cb_u32 data_align;
	cb_u32 tok_kind;
	cb_u32 tok_flags;
	cb_u32 tok_crc32c;
	cb_s32 bos_id;
	cb_s32 eos_id;
	cb_s32 pad_id;
	cb_u64 tmpl_offset;
	cb_u64 tmpl_size;
	cb_u32 tmpl_crc32c;
	char name[COLIBRI_FILE_NAME_LEN];
	struct cb_model_config cfg;
};

/**
 * cb_format_check_header() - validate the fixed header.
 * @buf: the first @len bytes of the file.
 * @len: bytes available in @buf (at least COLIBRI_FILE_HEADER_SIZE).
 * @file_size: the real size of the file (from the filesystem, not the header).
 * @info: out: the checked header.
 * @why: out: a one-line reason on failure (may be NULL).
 * @whylen: size of @why (CB_FORMAT_WHY_LEN is always enough).
 *
 * Checks magic, version, sizes, flags, reserved fields, the section layout
 * (header, directory, tokenizer, data in that order, without overlap, inside
 * the file, data on a 4096 boundary), the name, the token ids and the whole
 * architecture config against the engine's limits.  Does not read the
 * directory (see cb_format_check_directory(), which also checks the header
 * checksum).
 *
 * Return: 0, -CB_EINVAL (malformed) or -CB_EOVERFLOW (a size or offset
 * overflows or lies outside the file).
 */
int cb_format_check_header(const void *buf, cb_u64 len, cb_u64 file_size,
			   struct cb_format_info *info, char *why, cb_u32 whylen);

/**
 * cb_format_check_directory() - validate header and tensor directory.
 * @buf: the file's bytes [0, @len), @len >= info->dir_end.
 * @len: bytes available in @buf.
 * @file_size: the real size of the file.
 * @info: out: the checked header (re-read from @buf, so a second read of the
 *	file that differs from the first is caught here, not trusted).
 * @why: out: a one-line reason on failure (may be NULL).
 * @whylen: size of @why.
 *
 * On top of cb_format_check_header(): the header CRC32C, and for every
 * entry role/layer/expert in canonical order (each tensor the config needs
 * exactly once, nothing else), dtype known and allowed for the role, shape
 * equal to the config's, size == rows * row bytes, offset aligned, inside
 * the data region and after the previous tensor, zero flags and reserved.
 *
 * Return: 0, -CB_EINVAL or -CB_EOVERFLOW.
 */
int cb_format_check_directory(const void *buf, cb_u64 len, cb_u64 file_size,
			      struct cb_format_info *info, char *why, cb_u32 whylen);

/**
 * cb_format_bind_size() - memory cb_format_bind() carves its tables from.
 * @info: a checked header.
 *
 * Return: bytes (a multiple of 64) for the layer and expert tables.
 */
cb_u64 cb_format_bind_size(const struct cb_format_info *info);

/**
 * cb_format_bind() - point a tensor table into the data region.
 * @info: from a successful cb_format_check_directory() on @dir.
 * @dir: the same bytes [0, info->dir_end) that were checked.
 * @data: where the data region (file bytes [data_offset, file_size)) lives
 *	in memory, 64-byte aligned.
 * @data_size: bytes at @data (at least info->data_size).
 * @mem: caller memory for the layer/expert tables, 8-byte aligned.
 * @mem_size: bytes at @mem, at least cb_format_bind_size(@info).
 * @cfg: out: the model config.
 * @w: out: the tensor table; @w->layers points into @mem, tensors into @data.
 * @why: out: reason on failure (may be NULL).
 * @whylen: size of @why.
 *
 * Re-checks every bound it uses (cheap) and finishes with
 * cb_engine_check_model().  Reads no tensor data and does no floating point.
 *
 * Return: 0, -CB_EINVAL or -CB_ENOMEM (@mem too small).
 */
int cb_format_bind(const struct cb_format_info *info, const void *dir,
		   const void *data, cb_u64 data_size, void *mem, cb_u64 mem_size,
		   struct cb_model_config *cfg, struct cb_model_weights *w,
		   char *why, cb_u32 whylen);

/**
 * cb_format_tensor_crc_ok() - verify the checksum of one tensor.
 * @dir: checked directory bytes [0, info->dir_end).
 * @info: the checked header.
 * @i: entry index, < info->n_tensors.
 * @data: the data region in memory (at least info->data_size bytes).
 *
 * Return: 1 if the tensor's bytes match its crc32c, 0 if not or @i is bad.
 */
int cb_format_tensor_crc_ok(const void *dir, const struct cb_format_info *info,
			    cb_u32 i, const void *data);

/**
 * cb_format_tensor_count() - directory entries a config requires.
 * @cfg: a config that passed the header checks.
 *
 * Return: the count, or 0 if the config is unusable.
 */
cb_u32 cb_format_tensor_count(const struct cb_model_config *cfg);

/**
 * cb_format_tensor_index() - canonical directory position of a tensor.
 * @cfg: the config.
 * @role: enum colibri_tensor_role.
 * @layer: layer index or COLIBRI_FILE_NONE.
 * @expert: expert index or COLIBRI_FILE_NONE.
 *
 * Return: the index in [0, cb_format_tensor_count()), or -1 when the config
 * has no such tensor.
 */
cb_s64 cb_format_tensor_index(const struct cb_model_config *cfg, cb_u32 role,
			      cb_u32 layer, cb_u32 expert);

/**
 * struct cb_format_slot - one tensor a config requires.
 * @role: enum colibri_tensor_role.
 * @layer: layer or COLIBRI_FILE_NONE.
 * @expert: expert or COLIBRI_FILE_NONE.
 * @rows: rows of the tensor.
 * @cols: columns.
 * @vector: 1 for norms and biases, which must be f32.
 */
struct cb_format_slot {
	cb_u32 role;
	cb_u32 layer;
	cb_u32 expert;
	cb_u32 rows;
	cb_u32 cols;
	cb_u32 vector;
};

/**
 * cb_format_tensor_slot() - the tensor at canonical position @index.
 * @cfg: the config.
 * @index: position, < cb_format_tensor_count(@cfg).
 * @s: out: role, indices and shape.
 *
 * Return: 0 or -CB_EINVAL.
 */
int cb_format_tensor_slot(const struct cb_model_config *cfg, cb_u32 index,
			  struct cb_format_slot *s);

/* Short name of a role ("wq", "expert_up", ...); "?" if unknown (cb_role.c). */
const char *cb_format_role_name(cb_u32 role);

/**
 * cb_format_config_to_file() - engine config to its file form.
 * @c: the engine config.
 * @f: out: the file config (reserved fields zeroed).
 */
void cb_format_config_to_file(const struct cb_model_config *c,
			      struct colibri_file_config *f);

/* The header's GPT-OSS words (ext_gpt_oss) from the config (cb_gpt_oss.c). */
void cb_format_ext_to_file(const struct cb_model_config *c, struct colibri_file_header *h);

/**
 * cb_format_rope_to_file() - the config's RoPE scaling to its header form.
 * @c: the engine config.
 * @f: out: header bytes 356..388.
 */
void cb_format_rope_to_file(const struct cb_model_config *c,
			    struct colibri_file_rope_scaling *f);

/**
 * cb_format_mla_to_file() - the config's MLA and routing fields in the
 * header's ext_mla form.
 * @c: the engine config.
 * @f: out: the header's ext_mla.
 */
void cb_format_mla_to_file(const struct cb_model_config *c, struct colibri_file_mla *f);

/* The header's Gated DeltaNet words (ext_delta) from the config (cb_delta_shape.c). */
void cb_format_delta_to_file(const struct cb_model_config *c, struct colibri_file_delta *f);

/**
 * cb_crc32c() - CRC32C (Castagnoli), portable slice-by-8.
 * @crc: the CRC of the bytes so far (0 to start).
 * @buf: more bytes.
 * @len: how many.
 *
 * Chaining: cb_crc32c(cb_crc32c(0, a, n), b, m) == crc of a followed by b.
 * Return: the CRC (pre- and post-inverted, the usual convention).
 */
cb_u32 cb_crc32c(cb_u32 crc, const void *buf, cb_size len);

#endif /* CB_FORMAT_H */

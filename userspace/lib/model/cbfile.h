/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cbfile.h - read and write .colibri model files in userspace.
 *
 * Reading: cbfile_open() maps the file, runs the engine's validator
 * (kmod/engine/format/cb_format.c, the same code the kernel runs) and binds a
 * cb_model_config + cb_model_weights whose tensors point into the mapping.
 *
 * Writing (used by `colibri convert` for HF directories and for GGUF):
 *
 *   w = cbfile_writer_begin("out.colibri", &cfg, &meta, err, sizeof(err));
 *   for each tensor the config needs (cbfile_writer_count/slot list them):
 *       cbfile_writer_set_dtype(w, role, layer, expert, dtype);
 *   cbfile_writer_layout(w);                // offsets fixed from here on
 *   for each tensor, in any order:
 *       cbfile_writer_tensor_begin(w, role, layer, expert);
 *       cbfile_writer_tensor_write(w, bytes, n);   // as many times as needed
 *       cbfile_writer_tensor_end(w);               // checks the byte count
 *   cbfile_writer_finish(w);                // directory, header, rename
 *
 * On any error call cbfile_writer_abort(w) (finish does it itself when it
 * fails).  The output goes to OUT.tmp.PID and is renamed to OUT only by a
 * successful finish; abort unlinks the temporary file.  Tensor data goes
 * straight to the file (pwrite at its computed offset), so nothing is held
 * in memory.  Default dtype of every slot: f32 (set_dtype changes it;
 * vectors, i.e. norms and biases, must stay f32).
 *
 * Every function returning int returns 0 or -1; after -1,
 * cbfile_writer_error() has a one-line reason.
 */
#ifndef COLIBRI_CBFILE_H
#define COLIBRI_CBFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/cb_format.h"

/* ---- reading ---------------------------------------------------------- */

/* cbfile_open() flags */
#define CBFILE_VERIFY_CRC	(1u << 0)	/* check every tensor's crc32c */

struct cbfile {
	char *path;
	const unsigned char *map;	/* whole file, read-only */
	size_t map_size;
	struct cb_format_info info;	/* checked header */
	const struct colibri_file_tensor *dir;	/* [info.n_tensors], in map */
	struct cb_model_config cfg;	/* bound */
	struct cb_model_weights w;	/* tensors point into map */
	void *bind_mem;
};

/*
 * cbfile_open() - map, validate and bind a .colibri file.
 * On failure returns NULL and writes one line naming the file and the
 * problem to err.
 */
struct cbfile *cbfile_open(const char *path, unsigned int flags, char *err, size_t errlen);
void cbfile_close(struct cbfile *f);

/*
 * Verify every tensor's crc32c and that every block scale is finite; on a
 * mismatch -1 and a reason in err.
 */
int cbfile_verify(const struct cbfile *f, char *err, size_t errlen);

/*
 * The tokenizer section (tokenizer.json bytes), NULL/0 if there is none.
 * Its crc32c is checked by cbfile_open().
 */
const char *cbfile_tokenizer(const struct cbfile *f, size_t *len);

/*
 * The chat template section (Jinja source, not NUL-terminated), NULL/0 if
 * the file has none.  Its crc32c is checked by cbfile_open().
 */
const char *cbfile_chat_template(const struct cbfile *f, size_t *len);

/*
 * The file's tokenizer, with the BOS/EOS ids its header gives.  NULL and a
 * reason in err when it has none or it does not load.
 */
struct cb_tokenizer;
struct cb_tokenizer *cbfile_load_tokenizer(const struct cbfile *f, char *err, size_t errlen);

/* Is this path a .colibri file (by its magic)?  1, 0. */
int cbfile_is_colibri(const char *path);

/* CRC32C with SSE4.2 when the CPU has it, else the engine's portable one. */
uint32_t cbfile_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- writing ---------------------------------------------------------- */

/**
 * struct cbfile_meta - everything but the config and the tensors.
 * @name: model name (at most 63 bytes, no control characters) or NULL.
 * @tokenizer_json: tokenizer.json bytes stored verbatim, or NULL for none.
 * @tokenizer_len: their length.
 * @bos_id: BOS id or -1.
 * @eos_id: EOS id or -1.
 * @pad_id: padding id or -1.
 * @tok_flags: COLIBRI_TOK_F_ADD_BOS / _ADD_EOS.
 * @chat_template: the model's Jinja chat template, stored verbatim, or NULL.
 * @chat_template_len: its length (1 .. COLIBRI_FILE_MAX_CHAT_TEMPLATE).
 * @data_align: minimum tensor alignment, 0 for the default (64; tensors of
 *	64 KiB and more are put on 4096 anyway).
 */
struct cbfile_meta {
	const char *name;
	const void *tokenizer_json;
	size_t tokenizer_len;
	int32_t bos_id;
	int32_t eos_id;
	int32_t pad_id;
	uint32_t tok_flags;
	uint32_t data_align;
	const char *chat_template;
	size_t chat_template_len;
};

struct cbfile_writer;

/*
 * Create OUT.tmp.PID and remember the config.  The config is checked as the
 * reader will check it.  NULL and a reason in err on failure.
 */
struct cbfile_writer *cbfile_writer_begin(const char *out_path,
					  const struct cb_model_config *cfg,
					  const struct cbfile_meta *meta,
					  char *err, size_t errlen);

/* Tensors the config requires, and the i-th of them (canonical order). */
uint32_t cbfile_writer_count(const struct cbfile_writer *w);
int cbfile_writer_slot(const struct cbfile_writer *w, uint32_t i,
		       struct cb_format_slot *s);

/* Choose the stored dtype of one tensor (before layout). */
int cbfile_writer_set_dtype(struct cbfile_writer *w, uint32_t role, uint32_t layer,
			    uint32_t expert, uint32_t dtype);

/* Bytes of one tensor as laid out (after layout), 0 if no such tensor. */
uint64_t cbfile_writer_tensor_size(const struct cbfile_writer *w, uint32_t role,
				   uint32_t layer, uint32_t expert);

/* Fix every offset and size the file will have. */
int cbfile_writer_layout(struct cbfile_writer *w);

/* Stream one tensor's bytes; one tensor open at a time. */
int cbfile_writer_tensor_begin(struct cbfile_writer *w, uint32_t role, uint32_t layer,
			       uint32_t expert);
int cbfile_writer_tensor_write(struct cbfile_writer *w, const void *buf, size_t n);
int cbfile_writer_tensor_end(struct cbfile_writer *w);

/* Shortcut: begin + one write + end. */
int cbfile_writer_put(struct cbfile_writer *w, uint32_t role, uint32_t layer,
		      uint32_t expert, const void *buf, size_t n);

/*
 * Write directory and header, fsync, rename OUT.tmp.PID to OUT, free w.
 * Fails if a tensor was never written.  Return 0, or -1 with the reason in
 * err (the temporary file is removed and w freed either way).
 */
int cbfile_writer_finish(struct cbfile_writer *w, char *err, size_t errlen);

/* Remove the temporary file and free w (NULL is fine). */
void cbfile_writer_abort(struct cbfile_writer *w);

const char *cbfile_writer_error(const struct cbfile_writer *w);

/* Path of the temporary file (for a SIGINT handler: unlink() it). */
const char *cbfile_writer_tmp_path(const struct cbfile_writer *w);

#endif /* COLIBRI_CBFILE_H */

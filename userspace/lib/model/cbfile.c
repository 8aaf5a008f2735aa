// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cbfile.c - .colibri files in userspace: open/validate/bind, and the
 * streaming writer the converters share.
 *
 * The reader trusts nothing it has not passed through the engine's
 * validator (kmod/engine/format/cb_format.c), exactly as the kernel does.  The
 * writer lays the whole file out from the config before any tensor is
 * written, then pwrite()s each tensor at its final offset, so a converter
 * never holds more than the piece it is converting.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/cbfile.h"
#include "util/util.h"
#include "tokenizer.h"

/* ---- CRC32C ------------------------------------------------------------ */

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

uint32_t cbfile_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int have = -1;

	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("sse4.2") && !getenv("COLIBRI_CRC_PORTABLE");
	}
	return have ? crc32c_sse42(crc, buf, len) : cb_crc32c(crc, buf, len);
}

/* ---- reading ----------------------------------------------------------- */

int cbfile_is_colibri(const char *path)
{
	char magic[COLIBRI_FILE_MAGIC_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;
	struct stat sb;

	if (fd < 0)
		return 0;
	ok = !fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
	     read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, COLIBRI_FILE_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

struct cbfile *cbfile_open(const char *path, unsigned int flags, char *err, size_t errlen)
{
	struct cbfile *f = calloc(1, sizeof(*f));
	char why[CB_FORMAT_WHY_LEN];
	struct stat sb;
	void *map;
	uint64_t bsz;
	int fd, r;

	if (!f) {
		cb_set_err(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	f->path = strdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		cb_set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail_fd;
	}
	if (!S_ISREG(sb.st_mode)) {
		cb_set_err(err, errlen, "%s: not a regular file", path);
		goto fail_fd;
	}
	if ((uint64_t)sb.st_size < COLIBRI_FILE_HEADER_SIZE) {
		cb_set_err(err, errlen, "%s: header: file shorter than the %u-byte header", path,
		       COLIBRI_FILE_HEADER_SIZE);
		goto fail_fd;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		cb_set_err(err, errlen, "%s: mmap: %s", path, strerror(errno));
		goto fail_fd;
	}
	close(fd);
	f->map = map;
	f->map_size = (size_t)sb.st_size;

	r = cb_format_check_directory(f->map, f->map_size, f->map_size, &f->info, why,
				      sizeof(why));
	if (r) {
		cb_set_err(err, errlen, "%s: %s", path, why);
		goto fail;
	}
	f->dir = (const struct colibri_file_tensor *)(f->map + f->info.dir_offset);
	if (f->info.tok_kind != COLIBRI_TOK_NONE &&
	    cbfile_crc32c(0, f->map + f->info.tok_offset, f->info.tok_size) !=
	    f->info.tok_crc32c) {
		cb_set_err(err, errlen, "%s: tokenizer section checksum mismatch (corrupt file)",
		       path);
		goto fail;
	}
	if (f->info.tmpl_size &&
	    cbfile_crc32c(0, f->map + f->info.tmpl_offset, f->info.tmpl_size) !=
	    f->info.tmpl_crc32c) {
		cb_set_err(err, errlen,
			   "%s: chat template section checksum mismatch (corrupt file)", path);
		goto fail;
	}
	bsz = cb_format_bind_size(&f->info);
	f->bind_mem = aligned_alloc(64, bsz);
	if (!f->bind_mem) {
		cb_set_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	r = cb_format_bind(&f->info, f->map, f->map + f->info.data_offset, f->info.data_size,
			   f->bind_mem, bsz, &f->cfg, &f->w, why, sizeof(why));
	if (r) {
		cb_set_err(err, errlen, "%s: %s", path, why);
		goto fail;
	}
	if ((flags & CBFILE_VERIFY_CRC) && cbfile_verify(f, err, errlen))
		goto fail;
	return f;
fail_fd:
	if (fd >= 0)
		close(fd);
fail:
	cbfile_close(f);
	return NULL;
}

void cbfile_close(struct cbfile *f)
{
	if (!f)
		return;
	if (f->map)
		munmap((void *)f->map, f->map_size);
	free(f->bind_mem);
	free(f->path);
	free(f);
}

int cbfile_verify(const struct cbfile *f, char *err, size_t errlen)
{
	const unsigned char *data = f->map + f->info.data_offset;
	uint32_t i;

	for (i = 0; i < f->info.n_tensors; i++) {
		const struct colibri_file_tensor *t = &f->dir[i];

		int64_t bad;

		if (cbfile_crc32c(0, data + t->offset, t->size) != t->crc32c) {
			cb_set_err(err, errlen,
			       "%s: tensor %u (layer %d expert %d %s): checksum mismatch (corrupt file)",
			       f->path, i, (int)t->layer, (int)t->expert,
			       cb_format_role_name(t->role));
			return -1;
		}
		bad = cb_quant_find_bad_scale(t->dtype, data + t->offset,
					      t->size / cb_dtype_info(t->dtype)->block_bytes);
		if (bad >= 0) {
			cb_set_err(err, errlen,
			       "%s: tensor %u (layer %d expert %d %s): %s block %lld has a scale that "
			       "is not finite", f->path, i, (int)t->layer, (int)t->expert,
			       cb_format_role_name(t->role), cb_dtype_name(t->dtype), (long long)bad);
			return -1;
		}
	}
	return 0;
}

const char *cbfile_tokenizer(const struct cbfile *f, size_t *len)
{
	if (f->info.tok_kind == COLIBRI_TOK_NONE) {
		*len = 0;
		return NULL;
	}
	*len = f->info.tok_size;
	return (const char *)f->map + f->info.tok_offset;
}

const char *cbfile_chat_template(const struct cbfile *f, size_t *len)
{
	*len = f->info.tmpl_size;
	return f->info.tmpl_size ? (const char *)f->map + f->info.tmpl_offset : NULL;
}

struct cb_tokenizer *cbfile_load_tokenizer(const struct cbfile *f, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	const char *json;
	size_t len;

	json = cbfile_tokenizer(f, &len);
	if (!json) {
		snprintf(err, errlen, "%s: the file has no tokenizer", f->path);
		return NULL;
	}
	tok = cb_tok_load(json, len, err, errlen);
	if (tok && f->info.bos_id >= 0)
		cb_tok_set_bos_id(tok, f->info.bos_id);
	if (tok && f->info.eos_id >= 0)
		cb_tok_set_eos_id(tok, f->info.eos_id);
	return tok;
}

/* ---- writing ----------------------------------------------------------- */

struct wslot {
	struct cb_format_slot s;
	uint32_t dtype;
	uint32_t crc;
	uint64_t offset;	/* from data_offset */
	uint64_t size;
	int written;
};

struct cbfile_writer {
	char *out_path;
	char *tmp_path;
	int fd;
	struct cb_model_config cfg;
	struct cbfile_meta meta;
	char name[COLIBRI_FILE_NAME_LEN];
	void *tok;		/* copy of the tokenizer bytes */
	void *tmpl;		/* copy of the chat template */
	uint32_t n;
	struct wslot *slots;
	int laid_out;
	uint64_t tok_offset, tmpl_offset, data_offset, data_size, file_size;
	uint32_t data_align;
	struct wslot *cur;	/* tensor being streamed */
	uint64_t cur_done;
	char err[512];
};

static int werr(struct cbfile_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return -1;
}

const char *cbfile_writer_error(const struct cbfile_writer *w)
{
	return w ? w->err : "no writer";
}

const char *cbfile_writer_tmp_path(const struct cbfile_writer *w)
{
	return w ? w->tmp_path : NULL;
}

static int check_meta(const struct cb_model_config *c, const struct cbfile_meta *m,
		      char *err, size_t errlen)
{
	const char *s;
	size_t len = m->name ? strlen(m->name) : 0;

	if (len >= COLIBRI_FILE_NAME_LEN) {
		cb_set_err(err, errlen, "model name longer than %d bytes", COLIBRI_FILE_NAME_LEN - 1);
		return -1;
	}
	for (s = m->name; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			cb_set_err(err, errlen, "model name has a control character");
			return -1;
		}
	if (m->tokenizer_len > COLIBRI_FILE_MAX_TOKENIZER ||
	    (m->tokenizer_json && !m->tokenizer_len)) {
		cb_set_err(err, errlen, "tokenizer of %zu bytes (1..%u allowed)", m->tokenizer_len,
		       COLIBRI_FILE_MAX_TOKENIZER);
		return -1;
	}
	if (m->chat_template_len > COLIBRI_FILE_MAX_CHAT_TEMPLATE ||
	    (m->chat_template && !m->chat_template_len)) {
		cb_set_err(err, errlen, "chat template of %zu bytes (1..%u allowed)",
			   m->chat_template_len, COLIBRI_FILE_MAX_CHAT_TEMPLATE);
		return -1;
	}
#define ID_OK(id) ((id) == -1 || ((id) >= 0 && (uint32_t)(id) < c->vocab_size))
	if (!ID_OK(m->bos_id) || !ID_OK(m->eos_id) || !ID_OK(m->pad_id)) {
		cb_set_err(err, errlen, "bos/eos/pad id (%d %d %d) outside the vocabulary of %u",
		       m->bos_id, m->eos_id, m->pad_id, c->vocab_size);
		return -1;
	}
#undef ID_OK
	if ((m->tok_flags & ~COLIBRI_TOK_F_ALL) ||
	    ((m->tok_flags & COLIBRI_TOK_F_ADD_BOS) && m->bos_id < 0) ||
	    ((m->tok_flags & COLIBRI_TOK_F_ADD_EOS) && m->eos_id < 0)) {
		cb_set_err(err, errlen, "bad tokenizer flags 0x%x for bos %d eos %d", m->tok_flags,
		       m->bos_id, m->eos_id);
		return -1;
	}
	if (m->data_align && (m->data_align & (m->data_align - 1) ||
			      m->data_align < COLIBRI_FILE_TENSOR_ALIGN_MIN ||
			      m->data_align > COLIBRI_FILE_TENSOR_ALIGN_MAX)) {
		cb_set_err(err, errlen, "data_align %u is not a power of two in 64..2M",
		       m->data_align);
		return -1;
	}
	return 0;
}

struct cbfile_writer *cbfile_writer_begin(const char *out_path,
					  const struct cb_model_config *cfg,
					  const struct cbfile_meta *meta,
					  char *err, size_t errlen)
{
	struct cbfile_writer *w;
	char why[CB_FORMAT_WHY_LEN];
	uint32_t i;

	/* writers check first, so they never produce a file the reader refuses */
	if (cb_config_check(cfg, why, sizeof(why))) {
		cb_set_err(err, errlen, "%s", why);
		return NULL;
	}
	if (check_meta(cfg, meta, err, errlen))
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto oom;
	w->fd = -1;
	w->cfg = *cfg;
	w->meta = *meta;
	w->meta.name = NULL;
	w->meta.tokenizer_json = NULL;
	w->meta.chat_template = NULL;
	if (meta->name)
		snprintf(w->name, sizeof(w->name), "%s", meta->name);
	w->data_align = meta->data_align ? meta->data_align : COLIBRI_FILE_TENSOR_ALIGN_MIN;
	w->n = cb_format_tensor_count(cfg);
	w->slots = calloc(w->n, sizeof(*w->slots));
	w->out_path = strdup(out_path);
	if (!w->slots || !w->out_path ||
	    asprintf(&w->tmp_path, "%s.tmp.%ld", out_path, (long)getpid()) < 0) {
		w->tmp_path = NULL;
		goto oom;
	}
	if (meta->tokenizer_json) {
		w->tok = malloc(meta->tokenizer_len);
		if (!w->tok)
			goto oom;
		memcpy(w->tok, meta->tokenizer_json, meta->tokenizer_len);
	}
	if (meta->chat_template) {
		w->tmpl = malloc(meta->chat_template_len);
		if (!w->tmpl)
			goto oom;
		memcpy(w->tmpl, meta->chat_template, meta->chat_template_len);
	}
	for (i = 0; i < w->n; i++) {
		cb_format_tensor_slot(cfg, i, &w->slots[i].s);
		w->slots[i].dtype = CB_DT_F32;
	}
	w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		cb_set_err(err, errlen, "%s: %s", w->tmp_path, strerror(errno));
		free(w->tmp_path);
		w->tmp_path = NULL;	/* not ours: do not unlink */
		cbfile_writer_abort(w);
		return NULL;
	}
	return w;
oom:
	cb_set_err(err, errlen, "%s: out of memory", out_path);
	cbfile_writer_abort(w);
	return NULL;
}

uint32_t cbfile_writer_count(const struct cbfile_writer *w)
{
	return w->n;
}

int cbfile_writer_slot(const struct cbfile_writer *w, uint32_t i, struct cb_format_slot *s)
{
	if (i >= w->n)
		return -1;
	*s = w->slots[i].s;
	return 0;
}

static struct wslot *find(struct cbfile_writer *w, uint32_t role, uint32_t layer,
			  uint32_t expert)
{
	int64_t i = cb_format_tensor_index(&w->cfg, role, layer, expert);

	if (i < 0 || (uint64_t)i >= w->n) {
		werr(w, "the config has no tensor %s (layer %d expert %d)",
		     cb_format_role_name(role), (int)layer, (int)expert);
		return NULL;
	}
	return &w->slots[i];
}

int cbfile_writer_set_dtype(struct cbfile_writer *w, uint32_t role, uint32_t layer,
			    uint32_t expert, uint32_t dtype)
{
	struct wslot *s = find(w, role, layer, expert);

	if (!s)
		return -1;
	if (w->laid_out)
		return werr(w, "set_dtype after layout");
	if (dtype >= CB_DT__COUNT)
		return werr(w, "unknown dtype %u", dtype);
	if (s->s.vector && dtype != CB_DT_F32)
		return werr(w, "%s (layer %d) is a norm/bias and must be f32",
			    cb_format_role_name(role), (int)layer);
	if (!cb_dtype_row_bytes(dtype, s->s.cols))
		return werr(w, "%s (layer %d): %s needs a row length multiple of 32, not %u",
			    cb_format_role_name(role), (int)layer, cb_dtype_name(dtype),
			    s->s.cols);
	s->dtype = dtype;
	return 0;
}

uint64_t cbfile_writer_tensor_size(const struct cbfile_writer *w, uint32_t role,
				   uint32_t layer, uint32_t expert)
{
	int64_t i = cb_format_tensor_index(&w->cfg, role, layer, expert);
	const struct wslot *s;

	if (i < 0 || (uint64_t)i >= w->n)
		return 0;
	s = &w->slots[i];
	return cb_dtype_row_bytes(s->dtype, s->s.cols) * s->s.rows;
}

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	const char *p = buf;

	while (n) {
		ssize_t r = pwrite(fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int cbfile_writer_layout(struct cbfile_writer *w)
{
	uint64_t off, dir_end, end;
	uint32_t i;

	if (w->laid_out)
		return werr(w, "layout called twice");
	dir_end = COLIBRI_FILE_HEADER_SIZE + (uint64_t)w->n * COLIBRI_FILE_TENSOR_SIZE;
	w->tok_offset = w->tok ? CB_ALIGN(dir_end, (uint64_t)64) : 0;
	end = w->tok ? w->tok_offset + w->meta.tokenizer_len : dir_end;
	w->tmpl_offset = w->tmpl ? CB_ALIGN(end, (uint64_t)64) : 0;
	if (w->tmpl)
		end = w->tmpl_offset + w->meta.chat_template_len;
	w->data_offset = CB_ALIGN(end, (uint64_t)COLIBRI_FILE_DATA_ALIGN);
	off = 0;
	for (i = 0; i < w->n; i++) {
		struct wslot *s = &w->slots[i];
		uint64_t a = w->data_align;

		s->size = cb_dtype_row_bytes(s->dtype, s->s.cols) * s->s.rows;
		/* big tensors on page boundaries: cheap, and DMA/mmap friendly */
		if (s->size >= (64u << 10) && a < 4096)
			a = 4096;
		off = CB_ALIGN(off, a);
		s->offset = off;
		off += s->size;
	}
	w->data_size = off;
	w->file_size = w->data_offset + w->data_size;
	if (w->file_size > COLIBRI_FILE_MAX_SIZE)
		return werr(w, "%s: model of %llu bytes exceeds the format's limit", w->out_path,
			    (unsigned long long)w->file_size);
	if (ftruncate(w->fd, (off_t)w->file_size))
		return werr(w, "%s: %s", w->tmp_path, strerror(errno));
	if (w->tok && pwrite_all(w->fd, w->tok, w->meta.tokenizer_len, w->tok_offset))
		return werr(w, "%s: %s", w->tmp_path, strerror(errno));
	if (w->tmpl && pwrite_all(w->fd, w->tmpl, w->meta.chat_template_len, w->tmpl_offset))
		return werr(w, "%s: %s", w->tmp_path, strerror(errno));
	w->laid_out = 1;
	return 0;
}

int cbfile_writer_tensor_begin(struct cbfile_writer *w, uint32_t role, uint32_t layer,
			       uint32_t expert)
{
	struct wslot *s;

	if (!w->laid_out)
		return werr(w, "tensor written before layout");
	if (w->cur)
		return werr(w, "tensor_begin while %s is open", cb_format_role_name(w->cur->s.role));
	s = find(w, role, layer, expert);
	if (!s)
		return -1;
	if (s->written)
		return werr(w, "tensor %s (layer %d expert %d) written twice",
			    cb_format_role_name(role), (int)layer, (int)expert);
	w->cur = s;
	w->cur_done = 0;
	s->crc = 0;
	return 0;
}

int cbfile_writer_tensor_write(struct cbfile_writer *w, const void *buf, size_t n)
{
	struct wslot *s = w->cur;

	if (!s)
		return werr(w, "tensor_write without tensor_begin");
	if (n > s->size - w->cur_done)
		return werr(w, "tensor %s (layer %d expert %d): more than its %llu bytes",
			    cb_format_role_name(s->s.role), (int)s->s.layer, (int)s->s.expert,
			    (unsigned long long)s->size);
	if (pwrite_all(w->fd, buf, n, w->data_offset + s->offset + w->cur_done))
		return werr(w, "%s: %s", w->tmp_path, strerror(errno));
	s->crc = cbfile_crc32c(s->crc, buf, n);
	w->cur_done += n;
	return 0;
}

int cbfile_writer_tensor_end(struct cbfile_writer *w)
{
	struct wslot *s = w->cur;

	if (!s)
		return werr(w, "tensor_end without tensor_begin");
	w->cur = NULL;
	if (w->cur_done != s->size)
		return werr(w, "tensor %s (layer %d expert %d): %llu bytes written, %llu expected",
			    cb_format_role_name(s->s.role), (int)s->s.layer, (int)s->s.expert,
			    (unsigned long long)w->cur_done, (unsigned long long)s->size);
	s->written = 1;
	return 0;
}

int cbfile_writer_put(struct cbfile_writer *w, uint32_t role, uint32_t layer,
		      uint32_t expert, const void *buf, size_t n)
{
	if (cbfile_writer_tensor_begin(w, role, layer, expert) ||
	    cbfile_writer_tensor_write(w, buf, n))
		return -1;
	return cbfile_writer_tensor_end(w);
}

/* Header + directory, as they go to disk. */
static void *build_head(struct cbfile_writer *w, size_t *len)
{
	size_t n = COLIBRI_FILE_HEADER_SIZE + (size_t)w->n * COLIBRI_FILE_TENSOR_SIZE;
	unsigned char *buf = calloc(1, n);
	struct colibri_file_header *h = (void *)buf;
	struct colibri_file_tensor *t = (void *)(buf + COLIBRI_FILE_HEADER_SIZE);
	uint32_t i, crc;

	if (!buf)
		return NULL;
	memcpy(h->magic, COLIBRI_FILE_MAGIC, COLIBRI_FILE_MAGIC_LEN);
	h->version = COLIBRI_FILE_VERSION;
	h->header_size = COLIBRI_FILE_HEADER_SIZE;
	h->file_size = w->file_size;
	h->dir_offset = COLIBRI_FILE_HEADER_SIZE;
	h->n_tensors = w->n;
	h->tensor_entry_size = COLIBRI_FILE_TENSOR_SIZE;
	h->tok_offset = w->tok_offset;
	h->tok_size = w->tok ? w->meta.tokenizer_len : 0;
	h->data_offset = w->data_offset;
	h->data_size = w->data_size;
	h->data_align = w->data_align;
	h->tok_kind = w->tok ? COLIBRI_TOK_HF_JSON : COLIBRI_TOK_NONE;
	h->bos_id = w->meta.bos_id;
	h->eos_id = w->meta.eos_id;
	h->pad_id = w->meta.pad_id;
	h->tok_flags = w->meta.tok_flags;
	h->tok_crc32c = w->tok ? cbfile_crc32c(0, w->tok, w->meta.tokenizer_len) : 0;
	if (w->tmpl) {
		h->flags |= COLIBRI_FILE_F_CHAT_TEMPLATE;
		h->tmpl_offset = w->tmpl_offset;
		h->tmpl_size = w->meta.chat_template_len;
		h->tmpl_crc32c = cbfile_crc32c(0, w->tmpl, w->meta.chat_template_len);
	}
	memcpy(h->name, w->name, sizeof(h->name));
	cb_format_config_to_file(&w->cfg, &h->config);
	cb_format_rope_to_file(&w->cfg, &h->rope_scaling);
	cb_format_ext_to_file(&w->cfg, h);
	cb_format_mla_to_file(&w->cfg, &h->ext_mla);
	cb_format_delta_to_file(&w->cfg, &h->ext_delta);
	for (i = 0; i < w->n; i++) {
		const struct wslot *s = &w->slots[i];

		t[i].role = s->s.role;
		t[i].layer = s->s.layer;
		t[i].expert = s->s.expert;
		t[i].dtype = s->dtype;
		t[i].rows = s->s.rows;
		t[i].cols = s->s.cols;
		t[i].offset = s->offset;
		t[i].size = s->size;
		t[i].crc32c = s->crc;
	}
	crc = cbfile_crc32c(0, buf, COLIBRI_FILE_HEADER_CRC_OFFSET);
	crc = cbfile_crc32c(crc, "\0\0\0\0", 4);
	crc = cbfile_crc32c(crc, buf + COLIBRI_FILE_HEADER_CRC_OFFSET + 4,
			    n - COLIBRI_FILE_HEADER_CRC_OFFSET - 4);
	h->header_crc32c = crc;
	*len = n;
	return buf;
}

int cbfile_writer_finish(struct cbfile_writer *w, char *err, size_t errlen)
{
	char why[CB_FORMAT_WHY_LEN];
	struct cb_format_info info;
	void *head = NULL;
	size_t len;
	uint32_t i;

	if (!w->laid_out || w->cur) {
		werr(w, "finish before layout or with a tensor open");
		goto fail;
	}
	for (i = 0; i < w->n; i++)
		if (!w->slots[i].written) {
			werr(w, "tensor %s (layer %d expert %d) was never written",
			     cb_format_role_name(w->slots[i].s.role), (int)w->slots[i].s.layer,
			     (int)w->slots[i].s.expert);
			goto fail;
		}
	head = build_head(w, &len);
	if (!head) {
		werr(w, "%s: out of memory", w->out_path);
		goto fail;
	}
	/* what we wrote must pass the reader's checks: never publish less */
	if (cb_format_check_directory(head, len, w->file_size, &info, why, sizeof(why))) {
		werr(w, "%s: internal error, output fails validation: %s", w->out_path, why);
		goto fail;
	}
	if (pwrite_all(w->fd, head, len, 0) || fsync(w->fd)) {
		werr(w, "%s: %s", w->tmp_path, strerror(errno));
		goto fail;
	}
	if (close(w->fd)) {
		w->fd = -1;
		werr(w, "%s: %s", w->tmp_path, strerror(errno));
		goto fail;
	}
	w->fd = -1;
	if (rename(w->tmp_path, w->out_path)) {
		werr(w, "%s: %s", w->out_path, strerror(errno));
		goto fail;
	}
	free(w->tmp_path);
	w->tmp_path = NULL;
	free(head);
	cbfile_writer_abort(w);
	return 0;
fail:
	free(head);
	cb_set_err(err, errlen, "%s", w->err);
	cbfile_writer_abort(w);
	return -1;
}

void cbfile_writer_abort(struct cbfile_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp_path)
		unlink(w->tmp_path);
	free(w->tmp_path);
	free(w->out_path);
	free(w->slots);
	free(w->tok);
	free(w->tmpl);
	free(w);
}

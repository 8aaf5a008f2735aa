// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * session_kernel.c - the session API's kernel backend: a model pinned in
 * /dev/colibri, one open file and one ATTACH per session, one SUBMIT per
 * piece (ioctl, or URING_CMD on a ring of the session's own).
 *
 * A file is loaded only when no model of its name is loaded (that one is
 * used as it is, whatever file it came from), and unloaded again only when
 * COLIBRI_MODEL_UNLOAD asks, after the last session is closed, and without
 * waiting: a model someone else is attached to stays for them.  An UNLOAD
 * that waited while one of our own sessions was attached would never end.
 *
 * io_uring: a ring is made with IORING_SETUP_SINGLE_ISSUER, so it serves
 * the thread that made it; the session makes its ring on its first step
 * and again whenever a step comes from another thread (nothing is ever in
 * flight between two calls, so a ring can be dropped at any call).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/cbfile.h"
#include "chat/chat_template.h"
#include "colibri_uring.h"
#include "libcolibri.h"
#include "import/gguf.h"
#include "session/session_priv.h"
#include "tokenizer.h"

static const char *const desc_ioctl = "kernel (/dev/colibri)";
static const char *const desc_uring = "kernel (/dev/colibri, io_uring)";

/* The LIST entry of @name: 1 found, 0 not, or -errno. */
static int find_entry(int fd, const char *name, struct colibri_model_entry *e)
{
	struct colibri_model_entry ents[64];
	int n = colibri_dev_list(fd, ents, 64), i;

	if (n < 0)
		return n;
	for (i = 0; i < n && i < 64; i++)
		if (!strcmp(ents[i].name, name)) {
			*e = ents[i];
			return 1;
		}
	return 0;
}

/* Makes sure the file @path is loaded as m->kname. */
static int ensure_loaded(struct colibri_model *m, const char *path, char *err, size_t errlen)
{
	struct colibri_model_entry e;
	int ret = find_entry(m->ctl_fd, m->kname, &e);

	if (ret < 0) {
		snprintf(err, errlen, "LIST: %s", strerror(-ret));
		return ret;
	}
	if (ret || m->flags & COLIBRI_MODEL_NO_LOAD) {
		if (!ret)
			snprintf(err, errlen, "no model '%s' is loaded in the kernel", m->kname);
		return ret ? 0 : -ENOENT;
	}
	ret = colibri_dev_load(m->ctl_fd, path, m->kname, NULL, NULL);
	if (ret == -EEXIST)
		return 0;	/* another process loaded it meanwhile */
	if (ret) {
		snprintf(err, errlen, "cannot load %s into the kernel: %s%s", path, strerror(-ret),
			 ret == -EPERM ? " (loading needs CAP_SYS_ADMIN)" :
			 ret == -EINVAL ? " (the kernel log says why)" : "");
		return ret;
	}
	m->info.loaded = 1;
	return 0;
}

/* A path: map the file (its name and its weight layout), load it if needed. */
static int open_file(struct colibri_model *m, const char *path, char *err, size_t errlen)
{
	const char *name;

	m->cf = cbfile_open(path, 0, err, errlen);
	if (!m->cf)
		return -EINVAL;
	name = m->name_opt && *m->name_opt ? m->name_opt : m->cf->info.name;
	if (strlen(name) >= sizeof(m->kname)) {
		snprintf(err, errlen, "the model name '%s' is longer than %zu bytes: give another",
			 name, sizeof(m->kname) - 1);
		return -ENAMETOOLONG;
	}
	snprintf(m->kname, sizeof(m->kname), "%s", name);
	m->cfg = &m->cf->cfg;
	m->w = &m->cf->w;
	m->info.max_context = m->cf->cfg.max_context;
	return ensure_loaded(m, path, err, errlen);
}

static int kernel_model_open(struct colibri_model *m, const char *model, char *err,
			     size_t errlen)
{
	struct colibri_model_entry e;
	struct colibri_info di;
	struct stat st;
	int ret;

	m->ctl_fd = colibri_dev_open();
	if (m->ctl_fd < 0) {
		ret = m->ctl_fd;
		snprintf(err, errlen, "cannot open %s: %s%s", COLIBRI_DEVICE_PATH, strerror(-ret),
			 ret == -ENOENT ? " (is the colibri module loaded?)" : "");
		return ret;
	}
	if (!stat(model, &st) && (S_ISDIR(st.st_mode) || gguf_is_gguf(model))) {
		snprintf(err, errlen, "%s: the kernel takes .colibri files (colibri convert makes "
			 "one; colibri load pins a GGUF file, then use the model's name)", model);
		ret = -EINVAL;
		goto err_close;
	}
	if (!stat(model, &st)) {
		ret = open_file(m, model, err, errlen);
	} else if (strlen(model) >= sizeof(m->kname) || strchr(model, '/')) {
		snprintf(err, errlen, "%s: %s", model, strerror(errno));
		ret = -ENOENT;
	} else {
		snprintf(m->kname, sizeof(m->kname), "%s", model);
		ret = 0;
	}
	if (ret)
		goto err_close;
	ret = find_entry(m->ctl_fd, m->kname, &e);
	if (ret <= 0) {
		if (!ret)
			snprintf(err, errlen, "'%s' is neither a file nor a model loaded in the kernel",
				 m->kname);
		ret = ret ? ret : -ENOENT;
		goto err_unload;
	}
	ret = colibri_dev_get_info(m->ctl_fd, &di);
	if (ret) {
		snprintf(err, errlen, "GET_INFO: %s", strerror(-ret));
		goto err_unload;
	}
	snprintf(m->info.name, sizeof(m->info.name), "%s", m->kname);
	snprintf(m->info.isa, sizeof(m->info.isa), "%.*s", (int)sizeof(di.isa_name),
		 di.isa_name);
	m->info.backend = COLIBRI_BACKEND_KERNEL;
	m->info.description = m->info.io == COLIBRI_IO_URING ? desc_uring : desc_ioctl;
	m->info.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->info.arch = e.arch;
	m->info.vocab_size = e.vocab_size;
	m->info.n_layers = e.n_layers;
	m->info.n_experts = e.n_experts;
	m->info.top_k = e.n_experts ? e.top_k : 0;
	return 0;

err_unload:
	if (m->info.loaded)
		colibri_dev_unload(m->ctl_fd, m->kname, 0);
err_close:
	/* AUTO may go on in-process with this model: leave nothing of ours. */
	cbfile_close(m->cf);
	m->cf = NULL;
	m->cfg = NULL;
	m->w = NULL;
	m->info.loaded = 0;
	m->kname[0] = 0;
	close(m->ctl_fd);
	m->ctl_fd = -1;
	return ret;
}

static void kernel_model_close(struct colibri_model *m)
{
	/* Every session of ours is closed: this cannot wait for one of them. */
	if (m->info.loaded && m->flags & COLIBRI_MODEL_UNLOAD)
		colibri_dev_unload(m->ctl_fd, m->kname, 0);
	close(m->ctl_fd);
	cbfile_close(m->cf);
}

static int kernel_tokenizer(struct colibri_model *m, struct cb_tokenizer **tok, char *err,
			    size_t errlen)
{
	struct colibri_tokenizer t;
	void *json;
	size_t len;
	int ret = colibri_dev_get_tokenizer(m->ctl_fd, m->kname, &json, &len, &t);

	if (ret) {
		snprintf(err, errlen, "the tokenizer of '%s': %s", m->kname, strerror(-ret));
		return ret;
	}
	if (!json) {
		snprintf(err, errlen, "model '%s' has no tokenizer", m->kname);
		return -ENODATA;
	}
	*tok = cb_tok_load(json, len, err, errlen);
	free(json);
	if (!*tok)
		return -EINVAL;
	if (t.bos_id >= 0)
		cb_tok_set_bos_id(*tok, t.bos_id);
	if (t.eos_id >= 0)
		cb_tok_set_eos_id(*tok, t.eos_id);
	m->kbos = t.bos_id;
	m->keos = t.eos_id;
	m->kpad = t.pad_id;
	return 0;
}

/*
 * The template the kernel keeps with the model (whatever file it was loaded
 * from), and the text of its special ids through its tokenizer (none
 * without one: a template that prints bos_token then sees it undefined,
 * as it would in the file).
 */
static int kernel_chat(struct colibri_model *m, struct cb_chat *c, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	char terr[256];
	int ret;

	ret = colibri_dev_get_chat_template(m->ctl_fd, m->kname, &c->tmpl, &c->tmpl_len);
	if (ret) {
		snprintf(err, errlen, "the chat template of '%s': %s", m->kname, strerror(-ret));
		return ret;
	}
	c->source = "the kernel's copy";
	tok = colibri_model_tokenizer(m, terr, sizeof(terr));
	if (cb_chat_add_special_ids(c, tok, tok ? m->kbos : -1, tok ? m->keos : -1,
				    tok ? m->kpad : -1)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void kernel_session_close(struct colibri_session *s)
{
	colibri_ring_destroy(s->ring);
	if (s->fd >= 0)
		close(s->fd);
}

static int kernel_sessions_open(struct colibri_session **ss, unsigned int n,
				const struct colibri_session_opts *o, char *err, size_t errlen)
{
	struct colibri_attach at;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		struct colibri_session *s = ss[i];

		s->fd = colibri_dev_open();
		if (s->fd < 0) {
			ret = s->fd;
			snprintf(err, errlen, "cannot open %s: %s", COLIBRI_DEVICE_PATH,
				 strerror(-ret));
			break;
		}
		ret = colibri_dev_attach(s->fd, s->m->kname, o->max_context, o->max_batch, &at);
		if (ret) {
			snprintf(err, errlen, "cannot attach to '%s': %s%s", s->m->kname,
				 strerror(-ret),
				 ret == -ENOSPC ? " (the module's session limit is reached)" :
				 ret == -ENOMEM ? " (the module's memory limit is reached)" :
				 ret == -EDQUOT ? " (this user's share of the module is used up)" :
				 ret == -EINVAL ? " (a context beyond the model's?)" :
				 ret == -ENOENT ? " (it was unloaded)" : "");
			break;
		}
		s->max_context = at.max_context;
		s->max_batch = at.max_batch;
	}
	if (ret)
		while (i--)
			kernel_session_close(ss[i]);
	return ret;
}

/* The session's ring, made by (and for) the calling thread. */
static int session_ring(struct colibri_session *s)
{
	int ret;

	if (s->ring && pthread_equal(s->ring_owner, pthread_self()))
		return 0;
	colibri_ring_destroy(s->ring);
	s->ring = NULL;
	ret = colibri_ring_create(&s->ring, 4);
	if (ret) {
		session_err(s, "cannot set up an io_uring: %s", strerror(-ret));
		return ret;
	}
	s->ring_owner = pthread_self();
	return 0;
}

static int kernel_piece(struct colibri_session *s, const uint32_t *toks, uint32_t n, int last,
			struct colibri_step *st, float *logits, uint32_t *trace)
{
	const struct colibri_model_info *mi = &s->m->info;
	struct colibri_submit sub;
	int ret;

	memset(&sub, 0, sizeof(sub));
	sub.flags = s->need_reset ? COLIBRI_SUBMIT_RESET : 0;
	sub.tokens = (uintptr_t)toks;
	sub.n_tokens = n;
	sub.temperature_milli = s->sp.temperature_milli;
	sub.top_k = s->sp.top_k;
	sub.top_p_ppm = s->sp.top_p_ppm;
	sub.seed = s->sp.seed;
	if (logits) {
		sub.flags |= COLIBRI_SUBMIT_LOGITS;
		sub.logits = (uintptr_t)logits;
		sub.logits_len = mi->vocab_size;
	}
	if (trace && mi->top_k) {
		sub.flags |= COLIBRI_SUBMIT_TRACE;
		sub.trace = (uintptr_t)trace;
		sub.trace_len = n * mi->n_layers * mi->top_k * 2;
	}
	if (mi->io == COLIBRI_IO_URING) {
		ret = session_ring(s);
		if (!ret)
			ret = colibri_ring_step(s->ring, s->fd, &sub);
	} else {
		ret = colibri_dev_submit(s->fd, &sub);
	}
	if (ret) {
		if (!s->err[0])
			session_err(s, "SUBMIT: %s%s", strerror(-ret),
				    ret == -ENODEV ? " (the model is being unloaded)" :
				    ret == -EINTR ? " (a signal came)" : "");
		return ret;
	}
	s->need_reset = 0;
	s->n_past = sub.n_past;
	if (last)
		st->token = sub.token;
	return 0;
}

/* The module batches sessions itself: here they simply go one by one. */
static int kernel_step_group(struct colibri_session **ss, unsigned int n, const uint32_t *toks,
			     struct colibri_step *st)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = kernel_piece(ss[i], &toks[i], 1, 1, &st[i], st[i].logits, st[i].trace);
		if (ret)
			return ret;
	}
	return 0;
}

static void kernel_reset(struct colibri_session *s)
{
	s->need_reset = 1;	/* rides on the next SUBMIT */
}

const struct session_backend session_kernel_backend = {
	.model_open = kernel_model_open,
	.model_close = kernel_model_close,
	.tokenizer = kernel_tokenizer,
	.chat = kernel_chat,
	.sessions_open = kernel_sessions_open,
	.session_close = kernel_session_close,
	.piece = kernel_piece,
	.step_group = kernel_step_group,
	.reset = kernel_reset,
	.all_logits = 0,
};

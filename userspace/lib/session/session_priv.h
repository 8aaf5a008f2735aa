/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * session_priv.h - what the session API (session.c) and its two backends
 * share: the kernel's (session_kernel.c) and the in-process engine's
 * (session_user.c).  Not installed; callers use colibri_session.h.
 *
 * session.c owns everything both backends do alike: reference counts,
 * the context check, splitting a prefill into pieces of max_batch tokens,
 * cancellation between pieces, resetting after an error, the error text,
 * the generation loop.  A backend only runs pieces.  session.c reaches a
 * backend only through its table (m->be), which colibri_model_open()
 * (session_open.c, above both backends) chooses.
 */
#ifndef COLIBRI_SESSION_PRIV_H
#define COLIBRI_SESSION_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "colibri_session.h"

struct cbfile;
struct cb_chat;
struct colibri_ring;
struct cb_model_config;
struct cb_model_weights;

/*
 * One backend.  Every function returns 0 or a negative errno value and may
 * leave a message in the session (session_err()); session.c words it if
 * the backend did not.
 */
struct session_backend {
	/* The model is set up (info filled) when open returns 0. */
	int (*model_open)(struct colibri_model *m, const char *model, char *err, size_t errlen);
	void (*model_close)(struct colibri_model *m);
	int (*tokenizer)(struct colibri_model *m, struct cb_tokenizer **tok, char *err,
			 size_t errlen);
	/* The chat template and special tokens into @c (zeroed by the caller). */
	int (*chat)(struct colibri_model *m, struct cb_chat *c, char *err, size_t errlen);
	/* @n sessions ss[0..n) of one group (n == 1: a lone session). */
	int (*sessions_open)(struct colibri_session **ss, unsigned int n,
			     const struct colibri_session_opts *o, char *err, size_t errlen);
	void (*session_close)(struct colibri_session *s);
	/*
	 * One piece of at most max_batch tokens at position s->n_past; @last:
	 * the last piece of the call, sample after it (and write st->logits).
	 * @trace: where this piece's trace goes, or NULL.  On success
	 * s->n_past is updated and, if @last, st->token is set.
	 */
	int (*piece)(struct colibri_session *s, const uint32_t *toks, uint32_t n, int last,
		     struct colibri_step *st, float *logits, uint32_t *trace);
	/* One token into each of ss[0..n), one pass where the backend can. */
	int (*step_group)(struct colibri_session **ss, unsigned int n, const uint32_t *toks,
			  struct colibri_step *st);
	/* Forget the sequence (the backend may do it lazily). */
	void (*reset)(struct colibri_session *s);
	/* Can it hand out the logits of every position (COLIBRI_STEP_ALL_LOGITS)? */
	int all_logits;
};

extern const struct session_backend session_kernel_backend;
extern const struct session_backend session_user_backend;

struct colibri_model {
	atomic_int refs;		/* the opener's handle + one per session */
	const struct session_backend *be;
	struct colibri_model_info info;
	unsigned int flags;		/* COLIBRI_MODEL_* */
	int threads, isa, dtype, preset;	/* as opened */
	const char *name_opt;		/* opts->name, during colibri_model_open() only */

	pthread_mutex_t tok_lock;	/* protects ->tok while it is loaded */
	struct cb_tokenizer *tok;
	pthread_mutex_t chat_lock;	/* protects ->chat while it is loaded */
	struct cb_chat *chat;

	/*
	 * Weights as the in-process engine binds them (also for a kernel model
	 * opened by path, for colibri_model_pass_bytes()), or NULL.
	 */
	const struct cb_model_config *cfg;
	const struct cb_model_weights *w;
	struct cbfile *cf;		/* a .colibri file, mapped */

	/* kernel */
	int ctl_fd;			/* /dev/colibri for LIST, GET_TOKENIZER, UNLOAD */
	char kname[32];			/* the name in the kernel */
	int32_t kbos, keos, kpad;	/* its special ids, from GET_TOKENIZER (-1: none) */

	/* in-process (session_user.c) */
	void *user;
};

struct colibri_session {
	struct colibri_model *m;
	uint32_t max_context, max_batch;
	uint32_t n_past;
	int32_t last_token;		/* the last token sampled, -1 before any */
	struct colibri_sampling sp;
	atomic_int cancel;		/* colibri_session_cancel() was called */
	char err[256];

	/* kernel (session_kernel.c) */
	int fd;
	int need_reset;			/* the next SUBMIT carries COLIBRI_SUBMIT_RESET */
	struct colibri_ring *ring;	/* io_uring: made by ring_owner */
	pthread_t ring_owner;

	/* in-process (session_user.c) */
	struct user_group *group;	/* the engine this session is a slot of */
	uint32_t slot;
};

/* printf into s->err. */
void session_err(struct colibri_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The session's cancellation, taken (cleared) if it was set: 1 or 0. */
int session_take_cancel(struct colibri_session *s);

/*
 * Weight bytes (weight_bytes.c): the whole model, and one forward pass over
 * @n tokens with routing trace @trace ([n][n_layers][top_k][2]).
 */
double cb_weight_bytes(const struct cb_model_config *c, const struct cb_model_weights *w);
double cb_pass_bytes(const struct cb_model_config *c, const struct cb_model_weights *w,
		     const uint32_t *trace, uint32_t n);

#endif /* COLIBRI_SESSION_PRIV_H */

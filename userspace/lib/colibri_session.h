/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * colibri_session.h - libcolibri's session API: run a model, one sequence
 * per session, through /dev/colibri or in this process, with one set of
 * calls whatever runs it.
 *
 *   struct colibri_model *m;
 *   struct colibri_session *s;
 *   struct colibri_step st = { 0 };
 *
 *   colibri_model_open(&m, "model.colibri", NULL, err, sizeof(err));
 *   colibri_session_open(&s, m, NULL, err, sizeof(err));
 *   colibri_session_prefill(s, prompt, n, &st);     // st.token: the next token
 *   while (...)
 *           colibri_session_step(s, st.token, &st);  // feed it, get the one after
 *   colibri_session_close(s);
 *   colibri_model_close(m);
 *
 * A model is opened by path (a .colibri file; in-process also a Hugging
 * Face directory or a GGUF file) or by the name of a model pinned in the
 * kernel.  Backends: the kernel (/dev/colibri; steps by ioctl or through
 * io_uring), or the engine linked into libcolibri, run on a pthread pool in
 * this process.  Both run the same engine code and draw each token with the
 * same (seed, position) counter: on the same ISA level they give the same
 * tokens and bit-identical logits.
 *
 * Threads.  A model may be shared by any number of sessions and threads;
 * open and close sessions from any thread.  A session is used by one
 * thread at a time (a server: one per request), except for
 * colibri_session_cancel(), which any thread may call at any time.  Kernel
 * sessions run concurrently and the module batches their steps into one
 * forward pass; in-process sessions of one model take turns on its thread
 * pool, one forward pass at a time (colibri_session_open_group() batches
 * several in one pass).
 *
 * Errors.  Every int function returns 0 or a negative errno value; the
 * session keeps a one-line message naming the problem
 * (colibri_session_error()), the open functions write theirs to @err.
 * After a failed prefill or step (a cancellation included) the session's
 * sequence is empty: nothing half done is kept.  Nothing here prints.
 */
#ifndef COLIBRI_SESSION_H
#define COLIBRI_SESSION_H

#include <stddef.h>
#include <stdint.h>

struct colibri_model;
struct colibri_session;
struct cb_tokenizer;
struct cb_chat;

enum colibri_backend {
	COLIBRI_BACKEND_AUTO = 0,	/* the kernel if it can be used, else in-process */
	COLIBRI_BACKEND_KERNEL = 1,	/* /dev/colibri */
	COLIBRI_BACKEND_USER = 2,	/* the engine in this process */
};

enum colibri_io {
	COLIBRI_IO_IOCTL = 0,		/* kernel: COLIBRI_IOC_SUBMIT by ioctl */
	COLIBRI_IO_URING = 1,		/* kernel: the same SUBMIT as an io_uring URING_CMD */
};

/* struct colibri_model_opts.flags */
/* Kernel: never load a file, only use a model of its name already loaded. */
#define COLIBRI_MODEL_NO_LOAD		(1u << 0)
/*
 * Kernel: a model this open loaded is unloaded again when the model is
 * closed (after its last session), unless someone else is attached then.
 */
#define COLIBRI_MODEL_UNLOAD		(1u << 1)
/*
 * In-process .colibri: run from a copy of the weights in anonymous memory
 * with transparent huge pages, as the kernel's pinned copy is mapped,
 * instead of the file's page-cache mapping.
 */
#define COLIBRI_MODEL_HUGEPAGES		(1u << 2)

/**
 * struct colibri_model_opts - how to open a model (NULL: all defaults).
 * @backend: enum colibri_backend.  AUTO uses the kernel when /dev/colibri
 *	opens and the model can be had there (loading a file needs
 *	CAP_SYS_ADMIN), and the in-process engine otherwise (a file only).
 * @io: kernel: enum colibri_io.
 * @name: kernel: the name to load a file under and to look for first
 *	(NULL: the name the file carries).
 * @threads: in-process: threads that run the engine, the caller's
 *	included; <= 0: one per online CPU.
 * @isa: in-process: the highest ISA level (COLIBRI_ISA_* of colibri.h);
 *	< 0: the best this CPU has.  COLIBRI_ISA in the environment caps it
 *	further.  The kernel's is the module's (its max_isa parameter).
 * @dtype: in-process Hugging Face directory: convert its matrices to this
 *	weight type (enum cb_dtype); < 0: keep them as stored.
 * @preset: with @dtype its base type, one of llama.cpp's mixes instead
 *	(enum cb_preset of quant_preset.h, 0: none): each matrix's type by
 *	its role, as colibri convert --quant stores it.
 * @flags: COLIBRI_MODEL_*.
 */
struct colibri_model_opts {
	enum colibri_backend backend;
	enum colibri_io io;
	const char *name;
	int threads;
	int isa;
	int dtype;
	int preset;
	unsigned int flags;
};

/**
 * struct colibri_model_info - what an open model is and where it runs.
 * @name: the model's name (the kernel's, or the one the file carries).
 * @backend: COLIBRI_BACKEND_KERNEL or COLIBRI_BACKEND_USER (never AUTO).
 * @io: kernel: the way steps are submitted.
 * @description: e.g. "kernel (/dev/colibri, io_uring)", "in-process engine".
 * @note: AUTO: why the in-process engine runs it although the kernel was
 *	asked first ("" when the device is simply absent or was used).
 * @loaded: kernel: this open loaded the model (it was not there).
 * @isa: the ISA variant that runs it ("avx2", ...).
 * @threads: in-process: the engine's threads; kernel: the CPUs online.
 * @arch: COLIBRI_ARCH_* number (colibri_arch_name() names it).
 * @vocab_size: length of a logits row.
 * @n_layers, @n_experts, @top_k: shape (top_k is 0 for a dense model);
 *	a routing trace has n_layers * top_k * 2 words per token.
 * @max_context: positions the model allows (0: no limit of its own, or
 *	unknown: a kernel model opened by name).
 * @caps: COLIBRI_CAP_* of the backend.
 */
struct colibri_model_info {
	char name[64];
	enum colibri_backend backend;
	enum colibri_io io;
	const char *description;
	char note[160];
	int loaded;
	char isa[16];
	int threads;
	uint32_t arch;
	uint32_t vocab_size;
	uint32_t n_layers;
	uint32_t n_experts;
	uint32_t top_k;
	uint32_t max_context;
	unsigned int caps;
/* It can hand out the logits of every position fed (COLIBRI_STEP_ALL_LOGITS). */
#define COLIBRI_CAP_ALL_LOGITS	(1u << 0)
};

/*
 * colibri_model_open() - open @model (a path, or the name of a model
 * loaded in the kernel) with @opts (may be NULL).  On failure returns a
 * negative errno value and one line in @err: -ENOENT for a model that is
 * neither a file nor loaded, -EINVAL for a file that is not a model (or
 * options that do not apply to it), -EPERM when loading needs a privilege
 * the caller lacks, -ENOMEM.
 */
int colibri_model_open(struct colibri_model **out, const char *model,
		       const struct colibri_model_opts *opts, char *err, size_t errlen);

/*
 * colibri_model_close() - give up the caller's handle.  The model goes
 * when its last session is closed too (sessions keep it open).
 */
void colibri_model_close(struct colibri_model *m);

const struct colibri_model_info *colibri_model_info(const struct colibri_model *m);

/*
 * colibri_model_tokenizer() - the model's tokenizer: the one the kernel
 * keeps with a pinned model (COLIBRI_IOC_GET_TOKENIZER), the one in a
 * .colibri or GGUF file, or tokenizer.json of a Hugging Face directory.
 * Loaded on the first call; the model owns it (valid until the model is
 * closed), and it may be used from many threads at once.  NULL and a
 * reason in @err when the model has none.
 */
struct cb_tokenizer *colibri_model_tokenizer(struct colibri_model *m, char *err, size_t errlen);

/*
 * colibri_model_chat() - the model's chat template and the special tokens
 * it prints (struct cb_chat of chat_template.h; render conversations with
 * cb_chat_render()): for a model pinned in the kernel, the template the
 * kernel keeps (GET_TOKENIZER with COLIBRI_TOKENIZER_CHAT_TEMPLATE) and
 * the text of its BOS/EOS/PAD ids; in-process, those of the file or
 * directory (tokenizer_config.json, GGUF metadata, the .colibri section).
 * ->tmpl is NULL when the model has none (cb_chat_render() then uses the
 * plain fallback).  Loaded on the first call; the model owns it (valid
 * until the model is closed), and many threads may render with it at
 * once.  NULL and a reason in @err on failure.
 */
const struct cb_chat *colibri_model_chat(struct colibri_model *m, char *err, size_t errlen);

/*
 * Weight bytes, for benchmarks (docs/performance.md): of the whole model,
 * and of one forward pass over @n tokens whose routing trace is @trace
 * (each tensor once, each distinct routed expert of a layer once, one
 * embedding row per token).  -ENODATA when the weights are only in the
 * kernel (a model opened by name).
 */
int colibri_model_weight_bytes(const struct colibri_model *m, double *bytes);
int colibri_model_pass_bytes(const struct colibri_model *m, const uint32_t *trace, uint32_t n,
			     double *bytes);

/**
 * struct colibri_session_opts - the shape of a session (NULL: defaults).
 * @max_context: positions the sequence may hold; 0: 2048, or the model's
 *	own limit if that is smaller.  More than the model's is -EINVAL.
 * @max_batch: tokens one forward pass carries (longer prefills go in
 *	pieces of this size); 0: 64.
 */
struct colibri_session_opts {
	uint32_t max_context;
	uint32_t max_batch;
};

/*
 * colibri_session_open() - a new, empty sequence on @m.  Kernel errors
 * include -ENOSPC when the module's session limit is reached and -ENOMEM
 * when its memory limit is (the caller may tell its own client to come
 * back later).  Sampling starts greedy.
 */
int colibri_session_open(struct colibri_session **out, struct colibri_model *m,
			 const struct colibri_session_opts *opts, char *err, size_t errlen);

/* Most sessions in one group. */
#define COLIBRI_GROUP_MAX	256

/*
 * colibri_session_open_group() - @n sessions meant to be stepped together
 * by colibri_session_step_group(): in-process they are @n sequence slots
 * of one engine, so a group step is one forward pass; kernel sessions are
 * independent (the module batches them itself).  Close each one.
 */
int colibri_session_open_group(struct colibri_session **out, unsigned int n,
			       struct colibri_model *m, const struct colibri_session_opts *opts,
			       char *err, size_t errlen);

void colibri_session_close(struct colibri_session *s);

/* The session's limits and state. */
uint32_t colibri_session_max_context(const struct colibri_session *s);
uint32_t colibri_session_max_batch(const struct colibri_session *s);
uint32_t colibri_session_n_past(const struct colibri_session *s);

/**
 * struct colibri_sampling - how the next token is drawn (as in
 * struct colibri_submit).
 * @temperature_milli: temperature x 1000; 0 = greedy (argmax).
 * @top_k: keep the k most likely tokens; 0 = all.
 * @top_p_ppm: nucleus mass in parts per million; 0 = off.
 * @seed: the draw for position p uses (seed, p).
 */
struct colibri_sampling {
	uint32_t temperature_milli;
	uint32_t top_k;
	uint32_t top_p_ppm;
	uint64_t seed;
};

void colibri_session_set_sampling(struct colibri_session *s, const struct colibri_sampling *sp);

/*
 * colibri_sample() - the token a step draws from the logits @logits[@n] of
 * position @pos with @sp: the engine's sampler, which depends only on
 * (seed, pos, logits), so it answers what either backend answered.  For a
 * caller that changes logits before sampling (a grammar, a logit bias).
 * Return: the token, -EINVAL or -ENOMEM.
 */
int colibri_sample(const float *logits, uint32_t n, const struct colibri_sampling *sp,
		   uint32_t pos);

/* struct colibri_step.flags */
/*
 * Logits of every position fed, not only of the last (@logits holds
 * n * vocab_size floats); in-process only (-EOPNOTSUPP in the kernel,
 * whose SUBMIT returns the last position's).
 */
#define COLIBRI_STEP_ALL_LOGITS		(1u << 0)

/**
 * struct colibri_step - what one prefill or step returns.
 * @logits: in: NULL, or vocab_size floats for the logits of the last
 *	position fed.
 * @trace: in: NULL, or n * n_layers * top_k * 2 words for the routing
 *	trace of the n tokens fed: expert id and the f32 bits of its weight,
 *	per token, layer and rank; dense layers hold 0xffffffff and 0.
 * @flags: in: COLIBRI_STEP_*.
 * @token: out: the sampled next token.
 * @n_past: out: positions the sequence holds now.
 */
struct colibri_step {
	float *logits;
	uint32_t *trace;
	unsigned int flags;
	int32_t token;
	uint32_t n_past;
};

/*
 * colibri_session_prefill() - append @n tokens (a prompt, or the next turn
 * of a conversation) and sample the next one.  @st may be NULL.  -ENOSPC
 * (nothing fed) when they do not fit the context; -EINVAL for a token id
 * outside the vocabulary; -ECANCELED after colibri_session_cancel().
 */
int colibri_session_prefill(struct colibri_session *s, const uint32_t *tokens, uint32_t n,
			    struct colibri_step *st);

/* colibri_session_prefill() of one token: a decode step. */
int colibri_session_step(struct colibri_session *s, uint32_t token, struct colibri_step *st);

/*
 * colibri_session_step_group() - one decode step of each of @n sessions of
 * one model, session i fed @tokens[i], its results in @st[i] (@st may be
 * NULL).  In-process sessions of one group run as one forward pass; others
 * one after another.  On an error every session of the call is reset.
 */
int colibri_session_step_group(struct colibri_session **ss, unsigned int n,
			       const uint32_t *tokens, struct colibri_step *st);

/* Empty the sequence (sampling and limits stay). */
int colibri_session_reset(struct colibri_session *s);

/*
 * colibri_session_cancel() - from any thread: the prefill, step or
 * generation running on @s (or, if none is, the next one) ends with
 * -ECANCELED within one forward pass (at most max_batch tokens): at once
 * between passes, and in-process also between the phases of a pass.
 */
void colibri_session_cancel(struct colibri_session *s);

/* The message of the last error on @s ("" if none). */
const char *colibri_session_error(const struct colibri_session *s);

/* Why colibri_session_generate() stopped. */
enum colibri_stop {
	COLIBRI_STOP_NONE = 0,		/* it did not (an error) */
	COLIBRI_STOP_EOS,		/* the model sampled the end-of-sequence token */
	COLIBRI_STOP_LENGTH,		/* max_new tokens were made */
	COLIBRI_STOP_CONTEXT,		/* the sequence filled the context */
	COLIBRI_STOP_CALLER,		/* on_token() asked to stop (a stop string) */
};

/**
 * struct colibri_generation - one generation, streamed token by token.
 * @max_new: in: most tokens to make (the end-of-sequence one included).
 * @eos: in: the end-of-sequence token, or -1.
 * @on_token: in: called with each new token as soon as it is sampled,
 *	except the end-of-sequence one, and with its step (logits and trace
 *	of the pass that sampled it, if @step asks for them); non-zero stops
 *	the generation there (COLIBRI_STOP_CALLER).  May be NULL.
 * @on_logits: in: NULL, or called with the logits of each position
 *	about to be sampled (@n floats, the vocabulary), to change them in
 *	place (a logit bias, repetition penalties, a grammar's mask) or to
 *	choose the token.  *@token comes in as the token the engine drew from
 *	the logits as they were; the hook leaves it, sets another (the
 *	caller's own draw: a grammar that refused the engine's), or sets -1:
 *	the token is then drawn from the changed logits by colibri_sample()
 *	with the session's sampling and the engine's counter (@pos), so
 *	logits left as they are give the very token the engine drew.  Non-zero
 *	stops the generation before a token (COLIBRI_STOP_CALLER).  The logits
 *	are in @step.logits when the caller gave a buffer there, else in one
 *	of the call's own.
 * @arg: in: for @on_token and @on_logits.
 * @step: in: @logits, @trace, @flags for every pass; out: the last step.
 * @n_new: out: tokens sampled, the end-of-sequence one included.
 * @stop: out: enum colibri_stop.
 *
 * At the end of the context the last token sampled is handed out but not
 * fed: a generation that asks for more than fits makes
 * max_context - n_past_before + 1 tokens and stops with
 * COLIBRI_STOP_CONTEXT, which is not an error.
 */
struct colibri_generation {
	uint32_t max_new;
	int32_t eos;
	int (*on_token)(void *arg, int32_t token, const struct colibri_step *st);
	int (*on_logits)(void *arg, float *logits, uint32_t n, uint32_t pos, int32_t *token);
	void *arg;
	struct colibri_step step;
	uint32_t n_new;
	enum colibri_stop stop;
};

/*
 * colibri_session_generate() - prefill @prompt (@n tokens; 0: go on from
 * the token the last call sampled), then feed each sampled token back
 * until g->stop says why not.  Errors as for prefill and step.
 */
int colibri_session_generate(struct colibri_session *s, const uint32_t *prompt, uint32_t n,
			     struct colibri_generation *g);

#endif /* COLIBRI_SESSION_H */

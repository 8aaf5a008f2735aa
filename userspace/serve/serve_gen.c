// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_gen.c - one request's generation: its prompt's tokens, its
 * session, and its text, token by token, through the stop strings.
 *
 * The text of each token comes from the tokenizer's streaming decoder
 * (whole UTF-8 characters only, special tokens left out), then goes
 * through the stop-string matcher, and what the matcher lets through goes
 * to the sink at once (a stream sends it as a chunk); a harmony model's
 * chat answer is split into its channels on the way (serve_text.h).  A generation ends
 * at the end-of-sequence token, at the template's end-of-turn token
 * (chat), at a stop string, at max_tokens or at the end of the context
 * (libcolibri's colibri_session_generate() decides the last three with
 * on_token()), or when the sink says the client is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_grammar.h"
#include "serve_live.h"
#include "serve_logits.h"
#include "serve_logprobs.h"
#include "serve_mask.h"
#include "serve_metrics.h"
#include "serve_prompt.h"
#include "serve_structured.h"
#include "tokenizer.h"

/* A constrained draw's own seed, apart from the engine's (serve_mask.h). */
#define SERVE_MASK_SEED 0x9e3779b97f4a7c15ull

int gen_prepare(struct serve *srv, struct gen_req *r, struct api_error *e)
{
	char err[384];
	int32_t *ids32 = NULL;
	long n, i;

	if (r->kind == GEN_CHAT) {
		n = chat_prompt(srv->chat, srv->tok, r->messages, r->tools, r->tmpl_vars,
				&r->prompt, err, sizeof(err));
		if (n < 0) {
			api_bad(e, "messages", "%s", err);
			return -1;
		}
		r->n_prompt = (uint32_t)n;
	} else if (r->prompt_text) {
		/* As colibri generate encodes a prompt: with the tokenizer's own BOS & co. */
		n = cb_tok_encode_alloc(srv->tok, r->prompt_text, strlen(r->prompt_text),
					CB_TOK_ADD_SPECIAL, &ids32);
		if (n >= 0)
			r->prompt = malloc((n ? n : 1) * sizeof(*r->prompt));
		if (n < 0 || !r->prompt) {
			free(ids32);
			api_error_set(e, 500, "server_error", NULL, NULL, "the prompt cannot be encoded");
			return -1;
		}
		for (i = 0; i < n; i++)
			r->prompt[i] = (uint32_t)ids32[i];
		free(ids32);
		r->n_prompt = (uint32_t)n;
	}
	if (!r->n_prompt) {
		api_bad(e, r->kind == GEN_CHAT ? "messages" : "prompt", "the prompt is empty");
		return -1;
	}
	if (r->n_prompt > srv->max_context) {
		api_error_set(e, 400, "invalid_request_error",
			      r->kind == GEN_CHAT ? "messages" : "prompt", "context_length_exceeded",
			      "This model's maximum context length is %u tokens, but the prompt is %u tokens",
			      srv->max_context, r->n_prompt);
		return -1;
	}
	if (r->logprobs) {
		r->lp = malloc(sizeof(*r->lp));
		if (!r->lp || logprobs_init(r->lp, r->top_logprobs, srv->mi->vocab_size)) {
			free(r->lp);
			r->lp = NULL;
			api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
			return -1;
		}
	}
	if (r->json != JSON_NONE || r->tool_choice != TOOLS_AUTO) {
		r->gram = malloc(sizeof(*r->gram));
		if (!r->gram) {
			api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
			return -1;
		}
		if (structured_grammar(srv, r, r->gram, err, sizeof(err))) {
			api_bad(e, r->json != JSON_NONE ? "response_format" : "tool_choice", "%s: %s",
				r->json != JSON_NONE ? "response_format" : "tool_choice", err);
			return -1;
		}
	}
	return 0;
}

int gen_open(struct serve *srv, const struct gen_req *r, struct colibri_session **s,
	     struct api_error *e)
{
	struct colibri_session_opts so = { .max_context = srv->o.context };
	char err[256];
	int ret;

	ret = colibri_session_open(s, srv->m, &so, err, sizeof(err));
	if (ret == -ENOSPC || ret == -ENOMEM || ret == -EDQUOT) {
		metrics_rejected(srv->metrics, REJECT_DEVICE);
		api_error_set(e, 503, "server_error", NULL, "overloaded",
			      "The device has no room for another session now (%s): retry later", err);
		return -1;
	}
	if (ret) {
		api_error_set(e, 500, "server_error", NULL, NULL, "cannot open a session: %s", err);
		return -1;
	}
	colibri_session_set_sampling(*s, &r->sp);
	metrics_sessions(srv->metrics, 1);
	return 0;
}

void gen_close(struct serve *srv, struct colibri_session *s)
{
	if (!s)
		return;
	colibri_session_close(s);
	metrics_sessions(srv->metrics, -1);
}

/* The state of one generation, for on_token(). */
struct run {
	struct serve *srv;
	const struct gen_req *r;
	struct gen_result *res;
	struct gen_text t;
	struct logit_state ls;		/* with logit rules only */
	struct constraint con;		/* with a grammar only */
	int rules, constrained;
	int eot;
	uint32_t *trace;		/* while a page watches: the routing traces */
	int fed;			/* a token was fed after the prompt */
};

/*
 * Before each draw (colibri_generation.on_logits): the request's logit
 * rules, then its grammar: the token drawn if the grammar takes it, else
 * one drawn anew from those it allows (serve_mask.h); none: the end.
 */
static int on_logits(void *arg, float *logits, uint32_t n, uint32_t pos, int32_t *token)
{
	struct run *u = arg;
	struct colibri_sampling alt;
	int32_t t = *token;

	if (u->r->lp)
		logprobs_look(u->r->lp, logits);
	if (u->rules) {
		logit_rules_apply(&u->ls, logits);
		t = -1;
	}
	if (!u->constrained) {
		*token = t;
		return 0;
	}
	if (t < 0)
		t = colibri_sample(logits, n, &u->r->sp, pos);
	if (t < 0 || !constraint_allows(&u->con, t)) {
		if (!constraint_mask(&u->con, logits))
			return 1;
		alt = u->r->sp;
		alt.seed ^= SERVE_MASK_SEED;
		t = colibri_sample(logits, n, &alt, pos);
		if (t < 0)
			return 1;
	}
	if (constraint_take(&u->con, t))
		return 1;
	*token = t;
	return 0;
}

static int is_end(const struct serve *srv, int32_t token)
{
	int i;

	for (i = 0; i < srv->n_eot; i++)
		if (token == srv->eot[i])
			return 1;
	return 0;
}

static int on_token(void *arg, int32_t token, const struct colibri_step *st)
{
	struct run *u = arg;

	if (!u->res->t_first)
		u->res->t_first = serve_now();
	/* the first token's pass was the prompt's */
	live_token(u->srv->live, u->trace ? st->trace : NULL, u->fed++ ? 1 : u->r->n_prompt);
	if (u->rules && logit_state_add(&u->ls, (uint32_t)token))
		return 1;	/* out of memory: the answer ends here */
	if (u->r->lp && !(u->r->kind == GEN_CHAT && is_end(u->srv, token)) &&
	    logprobs_take(u->r->lp, token, u->srv->tok))
		return 1;
	/* harmony's parser sees the end too: <|call|> completes a tool call */
	if (u->r->kind == GEN_CHAT && is_end(u->srv, token)) {
		u->eot = 1;
		if (u->t.format == FORMAT_HARMONY)
			gen_text_feed(&u->t, token);
		return 1;
	}
	return gen_text_feed(&u->t, token);
}

int gen_run(struct serve *srv, struct colibri_session *s, const struct gen_req *r,
	    const struct gen_sink *sink, struct gen_result *res)
{
	struct run u = { .srv = srv, .r = r, .res = res };
	struct colibri_generation g = {
		.max_new = r->max_tokens ? r->max_tokens :
			   r->kind == GEN_CHAT ? SERVE_MAX_TOKENS : 16,
		.eos = srv->eos, .on_token = on_token, .arg = &u,
	};
	int ret;

	res->prompt_tokens = r->n_prompt;
	res->err = 0;
	res->msg[0] = 0;
	if (live_watched(srv->live) && live_trace_words(srv->live)) {
		u.trace = malloc((size_t)r->n_prompt * live_trace_words(srv->live) * sizeof(*u.trace));
		g.step.trace = u.trace;		/* none: no heat, the answer all the same */
	}
	u.rules = logit_rules_any(&r->lr);
	if (u.rules) {
		if (logit_state_init(&u.ls, &r->lr, r->sp.temperature_milli / 1000.0f,
				     srv->mi->vocab_size, r->prompt, r->n_prompt)) {
			u.rules = 0;
			res->err = -ENOMEM;
			snprintf(res->msg, sizeof(res->msg), "out of memory");
			goto out;
		}
		g.on_logits = on_logits;
	}
	if (r->lp)
		g.on_logits = on_logits;
	if (r->gram) {
		int32_t ends[CHAT_END_MAX + 1];
		int n_ends = 0, i;

		ends[n_ends++] = srv->eos;
		for (i = 0; r->kind == GEN_CHAT && i < srv->n_eot; i++)
			ends[n_ends++] = srv->eot[i];
		if (constraint_init(&u.con, r->gram, srv->vi, srv->tok, ends, n_ends)) {
			res->err = -ENOMEM;
			snprintf(res->msg, sizeof(res->msg), "out of memory");
			goto out;
		}
		u.constrained = 1;
		g.on_logits = on_logits;
	}
	/* A completion continues its prompt: keep a leading space; an answer starts afresh. */
	if (gen_text_init(&u.t, srv->tok, r->kind == GEN_CHAT ? srv->format : FORMAT_PLAIN,
			  r->kind != GEN_COMPLETION, r->tools, &r->stop, sink)) {
		res->err = -ENOMEM;
		snprintf(res->msg, sizeof(res->msg), "out of memory");
		goto out;
	}
	ret = colibri_session_generate(s, r->prompt, r->n_prompt, &g);
	res->completion_tokens = g.n_new;
	if (ret || u.t.gone) {
		res->err = u.t.gone ? -ECANCELED : ret;
		snprintf(res->msg, sizeof(res->msg), "%s",
			 res->err == -ECANCELED ? "the client went away" : colibri_session_error(s));
		goto out;
	}
	/*
	 * What the decoder and the matcher hold: not after a stop string, nor
	 * (but for a parser's, which may hold a whole tool call) after the end
	 * of the turn.
	 */
	if (!u.t.stopped && (!u.eot || u.t.format != FORMAT_PLAIN))
		gen_text_end(&u.t);
	if (u.t.gone) {
		res->err = -ECANCELED;
		snprintf(res->msg, sizeof(res->msg), "the client went away");
		goto out;
	}
	res->finish = g.stop == COLIBRI_STOP_LENGTH || g.stop == COLIBRI_STOP_CONTEXT ? "length" :
		      "stop";
	/* A stop string completed by the last, held bytes is a stop too; a tool call, tool_calls. */
	res->finish = gen_text_finish(&u.t, res->finish);
out:
	res->t_end = serve_now();
	if (!res->t_first && res->completion_tokens)
		res->t_first = res->t_end;
	gen_text_release(&u.t);
	free(u.trace);
	if (u.rules)
		logit_state_release(&u.ls);
	if (u.constrained) {
		metrics_constrained(srv->metrics, u.con.n_checked, u.con.ns_checked, u.con.n_masked,
				    u.con.ns_masked);
		constraint_release(&u.con);
	}
	return res->err;
}

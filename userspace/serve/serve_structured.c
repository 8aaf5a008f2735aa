// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_structured.c - a request's response_format as a grammar around the
 * model's answer format (serve_structured.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_call_grammar.h"
#include "serve_call_syntax.h"
#include "serve_grammar.h"
#include "serve_schema.h"
#include "serve_structured.h"
#include "tokenizer.h"

/*
 * Any bytes up to the first @end, then @end; @end's first byte must not
 * come again in it (as "</think>"): a mismatch then goes back to the
 * start, or to one byte in when it is that first byte.
 */
static uint32_t until(struct grammar *g, const char *end)
{
	size_t n = strlen(end), k;
	uint32_t body = gram_rule_new(g), after[16], next;
	uint64_t other[4];
	unsigned int b;

	if (n < 2 || n > 16)
		return GRAM_NIL;
	for (k = 1; k < n; k++)
		after[k] = gram_rule_new(g);
	/* body: [^e0] body | e0 after1 */
	memset(other, 0xff, sizeof(other));
	other[(uint8_t)end[0] >> 6] &= ~(1ull << ((uint8_t)end[0] & 63));
	gram_add_set(g, body, other);
	gram_add_rule(g, body, body);
	gram_or(g, body);
	gram_add_byte(g, body, (uint8_t)end[0]);
	gram_add_rule(g, body, after[1]);
	/* after_k: ek after_k+1 | e0 after1 | [^ek e0] body */
	for (k = 1; k < n; k++) {
		next = k + 1 < n ? after[k + 1] : GRAM_NIL;
		gram_add_byte(g, after[k], (uint8_t)end[k]);
		if (next != GRAM_NIL)
			gram_add_rule(g, after[k], next);
		gram_or(g, after[k]);
		gram_add_byte(g, after[k], (uint8_t)end[0]);
		gram_add_rule(g, after[k], after[1]);
		gram_or(g, after[k]);
		memset(other, 0xff, sizeof(other));
		for (b = 0; b < 2; b++) {
			uint8_t x = (uint8_t)(b ? end[0] : end[k]);

			other[x >> 6] &= ~(1ull << (x & 63));
		}
		gram_add_set(g, after[k], other);
		gram_add_rule(g, after[k], body);
	}
	return body;
}

/* A special token of the model's vocabulary, by its text: 0, or -1 with why in @err. */
static int special(const struct serve *srv, const char *text, uint32_t *id, char *err,
		   size_t errlen)
{
	int32_t t = cb_tok_token_id(srv->tok, text, strlen(text));

	if (t < 0) {
		snprintf(err, errlen, "the model's vocabulary has no %s token", text);
		return -1;
	}
	*id = (uint32_t)t;
	return 0;
}

static int finish(struct grammar *g, char *err, size_t errlen)
{
	if (!gram_finish(g))
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Any bytes, as many as come (a special token ends them). */
static uint32_t any_text(struct grammar *g)
{
	uint32_t any = gram_rule_new(g);
	uint64_t all[4];

	memset(all, 0xff, sizeof(all));
	gram_add_set(g, any, all);
	return gram_star(g, any);
}

/*
 * harmony: (<|channel|>analysis<|message|>...<|end|><|start|>assistant)?,
 * then unless @tools, <|channel|>final<|message|>
 */
static int harmony_head(const struct serve *srv, struct grammar *g, uint32_t root, int tools,
			char *err, size_t errlen)
{
	uint32_t channel, message, end, start, analysis, text;

	if (special(srv, "<|channel|>", &channel, err, errlen) ||
	    special(srv, "<|message|>", &message, err, errlen) ||
	    special(srv, "<|end|>", &end, err, errlen) ||
	    special(srv, "<|start|>", &start, err, errlen))
		return -1;
	text = any_text(g);
	analysis = gram_rule_new(g);
	gram_add_token(g, analysis, channel);
	gram_add_text(g, analysis, "analysis", 8);
	gram_add_token(g, analysis, message);
	gram_add_rule(g, analysis, text);
	gram_add_token(g, analysis, end);
	gram_add_token(g, analysis, start);
	gram_add_text(g, analysis, "assistant", 9);
	gram_add_rule(g, root, gram_opt(g, analysis));
	if (tools)
		return 0;
	gram_add_token(g, root, channel);
	gram_add_text(g, root, "final", 5);
	gram_add_token(g, root, message);
	return 0;
}

int structured_grammar(const struct serve *srv, const struct gen_req *r, struct grammar *g,
		       char *err, size_t errlen)
{
	uint32_t root, think, value;
	int32_t end;

	gram_init(g);
	root = gram_rule_new(g);
	if (r->tool_choice != TOOLS_AUTO && (r->kind != GEN_CHAT || srv->format == FORMAT_PLAIN)) {
		snprintf(err, errlen, "this model's answers have no tool-call format this server "
			 "knows (harmony, Hermes, Llama 3.x, Mistral, DeepSeek, GLM)");
		return -1;
	}
	if (r->kind == GEN_CHAT && srv->format == FORMAT_HARMONY) {
		if (harmony_head(srv, g, root, r->tool_choice != TOOLS_AUTO, err, errlen))
			return -1;
	} else if (r->kind == GEN_CHAT && format_tagged(srv->format) &&
		   call_syntax(format_family(srv->format))->think) {
		think = gram_rule_new(g);
		call_tag(srv->tok, g, think, "<think>");
		end = cb_tok_token_id(srv->tok, "</think>", 8);
		if (end >= 0 && cb_tok_is_special(srv->tok, end)) {
			/* any text, then the special token */
			gram_add_rule(g, think, any_text(g));
			gram_add_token(g, think, (uint32_t)end);
		} else {
			gram_add_rule(g, think, until(g, "</think>"));
		}
		/* the blank lines models write after it (the parser drops them) */
		gram_add_rule(g, think, schema_ws_rule(g));
		gram_add_rule(g, root, gram_opt(g, think));
	}
	if (r->tool_choice != TOOLS_AUTO)
		return call_grammar(srv->tok, srv->format, r, g, root, err, errlen) ? -1 :
		       finish(g, err, errlen);
	gram_add_rule(g, root, schema_ws_rule(g));
	value = schema_rule(g, r->json == JSON_SCHEMA ? r->schema : NULL, err, errlen);
	if (value == GRAM_NIL)
		return -1;
	gram_add_rule(g, root, value);
	return finish(g, err, errlen);
}

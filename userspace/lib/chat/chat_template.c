// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * chat_template.c - find a model's chat template and special tokens, and
 * render conversations through it (the interpreter is jinja/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/cbfile.h"
#include "chat/chat_template.h"
#include "import/gguf.h"
#include "jinja/jinja.h"
#include "tokenizer.h"
#include "util/util.h"

/* tokenizer_config.json may be large (added_tokens_decoder): 64 MiB is plenty. */
#define CONFIG_MAX	(64u << 20)

static const char *const special_names[] = { "bos_token", "eos_token", "unk_token", "pad_token" };

void cb_chat_release(struct cb_chat *c)
{
	free(c->tmpl);
	cJSON_Delete(c->special);
	memset(c, 0, sizeof(*c));
}

static int set_tmpl(struct cb_chat *c, const char *s, size_t n, char *err, size_t errlen)
{
	c->tmpl = malloc(n + 1);
	if (!c->tmpl) {
		cb_set_err(err, errlen, "out of memory");
		return -1;
	}
	memcpy(c->tmpl, s, n);
	c->tmpl[n] = 0;
	c->tmpl_len = n;
	return 0;
}

int cb_chat_from_tokenizer_config(struct cb_chat *c, const char *json, size_t len, int tools,
				  char *err, size_t errlen)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *t, *it, *pick = NULL;
	size_t i;
	int r = -1;

	memset(c, 0, sizeof(*c));
	c->source = "tokenizer_config.json";
	if (!cJSON_IsObject(root)) {
		cb_set_err(err, errlen, "tokenizer_config.json is not a JSON object");
		goto out;
	}
	c->special = cJSON_CreateObject();
	if (!c->special)
		goto oom;
	/* a string, an AddedToken-like {"content": ...}, or null */
	for (i = 0; i < sizeof(special_names) / sizeof(special_names[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, special_names[i]);
		cJSON *copy;

		if (cJSON_IsObject(v))
			v = cJSON_GetObjectItemCaseSensitive(v, "content");
		if (!cJSON_IsString(v) && !cJSON_IsNull(v))
			continue;
		copy = cJSON_IsString(v) ? cJSON_CreateString(v->valuestring) : cJSON_CreateNull();
		if (!copy || !cJSON_AddItemToObject(c->special, special_names[i], copy)) {
			cJSON_Delete(copy);
			goto oom;
		}
	}
	t = cJSON_GetObjectItemCaseSensitive(root, "chat_template");
	if (cJSON_IsString(t)) {
		pick = t;
	} else if (cJSON_IsArray(t)) {
		/* [{"name": "default", "template": "..."}, {"name": "tool_use", ...}] */
		cJSON_ArrayForEach(it, t) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
			const cJSON *body = cJSON_GetObjectItemCaseSensitive(it, "template");

			if (!cJSON_IsString(name) || !cJSON_IsString(body))
				continue;
			if (!strcmp(name->valuestring, tools ? "tool_use" : "default") ||
			    (!pick && !strcmp(name->valuestring, "default")))
				pick = body;
		}
		if (!pick) {
			cb_set_err(err, errlen, "chat_template is a list without a \"default\" template");
			goto out;
		}
	} else if (t && !cJSON_IsNull(t)) {
		cb_set_err(err, errlen, "chat_template is neither a string nor a list");
		goto out;
	}
	if (pick && set_tmpl(c, pick->valuestring, strlen(pick->valuestring), err, errlen))
		goto out;
	r = 0;
	goto out;
oom:
	cb_set_err(err, errlen, "out of memory");
out:
	cJSON_Delete(root);
	if (r)
		cb_chat_release(c);
	return r;
}

/* The text of token @id, for bos_token & co. */
static int add_token(cJSON *special, const char *name, const struct cb_tokenizer *tok,
		     int32_t id)
{
	char buf[256];
	long n;

	if (id < 0 || !tok)
		return 0;
	n = cb_tok_decode(tok, &id, 1, 0, buf, sizeof(buf) - 1);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return 0;
	buf[n] = 0;
	return cJSON_AddStringToObject(special, name, buf) ? 0 : -1;
}

int cb_chat_add_special_ids(struct cb_chat *c, const struct cb_tokenizer *tok, int32_t bos,
			    int32_t eos, int32_t pad)
{
	if (!c->special)
		c->special = cJSON_CreateObject();
	if (!c->special)
		return -1;
	if (add_token(c->special, "bos_token", tok, bos) ||
	    add_token(c->special, "eos_token", tok, eos) ||
	    add_token(c->special, "pad_token", tok, pad))
		return -1;
	return 0;
}

static int from_colibri(struct cb_chat *c, const char *path, char *err, size_t errlen)
{
	struct cbfile *f = cbfile_open(path, 0, err, errlen);
	struct cb_tokenizer *tok = NULL;
	const char *t;
	size_t n;
	char terr[256];
	int r = -1;

	if (!f)
		return -1;
	c->source = ".colibri file";
	t = cbfile_chat_template(f, &n);
	if (t && set_tmpl(c, t, n, err, errlen))
		goto out;
	if (cbfile_tokenizer(f, &n))
		tok = cbfile_load_tokenizer(f, terr, sizeof(terr));
	if (cb_chat_add_special_ids(c, tok, f->info.bos_id, f->info.eos_id, f->info.pad_id)) {
		cb_set_err(err, errlen, "out of memory");
		goto out;
	}
	r = 0;
out:
	cb_tok_free(tok);
	cbfile_close(f);
	return r;
}

static int from_gguf(struct cb_chat *c, const char *path, int tools, char *err, size_t errlen)
{
	struct gguf_file *g = gguf_open(path, err, errlen);
	char *cfg;
	size_t n;
	int r;

	if (!g)
		return -1;
	/* the metadata as a tokenizer_config.json, chat_template included */
	cfg = gguf_tokenizer_config_json(g, &n, err, errlen);
	gguf_close(g);
	if (!cfg)
		return -1;
	r = cb_chat_from_tokenizer_config(c, cfg, n, tools, err, errlen);
	free(cfg);
	c->source = "GGUF metadata";
	return r;
}

/*
 * chat_template.jinja beside tokenizer_config.json (newer transformers save
 * the template there, GPT-OSS ships it so): like transformers, it replaces
 * the config's chat_template.
 */
static int template_file(struct cb_chat *c, const char *dir, char *err, size_t errlen)
{
	char path[4096];
	struct stat sb;
	char *t;
	size_t n;

	snprintf(path, sizeof(path), "%s/chat_template.jinja", dir);
	if (stat(path, &sb))
		return 0;
	t = cb_read_file(path, CONFIG_MAX, &n);
	if (!t || memchr(t, 0, n)) {
		cb_set_err(err, errlen, "%s: %s", path, t ? "contains a NUL byte" :
			   "cannot be read (or larger than 64 MiB)");
		free(t);
		cb_chat_release(c);
		return -1;
	}
	free(c->tmpl);
	c->tmpl = t;
	c->tmpl_len = n;
	c->source = "chat_template.jinja";
	return 0;
}

int cb_chat_from_model(struct cb_chat *c, const char *path, int tools, char *err,
		       size_t errlen)
{
	char cfgpath[4096];
	struct stat sb;
	char *json;
	size_t n;
	int r;

	memset(c, 0, sizeof(*c));
	if (stat(path, &sb)) {
		cb_set_err(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (cbfile_is_colibri(path) == 1)
			return from_colibri(c, path, err, errlen);
		if (gguf_is_gguf(path) == 1)
			return from_gguf(c, path, tools, err, errlen);
		cb_set_err(err, errlen, "%s: not a model directory, .colibri or GGUF file", path);
		return -1;
	}
	snprintf(cfgpath, sizeof(cfgpath), "%s/tokenizer_config.json", path);
	if (stat(cfgpath, &sb)) {
		c->source = "fallback";	/* no config: no special tokens */
	} else {
		json = cb_read_file(cfgpath, CONFIG_MAX, &n);
		if (!json) {
			cb_set_err(err, errlen, "%s: cannot be read (or larger than %u MiB)",
				   cfgpath, CONFIG_MAX >> 20);
			return -1;
		}
		r = cb_chat_from_tokenizer_config(c, json, n, tools, err, errlen);
		free(json);
		if (r)
			return r;
	}
	return template_file(c, path, err, errlen);
}

static int add_copy(cJSON *vars, const char *name, const cJSON *v)
{
	cJSON *d = v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();

	if (!d || !cJSON_AddItemToObject(vars, name, d)) {
		cJSON_Delete(d);
		return -1;
	}
	return 0;
}

int cb_chat_render(const struct cb_chat *c, const cJSON *messages, const cJSON *tools,
		   int add_generation_prompt, const cJSON *extra, char **out, size_t *len,
		   char *err, size_t errlen)
{
	static const char fallback[] = CB_CHAT_FALLBACK_TEMPLATE;
	const char *src = c->tmpl ? c->tmpl : fallback;
	size_t srclen = c->tmpl ? c->tmpl_len : sizeof(fallback) - 1;
	cJSON *vars = cJSON_CreateObject();
	const cJSON *it;
	struct cb_jinja *t = NULL;
	char perr[400];
	int r = -1;

	*out = NULL;
	if (!cJSON_IsArray(messages)) {
		cb_set_err(err, errlen, "messages must be a JSON array");
		goto out;
	}
	if (tools && !cJSON_IsArray(tools)) {
		cb_set_err(err, errlen, "tools must be a JSON array");
		goto out;
	}
	if (extra && !cJSON_IsObject(extra)) {
		cb_set_err(err, errlen, "extra variables must be a JSON object");
		goto out;
	}
	if (!vars || add_copy(vars, "messages", messages) || add_copy(vars, "tools", tools) ||
	    !cJSON_AddBoolToObject(vars, "add_generation_prompt", add_generation_prompt))
		goto oom;
	cJSON_ArrayForEach(it, c->special)
		if (add_copy(vars, it->string, it))
			goto oom;
	cJSON_ArrayForEach(it, extra) {
		cJSON_DeleteItemFromObjectCaseSensitive(vars, it->string);
		if (add_copy(vars, it->string, it))
			goto oom;
	}
	t = cb_jinja_parse(src, srclen, perr, sizeof(perr));
	if (!t) {
		cb_set_err(err, errlen, "chat template (%s): %s", c->tmpl ? c->source : "fallback",
			   perr);
		goto out;
	}
	if (cb_jinja_render(t, vars, out, len, perr, sizeof(perr))) {
		cb_set_err(err, errlen, "chat template (%s): %s", c->tmpl ? c->source : "fallback",
			   perr);
		goto out;
	}
	r = 0;
	goto out;
oom:
	cb_set_err(err, errlen, "out of memory");
out:
	cb_jinja_free(t);
	cJSON_Delete(vars);
	return r;
}

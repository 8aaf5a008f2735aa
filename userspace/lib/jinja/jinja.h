/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * jinja.h - a Jinja interpreter for chat templates (userspace).
 *
 * It implements what the chat templates of real models use, with the
 * semantics of @huggingface/jinja (the JavaScript interpreter transformers.js
 * renders chat templates with, and the one the tests compare against byte
 * for byte): {% if/elif/else %}, {% for %} with loop.*, else, an inline
 * filter and break/continue, {% set %} (also of namespace attributes,
 * tuples and blocks), namespace(), {% macro %}, {% filter %}, comments and
 * whitespace control ({%- -%}, lstrip_blocks and trim_blocks as
 * transformers sets them), expressions with the usual operators, slicing,
 * the built-in filters, tests, string and dict methods, range(),
 * raise_exception() and strftime_now().  docs/chat-template.md lists them
 * and where they differ from Python's Jinja2.
 *
 * Anything else is refused with its name and position (line:column in the
 * template) rather than rendered some other way.  Templates are untrusted
 * input (they come from model files): parsing and rendering are bounded in
 * nesting depth, memory and loop length.
 */
#ifndef COLIBRI_JINJA_H
#define COLIBRI_JINJA_H

#include <stddef.h>

#include <cJSON.h>

struct cb_jinja;

/**
 * cb_jinja_parse() - compile a template.
 * @src: the template text (UTF-8, need not be NUL-terminated); @len its length
 * @err: one line on failure, e.g. "2:17: 'include' is not supported"
 *
 * Return: the template, or NULL with @err filled in.
 */
struct cb_jinja *cb_jinja_parse(const char *src, size_t len, char *err, size_t errlen);

void cb_jinja_free(struct cb_jinja *t);

/**
 * cb_jinja_render() - render a template.
 * @t:    the template
 * @vars: a JSON object whose members become the template's variables (as
 *        JSON.parse would make them: numbers with an integral value are
 *        integers), or NULL
 * @out:  set to the malloc'ed, NUL-terminated text (free() it)
 * @outlen: its length (may be NULL)
 * @err:  one line on failure, with the line:column of the construct that
 *        failed; raise_exception(msg) gives "...: raise_exception: msg"
 *
 * Return: 0, or -1 with @err filled in and *@out NULL.
 */
int cb_jinja_render(const struct cb_jinja *t, const cJSON *vars, char **out, size_t *outlen,
		    char *err, size_t errlen);

#endif /* COLIBRI_JINJA_H */

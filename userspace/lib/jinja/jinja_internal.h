/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * jinja_internal.h - what the interpreter's files share (not libcolibri
 * API; that is ../jinja.h).
 *
 *   jinja_arena.c    memory (arenas) and errors
 *   jinja_lex.c      preprocessing (lstrip/trim blocks, generation tags)
 *                    and the tokenizer
 *   jinja_parser.c   the parser's token helpers (jinja_parser.h)
 *   jinja_expr.c     tokens -> syntax tree: expressions
 *   jinja_parse.c    ... statements, on the expressions
 *   jinja_eval.c     statements and expressions
 *   jinja_value.c    values: containers, conversion from JSON, to text and
 *                    to JSON, truthiness, equality, comparison
 *   jinja_text.c     UTF-8, UTF-16 lengths, case mapping, whitespace, trim
 *   jinja_filters.c  filters and tests
 *   jinja_methods.c  string and dict methods, global functions
 *
 * Every function that can fail returns 0 or -1; on -1 the error is already
 * in the context (jj_fail()), one line with the line:column of the
 * construct.  Memory comes from arenas freed as a whole: the template's
 * (tokens, tree) and one per render (values), each with a limit.
 */
#ifndef COLIBRI_JINJA_INTERNAL_H
#define COLIBRI_JINJA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinja/jinja.h"
#include "util/util.h"

/* Limits on untrusted templates (generous for real chat templates). */
#define JJ_MAX_NEST		200		/* syntax nesting, evaluation depth */
#define JJ_MAX_CALLS		100		/* macro calls in progress */
#define JJ_MAX_MEM		(256u << 20)	/* per arena */
#define JJ_MAX_OUT		(64u << 20)	/* rendered text */
#define JJ_MAX_ITEMS		(1u << 22)	/* range(), list lengths */

/* ---- memory and errors ---------------------------------------------- */

struct jj_block;

struct jj_arena {
	struct jj_block *head;
	size_t used, limit;
};

/* One parse or one render. */
struct jj_ctx {
	struct jj_arena ar;
	const char *src;	/* original template text, for line:column */
	size_t srclen;
	char *err;
	size_t errlen;
	int failed;
	int depth;		/* evaluation nesting */
	int calls;		/* macro calls in progress */
	int in_loop;		/* for-loop bodies being evaluated */
};

void *jj_alloc(struct jj_ctx *c, size_t n);	/* zeroed; NULL after jj_fail */
void jj_arena_free(struct jj_arena *a);
char *jj_strdup(struct jj_ctx *c, const char *s, size_t n);	/* NUL-terminated copy */
/* Record the first error: "L:C: message" (pos is an offset in src). */
int jj_fail(struct jj_ctx *c, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- tokens ------------------------------------------------------------ */

enum jj_tok_kind {
	JT_TEXT, JT_NUM, JT_STR, JT_IDENT, JT_EQUALS, JT_LPAREN, JT_RPAREN,
	JT_OPEN_STMT, JT_CLOSE_STMT, JT_OPEN_EXPR, JT_CLOSE_EXPR, JT_LBRACKET,
	JT_RBRACKET, JT_LBRACE, JT_RBRACE, JT_COMMA, JT_DOT, JT_COLON, JT_PIPE,
	JT_ADD, JT_MUL, JT_POW, JT_CMP, JT_UNARY, JT_COMMENT,
};

struct jj_tok {
	enum jj_tok_kind k;
	const char *s;		/* text (decoded for strings) */
	size_t n;
	uint32_t pos;		/* offset in the original template */
};

/* Preprocess and tokenize @c->src. */
int jj_lex(struct jj_ctx *c, struct jj_tok **toks, size_t *ntoks);

/* ---- syntax tree --------------------------------------------------------- */

enum jj_node_kind {
	/* statements */
	JN_TEXT, JN_IF, JN_FOR, JN_SET, JN_MACRO, JN_BREAK, JN_CONTINUE,
	JN_FILTER_BLOCK, JN_COMMENT, JN_OUTPUT,
	/* expressions */
	JN_STR, JN_INT, JN_FLOAT, JN_ARRAY, JN_TUPLE, JN_OBJECT, JN_IDENT,
	JN_MEMBER, JN_CALL, JN_UNARY, JN_BINARY, JN_FILTER, JN_TEST, JN_SELECT,
	JN_TERNARY, JN_SLICE, JN_KWARG,
};

enum jj_op {
	JO_NONE, JO_OR, JO_AND, JO_NOT, JO_IN, JO_NOT_IN, JO_EQ, JO_NE, JO_LT, JO_GT,
	JO_LE, JO_GE, JO_ADD, JO_SUB, JO_CONCAT, JO_MUL, JO_DIV, JO_FLOORDIV, JO_MOD,
	JO_POW, JO_NEG, JO_POS,
};

/*
 * One node.  Which fields mean what:
 *   TEXT/STR: s,n          INT/FLOAT: num      IDENT: s,n (name)
 *   ARRAY/TUPLE: list      OBJECT: list (keys), list2 (values)
 *   MEMBER: a (object), b (property), flag (computed: a[b])
 *   CALL: a (callee), list (arguments; KWARG nodes last)
 *   UNARY: op, a           BINARY: op, a, b
 *   FILTER: a (operand), s,n (filter name), list (arguments), flag (called)
 *   TEST: a, s,n (test name), flag (negated)
 *   SELECT: a (value), b (condition)     TERNARY: c (condition), a, b
 *   SLICE: a, b, c (start, stop, step; NULL when absent)
 *   KWARG: s,n (name), a (value)
 *   OUTPUT: a ({{ a }})
 *   IF: c (test), list (body), list2 (else part)
 *   FOR: a (target: IDENT or TUPLE), b (iterable), c (inline condition or
 *        NULL), list (body), list2 (else)
 *   SET: a (target), b (value, or NULL: list is the block)
 *   MACRO: s,n (name), list2 (parameters: IDENT or KWARG), list (body),
 *          flag (the body reads varargs), num (1: reads kwargs)
 *   FILTER_BLOCK: a (a FILTER node without operand), list (body)
 */
struct jj_node {
	enum jj_node_kind k;
	enum jj_op op;
	uint32_t pos;
	bool flag;
	const char *s;
	size_t n;
	double num;
	struct jj_node *a, *b, *c;
	struct jj_node **list, **list2;
	size_t nlist, nlist2;
};

/* Parse tokens into a statement list. */
int jj_parse(struct jj_ctx *c, const struct jj_tok *toks, size_t ntoks,
	     struct jj_node ***body, size_t *nbody);

/* ---- values ---------------------------------------------------------------- */

enum jj_kind {
	JV_UNDEF, JV_NULL, JV_BOOL, JV_INT, JV_FLOAT, JV_STR, JV_ARRAY, JV_TUPLE,
	JV_OBJECT, JV_KWARGS, JV_NS, JV_FUNC,
};

struct jj_list {
	struct jj_val *v;
	size_t n, cap;
};

/*
 * An insertion-ordered map from strings (objects, kwargs, namespaces,
 * scopes).  Past a few entries it gets a hash index (slot[] holds entry
 * index + 1, 0 = empty), so that large JSON objects from a request cannot
 * make lookups quadratic.
 */
struct jj_map {
	const char **key;
	size_t *klen;
	struct jj_val *val;
	size_t n, cap;
	uint32_t *slot;
	size_t smask;
};

struct jj_func;

/*
 * A value.  Numbers are doubles as in JavaScript (INT marks the integer
 * kind, whose value is integral).  Strings are (s, n), not necessarily
 * NUL-terminated, pointing at immutable memory (the template or the render
 * arena).  Arrays, objects and namespaces are shared by reference, as in
 * the reference implementation.
 */
struct jj_val {
	enum jj_kind k;
	bool b;
	double num;
	const char *s;
	size_t n;
	union {
		struct jj_list *a;
		struct jj_map *o;
		const struct jj_func *f;
	};
};

struct jj_env {
	struct jj_env *parent;
	struct jj_map vars;
};

/* Functions: built-ins (with the value a method is bound to) and macros. */
enum jj_builtin {
	JB_NONE, JB_NAMESPACE, JB_RAISE, JB_RANGE, JB_STRFTIME, JB_MACRO,
	/* string methods */
	JB_UPPER, JB_LOWER, JB_STRIP, JB_TITLE, JB_CAPITALIZE, JB_RSTRIP, JB_LSTRIP,
	JB_STARTSWITH, JB_ENDSWITH, JB_SPLIT, JB_REPLACE,
	/* dict methods */
	JB_GET, JB_ITEMS, JB_KEYS, JB_VALUES, JB_DICTSORT,
};

struct jj_func {
	enum jj_builtin id;
	struct jj_val self;		/* bound value of a method */
	const struct jj_node *macro;
	const char *name;
};

/* Evaluated call arguments: positional, then keywords (name -> value). */
struct jj_args {
	struct jj_val *pos;
	size_t npos;
	struct jj_map kw;
	uint32_t at;			/* position of the call, for errors */
};

static inline struct jj_val jj_undef(void)
{
	return (struct jj_val){ .k = JV_UNDEF };
}

static inline struct jj_val jj_null(void)
{
	return (struct jj_val){ .k = JV_NULL };
}

static inline struct jj_val jj_bool(bool b)
{
	return (struct jj_val){ .k = JV_BOOL, .b = b };
}

static inline struct jj_val jj_int(double x)
{
	return (struct jj_val){ .k = JV_INT, .num = x };
}

static inline struct jj_val jj_float(double x)
{
	return (struct jj_val){ .k = JV_FLOAT, .num = x };
}

static inline struct jj_val jj_str(const char *s, size_t n)
{
	return (struct jj_val){ .k = JV_STR, .s = s, .n = n };
}

static inline bool jj_is_num(const struct jj_val *v)
{
	return v->k == JV_INT || v->k == JV_FLOAT;
}

static inline bool jj_is_list(const struct jj_val *v)
{
	return v->k == JV_ARRAY || v->k == JV_TUPLE;
}

static inline bool jj_is_obj(const struct jj_val *v)
{
	return v->k == JV_OBJECT || v->k == JV_KWARGS;
}

const char *jj_kind_name(enum jj_kind k);

/* Containers (allocated in the context's arena). */
struct jj_val jj_new_list(struct jj_ctx *c, enum jj_kind k, size_t cap);
struct jj_val jj_new_map(struct jj_ctx *c, enum jj_kind k);
int jj_list_push(struct jj_ctx *c, struct jj_list *l, struct jj_val v);
struct jj_val *jj_map_get(const struct jj_map *m, const char *k, size_t n);
int jj_map_set(struct jj_ctx *c, struct jj_map *m, const char *k, size_t n, struct jj_val v);
struct jj_val jj_func_val(struct jj_ctx *c, enum jj_builtin id, struct jj_val self,
			  const struct jj_node *macro, const char *name);

/* A JSON value as the reference's JSON.parse + conversion would make it. */
int jj_from_json(struct jj_ctx *c, const cJSON *j, struct jj_val *out);

/* JavaScript's String(number), and the reference's float rendering. */
size_t jj_fmt_num(char *buf, size_t len, double x);
size_t jj_fmt_float(char *buf, size_t len, double x);

/*
 * Append the text of @v as {{ v }} renders it (strings as they are, floats
 * with ".0", true/false, lists and dicts as JSON); UNDEF and NULL append
 * nothing.
 */
int jj_append_text(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
		   uint32_t pos);
/* The same as a string value. */
int jj_to_text(struct jj_ctx *c, const struct jj_val *v, uint32_t pos, struct jj_val *out);
/* JavaScript's value.toString() of the raw value, for + and ~ with strings. */
int jj_append_raw(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
		  uint32_t pos);

struct jj_json_opts {
	int indent;			/* 0: none */
	bool ensure_ascii;
	const char *item_sep, *key_sep;	/* NULL: the defaults */
	size_t item_sep_n, key_sep_n;
	bool undef_null;		/* undefined as null (tojson) or undefined (text) */
};

int jj_to_json(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
	       const struct jj_json_opts *o, int depth, uint32_t pos);

bool jj_truthy(const struct jj_val *v);
/* ==, as JavaScript's == on the raw values; -1 when it cannot say. */
int jj_loose_eq(struct jj_ctx *c, const struct jj_val *a, const struct jj_val *b,
		uint32_t pos);
/* ===, for `in` and unique. */
bool jj_strict_eq(const struct jj_val *a, const struct jj_val *b);
/* The reference's compareRuntimeValues(); -2 on a type error. */
int jj_compare(struct jj_ctx *c, const struct jj_val *a, const struct jj_val *b,
	       bool case_sensitive, uint32_t pos);

/* A copy of @s into the arena as a string value. */
struct jj_val jj_str_copy(struct jj_ctx *c, const char *s, size_t n);
/* Take the text of a cb_sbuf into the arena (frees the buffer). */
int jj_str_take(struct jj_ctx *c, struct cb_sbuf *b, struct jj_val *out);

/* Number of UTF-16 code units of a UTF-8 string (JavaScript's length). */
size_t jj_u16_len(const char *s, size_t n);
/* Decode one UTF-8 character (the template and data are valid UTF-8). */
size_t jj_u8_get(const char *s, size_t n, uint32_t *cp);
size_t jj_u8_put(char *o, uint32_t cp);
/* Case mapping as JavaScript's toUpperCase/toLowerCase; -1 when unsupported. */
int jj_case_map(struct jj_ctx *c, const char *s, size_t n, bool upper, uint32_t pos,
		struct jj_val *out);

/* ---- evaluation ------------------------------------------------------------ */

/* Status of a statement: 0, or a loop control unwinding to its loop. */
enum { JJ_OK = 0, JJ_ERR = -1, JJ_BREAK = 1, JJ_CONTINUE = 2 };

int jj_eval(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e, struct jj_val *out);
int jj_exec_block(struct jj_ctx *c, struct jj_node *const *body, size_t n, struct jj_env *e,
		  struct cb_sbuf *out);
int jj_eval_args(struct jj_ctx *c, struct jj_node *const *list, size_t n, struct jj_env *e,
		 struct jj_args *args);
struct jj_val jj_lookup(struct jj_env *e, const char *name, size_t n);
int jj_call(struct jj_ctx *c, const struct jj_val *fn, struct jj_args *args, struct jj_env *e,
	    struct jj_val *out);

/*
 * Filters (FILTER nodes, with @operand and the arguments @args evaluated;
 * @args NULL for a filter without parentheses) and tests.
 */
int jj_apply_filter(struct jj_ctx *c, const struct jj_node *f, struct jj_val *operand,
		    const struct jj_args *args, struct jj_val *out);
/* 1/0, or -1 (unknown test, bad operand). */
int jj_test(struct jj_ctx *c, const char *name, size_t n, const struct jj_val *v,
	    const struct jj_val *arg, uint32_t pos);

/* Members: attributes, items, methods (jinja_methods.c). */
int jj_member(struct jj_ctx *c, const struct jj_val *obj, const struct jj_val *prop,
	      uint32_t pos, struct jj_val *out);
int jj_call_builtin(struct jj_ctx *c, const struct jj_func *f, struct jj_args *args,
		    struct jj_val *out);
/* The variables every render starts with (namespace, range, true, ...). */
int jj_globals(struct jj_ctx *c, struct jj_env *e);
/* obj.items() */
struct jj_val jj_items(struct jj_ctx *c, const struct jj_map *m);
/* JavaScript's \s at @s[0..n): its length in bytes, 0 if not whitespace. */
size_t jj_ws_len(const char *s, size_t n);
/* JavaScript's trim/trimStart/trimEnd. */
void jj_trim(const char **s, size_t *n, bool left, bool right);

#endif /* COLIBRI_JINJA_INTERNAL_H */

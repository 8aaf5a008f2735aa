/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_schema.h - a JSON Schema compiled to a grammar (serve_grammar.h)
 * whose every sentence is JSON that validates against it: what
 * response_format json_schema (and json_object: any object) constrains a
 * generation to.
 *
 * The schema keywords it knows (docs/serve.md): type (one or a list),
 * properties, required, additionalProperties, items, minItems, maxItems,
 * minLength, maxLength, minimum, maximum, exclusiveMinimum and
 * exclusiveMaximum (whole bounds, for numbers; serve_range.h), enum,
 * const, anyOf, oneOf, allOf of one schema, nullable, $ref to "#" or into $defs/definitions, and the annotations
 * (title, description, default, examples, $schema, $id, $comment), which
 * it leaves alone.  Anything else (pattern, format, multipleOf, ...) is
 * refused by name: a grammar that ignored it would let through JSON that
 * does not validate.
 *
 * The JSON it allows is the plain kind models write: properties in the
 * schema's order (optional ones may be left out), whitespace between
 * tokens only and at most a space or a new line and an indent of up to 24
 * spaces or tabs, numbers of at most 16 digits before and after the point.
 */
#ifndef COLIBRI_SERVE_SCHEMA_H
#define COLIBRI_SERVE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

struct grammar;

/*
 * A rule of @g for the JSON values valid against @schema (NULL: any JSON
 * object), or GRAM_NIL with why in @err.
 */
uint32_t schema_rule(struct grammar *g, const cJSON *schema, char *err, size_t errlen);

/* A rule of @g for JSON whitespace as schema_rule()'s values allow it. */
uint32_t schema_ws_rule(struct grammar *g);

#endif /* COLIBRI_SERVE_SCHEMA_H */

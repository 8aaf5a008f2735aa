// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * render_cases.c - the Jinja interpreter on a batch of small templates, for
 * check.mjs: each stdin line is {"template": "...", "vars": {...}}; each
 * output line is {"ok": true, "out": "..."} or {"ok": false, "err": "..."}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "jinja/jinja.h"

int main(void)
{
	static char line[1 << 20];

	while (fgets(line, sizeof(line), stdin)) {
		cJSON *in = cJSON_Parse(line), *res = cJSON_CreateObject();
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(in, "template");
		const cJSON *vars = cJSON_GetObjectItemCaseSensitive(in, "vars");
		struct cb_jinja *j = NULL;
		char err[512], *out = NULL, *text;
		size_t n;

		if (!cJSON_IsString(t)) {
			fprintf(stderr, "render_cases: bad input line\n");
			return 2;
		}
		j = cb_jinja_parse(t->valuestring, strlen(t->valuestring), err, sizeof(err));
		if (j && !cb_jinja_render(j, vars, &out, &n, err, sizeof(err))) {
			cJSON_AddTrueToObject(res, "ok");
			cJSON_AddStringToObject(res, "out", out);
		} else {
			cJSON_AddFalseToObject(res, "ok");
			cJSON_AddStringToObject(res, "err", err);
		}
		text = cJSON_PrintUnformatted(res);
		puts(text);
		free(text);
		free(out);
		cb_jinja_free(j);
		cJSON_Delete(res);
		cJSON_Delete(in);
	}
	return 0;
}

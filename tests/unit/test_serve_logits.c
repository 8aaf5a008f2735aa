// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_logits - a request's logit rules (serve_logits.h) on small
 * vocabularies, each value worked out by hand: the bias, the repetition
 * penalty over its window (divided when positive, multiplied when not,
 * once per token however often it came), presence and frequency over the
 * tokens drawn only, min_p at the request's temperature, and all neutral
 * changing nothing.
 */
#include <math.h>
#include <string.h>

#include "cb_test.h"
#include "serve.h"
#include "serve_logits.h"

#define V 6

static void run(const struct logit_rules *lr, float temp, const uint32_t *prompt, size_t np,
		const uint32_t *drawn, size_t nd, float *l)
{
	struct logit_state ls;
	size_t i;

	CB_CHECK(!logit_state_init(&ls, lr, temp, V, prompt, np), "init");
	for (i = 0; i < nd; i++)
		CB_CHECK(!logit_state_add(&ls, drawn[i]), "add");
	logit_rules_apply(&ls, l);
	logit_state_release(&ls);
}

static int same(const float *a, const float *b)
{
	int i;

	for (i = 0; i < V; i++)
		if (!(a[i] == b[i] || (isinf(a[i]) && isinf(b[i]) && (a[i] < 0) == (b[i] < 0))))
			return 0;
	return 1;
}

static void test_rules(void)
{
	static const uint32_t prompt[] = { 1, 1, 2 }, drawn[] = { 3, 3, 4 };
	struct logit_rules lr;
	float l[V], want[V];

	/* neutral: nothing changes */
	memset(&lr, 0, sizeof(lr));
	lr.repetition = 1;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	memcpy(want, l, sizeof(l));
	run(&lr, 1, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, want), "neutral rules changed a logit");

	/* the bias, two tokens */
	memset(&lr, 0, sizeof(lr));
	lr.n_bias = 2;
	lr.bias[0].token = 0;
	lr.bias[0].value = 10;
	lr.bias[1].token = 5;
	lr.bias[1].value = -100;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 1, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ 11, -2, 3, 4, -5, -94 }), "bias: %g %g", l[0], l[5]);

	/* repetition 2 over everything: tokens 1, 2 (prompt), 3, 4 (drawn), once each */
	memset(&lr, 0, sizeof(lr));
	lr.repetition = 2;
	lr.repeat_last_n = -1;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 1, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ 1, -4, 1.5f, 2, -10, 6 }), "repetition: %g %g %g %g %g",
		 l[1], l[2], l[3], l[4], l[5]);

	/* a window of the last 2 positions: 3 and 4 only */
	lr.repeat_last_n = 2;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 1, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ 1, -2, 3, 2, -10, 6 }), "window: %g %g %g", l[2], l[3], l[4]);

	/* presence 0.5 and frequency 1 over what was drawn: 3 twice, 4 once */
	memset(&lr, 0, sizeof(lr));
	lr.presence = 0.5f;
	lr.frequency = 1;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 1, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ 1, -2, 3, 1.5f, -6.5f, 6 }), "presence/frequency: %g %g",
		 l[3], l[4]);

	/* min_p 0.1 at temperature 2: kept while l >= 6 + 2 ln 0.1 = 1.3948 */
	memset(&lr, 0, sizeof(lr));
	lr.min_p = 0.1f;
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 2, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ -INFINITY, -INFINITY, 3, 4, -INFINITY, 6 }),
		 "min_p: %g %g %g", l[0], l[2], l[3]);
	/* greedy: min_p leaves the logits alone (the likeliest wins anyway) */
	memcpy(l, (float[V]){ 1, -2, 3, 4, -5, 6 }, sizeof(l));
	run(&lr, 0, prompt, 3, drawn, 3, l);
	CB_CHECK(same(l, (float[V]){ 1, -2, 3, 4, -5, 6 }), "min_p at temperature 0");
}

/* The history grows past its first allocation. */
static void test_long_history(void)
{
	struct logit_rules lr;
	struct logit_state ls;
	uint32_t i;
	float l[V] = { 1, 1, 1, 1, 1, 1 };

	memset(&lr, 0, sizeof(lr));
	lr.frequency = 0.001f;
	CB_CHECK(!logit_state_init(&ls, &lr, 1, V, NULL, 0), "init");
	for (i = 0; i < 5000; i++)
		CB_CHECK(!logit_state_add(&ls, i % 2), "add %u", i);
	logit_rules_apply(&ls, l);
	CB_CHECK(fabsf(l[0] - (1 - 2.5f)) < 1e-4f && fabsf(l[1] - (1 - 2.5f)) < 1e-4f && l[2] == 1,
		 "5000 draws: %g %g %g", l[0], l[1], l[2]);
	logit_state_release(&ls);
}

int main(void)
{
	CB_RUN(test_rules);
	CB_RUN(test_long_history);
	return cb_test_done();
}

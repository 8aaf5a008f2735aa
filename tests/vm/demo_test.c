// SPDX-License-Identifier: GPL-2.0-only
/*
 * demo_test - the shipped model through the kernel: its greedy continuation
 * of "ROMEO:" is the one tests/demo/expected.txt records (which the native
 * tests check for the in-process engine).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "colibri.h"
#include "libcolibri.h"

#define MAXTOK 256

/* Reads "prompt: ID ID ..." and "greedy: ID ID ..." from expected.txt. */
static int read_expected(const char *path, uint32_t *prompt, int *np, uint32_t *greedy, int *ng)
{
	char line[8192];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	*np = *ng = 0;
	while (fgets(line, sizeof(line), f)) {
		uint32_t *dst = NULL;
		int *n = NULL;
		char *p, *tok;

		if (!strncmp(line, "prompt:", 7))
			dst = prompt, n = np;
		else if (!strncmp(line, "greedy:", 7))
			dst = greedy, n = ng;
		else
			continue;
		p = line + 7;
		while ((tok = strtok(p, " \n")) && *n < MAXTOK) {
			dst[(*n)++] = strtoul(tok, NULL, 10);
			p = NULL;
		}
	}
	fclose(f);
	return *np && *ng ? 0 : -EINVAL;
}

TEST(shipped_model_greedy_continuation_matches_record)
{
	uint32_t prompt[MAXTOK], want[MAXTOK], got[MAXTOK];
	int np, ng, fd, s, i;
	struct colibri_submit sub;

	ASSERT_EQ(0, read_expected("tests/demo/expected.txt", prompt, &np, want, &ng));
	fd = colibri_dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, colibri_dev_load(fd, "models/shakespeare-moe.colibri", "demo", NULL, NULL));
	s = colibri_dev_open();
	ASSERT_EQ(0, colibri_dev_attach(s, "demo", 0, 0, NULL));
	for (i = 0; i < ng; i++) {
		memset(&sub, 0, sizeof(sub));
		sub.tokens = (uintptr_t)(i ? &got[i - 1] : prompt);
		sub.n_tokens = i ? 1 : np;
		ASSERT_EQ(0, colibri_dev_submit(s, &sub)) TH_LOG("step %d", i);
		got[i] = sub.token;
	}
	EXPECT_EQ(0, memcmp(want, got, ng * sizeof(*got)));
	for (i = 0; i < ng; i++)
		if (want[i] != got[i]) {
			TH_LOG("first difference at %d: want %u, got %u", i, want[i], got[i]);
			break;
		}
	close(s);
	EXPECT_EQ(0, colibri_dev_unload(fd, "demo", 0));
	close(fd);
}

TEST_HARNESS_MAIN

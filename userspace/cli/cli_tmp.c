// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cli_tmp.c - remove a command's temporary files when a signal ends it.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli_tmp.h"

static char tmp_paths[CLI_TMP_MAX][PATH_MAX];
/* read by the handler: the C standard's type for that (hence volatile) */
static volatile sig_atomic_t tmp_n;

static void on_signal(int sig)
{
	int i;

	/* unlink() and rmdir() are async-signal-safe; one of them fails */
	for (i = 0; i < tmp_n; i++) {
		unlink(tmp_paths[i]);
		rmdir(tmp_paths[i]);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_tmp_guard(const char *const *paths, int n)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static int installed;
	int i;

	tmp_n = 0;
	for (i = 0; i < n && i < CLI_TMP_MAX; i++)
		snprintf(tmp_paths[i], sizeof(tmp_paths[i]), "%s", paths[i]);
	tmp_n = i;
	if (n && !installed) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		installed = 1;
	}
}

/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cli_tmp.h - temporary files of a subcommand, removed if a signal
 * (SIGINT, SIGTERM, SIGHUP) ends the process before the command does.
 */
#ifndef COLIBRI_CLI_TMP_H
#define COLIBRI_CLI_TMP_H

#define CLI_TMP_MAX 3

/*
 * cli_tmp_guard() - until the next call, a signal above first removes each
 * of @paths (files, or empty directories: in the order given), then ends
 * the process as the signal would have.  @n is at most CLI_TMP_MAX; n == 0
 * drops the guard (the handlers stay, with nothing to remove).
 */
void cli_tmp_guard(const char *const *paths, int n);

#endif /* COLIBRI_CLI_TMP_H */

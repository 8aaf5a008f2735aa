/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cli.h - subcommands of the colibri tool.  Each lives in cmd_NAME.c and
 * gets argv with argv[0] == "NAME"; it returns the process exit status.
 */
#ifndef COLIBRI_CLI_H
#define COLIBRI_CLI_H

int cmd_device(int argc, char **argv);
int cmd_bench_gemm(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_logits(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_chat_template(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* 1 where cmd_serve is the server, 0 in the static tool (cmd_serve_none.c). */
extern const int cli_has_serve;
int cmd_chat(int argc, char **argv);

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_generate(int argc, char **argv);

#endif /* COLIBRI_CLI_H */

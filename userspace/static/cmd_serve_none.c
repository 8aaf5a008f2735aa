// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri serve in build/colibri-static: absent.  Debian's static
 * libmicrohttpd needs GnuTLS, whose static archive needs p11-kit and
 * libunistring, of which Debian 12 ships no static library; so the static
 * tool links every command but this one (Makefile, "static tool"), and
 * says so instead of failing to link.  The colibri package's shared
 * build/colibri has it.
 */
#include <stdio.h>

#include "cli.h"

const int cli_has_serve;	/* colibri --help leaves it out */

int cmd_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "colibri serve: not in the static build (Debian ships no static "
		"GnuTLS dependencies for libmicrohttpd): use the shared colibri\n");
	return 2;
}

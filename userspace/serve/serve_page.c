// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_page.c - the page colibri serve answers GET / with
 * (userspace/serve/page/index.html), in the binary: the assembler takes the
 * file in as it is (.incbin, from the top of the tree, where make runs),
 * between serve_page and serve_page_end.  The Makefile makes this object
 * depend on the page.
 */
__asm__(".section .rodata\n"
	".global serve_page\n"
	".type serve_page, @object\n"
	"serve_page:\n"
	".incbin \"userspace/serve/page/index.html\"\n"
	".global serve_page_end\n"
	".type serve_page_end, @object\n"
	"serve_page_end:\n"
	".byte 0\n"
	".previous\n");

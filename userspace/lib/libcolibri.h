/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * libcolibri.h - the device client: talk to /dev/colibri.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; none prints anything.
 */
#ifndef LIBCOLIBRI_H
#define LIBCOLIBRI_H

#include "colibri.h"

/* Opens /dev/colibri (or $COLIBRI_DEVICE) read-write, close-on-exec. */
int colibri_dev_open(void);
/* COLIBRI_IOC_GET_INFO into *info (whose size field it sets). */
int colibri_dev_get_info(int fd, struct colibri_info *info);
/* Static names for the GET_INFO enums. */
const char *colibri_isa_name(unsigned int isa_level);
const char *colibri_mem_provider_name(unsigned int provider);

#endif /* LIBCOLIBRI_H */

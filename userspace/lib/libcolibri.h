/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * libcolibri.h - the device client: talk to /dev/colibri.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; none prints anything.
 */
#ifndef LIBCOLIBRI_H
#define LIBCOLIBRI_H

#include <stddef.h>

#include "colibri.h"

/* Opens /dev/colibri (or $COLIBRI_DEVICE) read-write, close-on-exec. */
int colibri_dev_open(void);
/* COLIBRI_IOC_GET_INFO into *info (whose size field it sets). */
int colibri_dev_get_info(int fd, struct colibri_info *info);
/*
 * COLIBRI_IOC_LOAD of the .colibri file at @path under @name ("" or NULL:
 * the file's own name).  @name_out (COLIBRI_NAME_LEN bytes) and @bytes may
 * be NULL.
 */
int colibri_dev_load(int fd, const char *path, const char *name, char *name_out,
		     unsigned long long *bytes);
/*
 * colibri_dev_load() with LOAD @flags: COLIBRI_LOAD_NUMA_INTERLEAVE or
 * COLIBRI_LOAD_NUMA_REPLICATE (where the weights go on a NUMA machine), or 0.
 */
int colibri_dev_load_flags(int fd, const char *path, const char *name, unsigned int flags,
			   char *name_out, unsigned long long *bytes);
/*
 * "local", "interleave", "replicate" (COLIBRI_NUMA_*) to LOAD's flags, or
 * -EINVAL for another name.
 */
int colibri_numa_flags(const char *name);
/* COLIBRI_NUMA_* as a name ("unknown" for another value). */
const char *colibri_numa_name(unsigned int numa);
/*
 * Makes sure the model of the .colibri file @path is loaded under @name
 * (which must be set: the file's own name, or the caller's choice): if a
 * model of that name is loaded it is used as is, else @path is loaded.
 * @name_out (COLIBRI_NAME_LEN bytes, and it may be @name itself) receives
 * the name; *@loaded says whether this call loaded it.
 */
int colibri_dev_ensure_model(int fd, const char *path, const char *name, char *name_out,
			     int *loaded);
/* COLIBRI_IOC_UNLOAD; @wait: wait for attached sessions to end. */
int colibri_dev_unload(int fd, const char *name, int wait);
/* COLIBRI_IOC_LIST into @ents[@cap]; returns the number of models loaded. */
int colibri_dev_list(int fd, struct colibri_model_entry *ents, unsigned int cap);
/* COLIBRI_IOC_ATTACH; @out (may be NULL) receives the kernel's answer. */
int colibri_dev_attach(int fd, const char *name, unsigned int max_context,
		       unsigned int max_batch, struct colibri_attach *out);
/*
 * COLIBRI_IOC_GET_TOKENIZER: the tokenizer section of loaded model @name in
 * a malloc'ed *@buf (free it) of *@len bytes (NULL and 0 when the model has
 * none); @out (may be NULL) receives the kernel's answer (kind, flags,
 * BOS/EOS/PAD ids).
 */
int colibri_dev_get_tokenizer(int fd, const char *name, void **buf, size_t *len,
			      struct colibri_tokenizer *out);
/*
 * The chat template section of loaded model @name (GET_TOKENIZER with
 * COLIBRI_TOKENIZER_CHAT_TEMPLATE) as a malloc'ed, NUL-terminated *@tmpl
 * of *@len bytes (NULL and 0 when the model has none).
 */
int colibri_dev_get_chat_template(int fd, const char *name, char **tmpl, size_t *len);
/* COLIBRI_IOC_SUBMIT; @s is filled by the caller except size. */
int colibri_dev_submit(int fd, struct colibri_submit *s);

/* Static names for the GET_INFO enums. */
const char *colibri_isa_name(unsigned int isa_level);
const char *colibri_mem_provider_name(unsigned int provider);
const char *colibri_arch_name(unsigned int arch);

#endif /* LIBCOLIBRI_H */

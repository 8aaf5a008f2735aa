// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * session_open.c - colibri_model_open(): which backend runs a model, the
 * kernel's (session_kernel.c) or the in-process engine's (session_user.c).
 *
 * The one place that names the backends: it hands the model its backend's
 * table (m->be), and from then on session.c and the backends reach each
 * other only through it.  So the backends sit above session.c (they call
 * its helpers, session_err() and colibri_model_tokenizer()) and this file
 * above them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libcolibri.h"
#include "session/session_priv.h"

/* Opens @model on @be into @m (set up but for the backend). */
static int model_open_on(struct colibri_model *m, const struct session_backend *be,
			 const char *model, char *err, size_t errlen)
{
	m->be = be;
	m->ctl_fd = -1;
	return be->model_open(m, model, err, errlen);
}

/*
 * AUTO: the kernel when the device opens and takes the model; else a file
 * runs in-process, with a note saying why (nothing when there simply is
 * no device).  A name that is not a file has nowhere else to go.
 */
static int model_open_auto(struct colibri_model *m, const char *model, char *err,
			   size_t errlen)
{
	char why[sizeof(m->info.note)] = "";
	struct stat st;
	int fd, ret;

	fd = colibri_dev_open();
	if (fd >= 0) {
		close(fd);
		ret = model_open_on(m, &session_kernel_backend, model, why, sizeof(why));
		if (!ret || stat(model, &st)) {
			if (ret)
				snprintf(err, errlen, "%s", why);
			return ret;
		}
	} else if (fd != -ENOENT) {
		snprintf(why, sizeof(why), "cannot open %s: %s", COLIBRI_DEVICE_PATH,
			 strerror(-fd));
	}
	ret = model_open_on(m, &session_user_backend, model, err, errlen);
	if (!ret && why[0])
		snprintf(m->info.note, sizeof(m->info.note), "%s", why);
	return ret;
}

int colibri_model_open(struct colibri_model **out, const char *model,
		       const struct colibri_model_opts *opts, char *err, size_t errlen)
{
	static const struct colibri_model_opts defaults = { .isa = -1, .dtype = -1 };
	const struct colibri_model_opts *o = opts ? opts : &defaults;
	struct colibri_model *m;
	int ret;

	*out = NULL;
	if (!model || !*model) {
		snprintf(err, errlen, "no model given");
		return -EINVAL;
	}
	if (o->name && strlen(o->name) >= COLIBRI_NAME_LEN) {
		snprintf(err, errlen, "the name '%s' is longer than %d bytes", o->name,
			 COLIBRI_NAME_LEN - 1);
		return -ENAMETOOLONG;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	atomic_init(&m->refs, 1);
	pthread_mutex_init(&m->tok_lock, NULL);
	pthread_mutex_init(&m->chat_lock, NULL);
	m->kbos = m->keos = m->kpad = -1;
	m->flags = o->flags;
	m->threads = o->threads;
	m->isa = o->isa;
	m->dtype = o->dtype;
	m->preset = o->preset;
	m->info.io = o->io;
	m->name_opt = o->name;
	switch (o->backend) {
	case COLIBRI_BACKEND_KERNEL:
		ret = model_open_on(m, &session_kernel_backend, model, err, errlen);
		break;
	case COLIBRI_BACKEND_USER:
		ret = model_open_on(m, &session_user_backend, model, err, errlen);
		break;
	case COLIBRI_BACKEND_AUTO:
		ret = model_open_auto(m, model, err, errlen);
		break;
	default:
		snprintf(err, errlen, "unknown backend %d", (int)o->backend);
		ret = -EINVAL;
	}
	m->name_opt = NULL;
	if (ret) {
		pthread_mutex_destroy(&m->tok_lock);
		pthread_mutex_destroy(&m->chat_lock);
		free(m);
		return ret;
	}
	m->info.caps = m->be->all_logits ? COLIBRI_CAP_ALL_LOGITS : 0;
	*out = m;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vm_cmd.h - run a program in the guest, as a user would, and keep what
 * it printed: the VM tests of the colibri tool run the real binary
 * ($COLIBRI_BUILD/colibri) this way.
 */
#ifndef COLIBRI_VM_CMD_H
#define COLIBRI_VM_CMD_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm_helpers.h"

/*
 * What one run left behind.  @status is the exit status, 128 + N when
 * signal N ended it, or -1 when it was still running at the deadline
 * (it was then killed: a hang is a result, not a stuck test).
 */
struct vm_cmd {
	int status;
	char out[64 * 1024];	/* stdout, NUL-terminated (cut if longer) */
	char err[16 * 1024];	/* stderr, likewise */
	size_t out_len, err_len;
	double seconds;
};

static inline double vm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Appends what @fd has to @buf[@cap]; 0 at end of file. */
static inline ssize_t vm_cmd_drain(int fd, char *buf, size_t cap, size_t *len)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n > 0) {
		size_t k = (size_t)n < cap - 1 - *len ? (size_t)n : cap - 1 - *len;

		memcpy(buf + *len, tmp, k);
		*len += k;
		buf[*len] = 0;
	}
	return n;
}

/*
 * Runs argv[0] (a path) with @argv as user @uid (-1: ours) in the
 * device's group (vm_drop_to_member()), waiting at
 * most @timeout_s seconds; returns 0 once it ran (whatever its status),
 * -errno if it could not.
 */
static inline int vm_cmd_run_as(struct vm_cmd *r, double timeout_s, int uid,
				char *const argv[])
{
	int po[2], pe[2], st, open_fds = 2;
	double t0 = vm_now();
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (uid >= 0 && vm_drop_to_member(uid))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while (open_fds) {
		struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		int left = (int)((t0 + timeout_s - vm_now()) * 1000);

		if (left <= 0 || poll(p, 2, left) == 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (p[0].revents && po[0] >= 0 && vm_cmd_drain(po[0], r->out, sizeof(r->out),
								 &r->out_len) <= 0) {
			close(po[0]);
			po[0] = -1;
			open_fds--;
		}
		if (p[1].revents && pe[0] >= 0 && vm_cmd_drain(pe[0], r->err, sizeof(r->err),
							       &r->err_len) <= 0) {
			close(pe[0]);
			pe[0] = -1;
			open_fds--;
		}
	}
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	waitpid(pid, &st, 0);
	r->seconds = vm_now() - t0;
	if (open_fds)
		r->status = -1;		/* killed at the deadline */
	else
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

static inline int vm_cmd_run(struct vm_cmd *r, double timeout_s, char *const argv[])
{
	return vm_cmd_run_as(r, timeout_s, -1, argv);
}

/* The colibri tool of this build. */
static inline const char *vm_colibri(void)
{
	static char path[4096];
	const char *b = getenv("COLIBRI_BUILD");

	snprintf(path, sizeof(path), "%s/colibri", b ? b : "build");
	return path;
}

/* vm_cmd_run() of "colibri ARGS...", the argument list ended by NULL. */
static inline int vm_colibri_run(struct vm_cmd *r, double timeout_s, ...)
{
	char *argv[64];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)vm_colibri();
	va_start(ap, timeout_s);
	while (n < 63 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return vm_cmd_run(r, timeout_s, argv);
}

#endif /* COLIBRI_VM_CMD_H */

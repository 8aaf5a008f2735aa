// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * trace_test - the module's tracepoints (kmod/colibri_trace.h; issue 18,
 * item 5): enabled through tracefs, one SUBMIT of three tokens yields
 * colibri_req_queued, _started and _completed for one session, a
 * colibri_forward of those tokens, and a colibri_route per token and
 * layer with top_k (expert, weight) pairs, weights in (0, 1]; with the reference
 * accelerator bound, a colibri_accel_job per job it ran.
 *
 * Runs inside the vm-run guest with colibri.ko loaded, as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define TRACEFS	"/sys/kernel/tracing"
#define EVENTS	TRACEFS "/events/colibri"
#define N_TOK	3
#define RA_MOD	"colibri_refaccel"

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* Every colibri event on, the ring buffer emptied. */
static int trace_on(void)
{
	int ret = write_str(TRACEFS "/trace", "");

	return ret ? ret : write_str(EVENTS "/enable", "1");
}

/* Off again; the trace's text in a malloc()ed string. */
static char *trace_off_read(void)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	write_str(EVENTS "/enable", "0");
	fd = open(TRACEFS "/trace", O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
	}
	buf[len] = 0;
	close(fd);
	return buf;
}

/* The next line of @t after *@at holding "EVENT: ", its fields; or NULL. */
static const char *next_event(const char **at, const char *event)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s: ", event);
	p = strstr(*at, key);
	if (!p)
		return NULL;
	*at = p + strlen(key);
	return *at;
}

/* Parses "{0x1,0x2}" into @v (at most @max); the count, -1 if malformed. */
static int parse_array(const char *s, unsigned int *v, int max)
{
	int n = 0;
	char *end;

	if (*s++ != '{')
		return -1;
	while (*s != '}' && n < max) {
		v[n++] = strtoul(s, &end, 0);
		if (end == s)
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	return *s == '}' ? n : -1;
}

/* SUBMITs @n tokens; 0 or -errno, the sampled token in *@token. */
static int submit(int fd, const uint32_t *toks, unsigned int n, unsigned int *token)
{
	struct colibri_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.tokens = (uintptr_t)toks;
	s.n_tokens = n;
	ret = colibri_dev_submit(fd, &s);
	if (token)
		*token = s.token;
	return ret;
}

FIXTURE(trace) {
	int fd;
	char path[4096];
};

FIXTURE_SETUP(trace)
{
	ASSERT_EQ(0, access(EVENTS "/enable", W_OK))
		TH_LOG("no %s: tracefs not mounted or no colibri events", EVENTS);
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "tr", NULL, NULL));
}

FIXTURE_TEARDOWN(trace)
{
	write_str(EVENTS "/enable", "0");
	colibri_dev_unload(self->fd, "tr", 1);
	close(self->fd);
}

TEST_F(trace, a_submit_is_queued_started_completed_forwarded_and_routed)
{
	uint32_t toks[N_TOK] = { 1, 2, 3 };
	unsigned long long sq, ss, sc, lat, time_ns;
	unsigned int nq, ns, nc, batch, ntok, pos, layer, e[32];
	unsigned int routes = 0, seen[N_TOK][64] = { { 0 } }, tok = 0;
	struct colibri_attach a;
	char model[64], ex[512];
	const char *at, *f;
	char *t;
	int s, ret, fret, k, i;

	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "tr", 64, 0, &a));
	ASSERT_LT(0, a.top_k);
	ASSERT_GE(64, a.n_layers);
	ASSERT_EQ(0, trace_on());
	ret = submit(s, toks, N_TOK, &tok);
	t = trace_off_read();
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, ret);

	at = t;
	f = next_event(&at, "colibri_req_queued");
	ASSERT_NE(NULL, f) TH_LOG("no colibri_req_queued in:\n%.2000s", t);
	ASSERT_EQ(2, sscanf(f, "sess=%llu tokens=%u", &sq, &nq));
	f = next_event(&at, "colibri_req_started");
	ASSERT_NE(NULL, f) TH_LOG("no colibri_req_started after it in:\n%.2000s", t);
	ASSERT_EQ(2, sscanf(f, "sess=%llu tokens=%u", &ss, &ns));
	f = next_event(&at, "colibri_req_completed");
	ASSERT_NE(NULL, f) TH_LOG("no colibri_req_completed after it in:\n%.2000s", t);
	ASSERT_EQ(4, sscanf(f, "sess=%llu tokens=%u ret=%d latency_ns=%llu", &sc, &nc, &i, &lat));
	EXPECT_LT(0, sq);
	EXPECT_EQ(sq, ss);
	EXPECT_EQ(sq, sc);
	EXPECT_EQ(N_TOK, nq);
	EXPECT_EQ(N_TOK, ns);
	EXPECT_EQ(N_TOK, nc);
	EXPECT_EQ((int)tok, i);		/* the token SUBMIT sampled */
	EXPECT_LT(0, lat);
	/* Generous: minutes of an emulated guest on a busy host. */
	EXPECT_GT(600ULL * 1000000000, lat);

	at = t;
	f = next_event(&at, "colibri_forward");
	ASSERT_NE(NULL, f) TH_LOG("no colibri_forward in:\n%.2000s", t);
	ASSERT_EQ(5, sscanf(f, "model=%63s batch=%u tokens=%u time_ns=%llu ret=%d", model, &batch,
			    &ntok, &time_ns, &fret));
	EXPECT_STREQ("tr", model);
	EXPECT_EQ(1, batch);
	EXPECT_EQ(N_TOK, ntok);
	EXPECT_LT(0, time_ns);
	EXPECT_GE(lat, time_ns);
	EXPECT_EQ(0, fret);

	at = t;
	while ((f = next_event(&at, "colibri_route"))) {
		ASSERT_EQ(4, sscanf(f, "pos=%u layer=%u k=%d pairs=%511s", &pos, &layer, &k, ex));
		ASSERT_GT(N_TOK, pos);
		ASSERT_GT(a.n_layers, layer);
		seen[pos][layer]++;
		routes++;
		EXPECT_EQ((int)a.top_k, k);
		EXPECT_EQ(2 * k, parse_array(ex, e, 32)) TH_LOG("pairs %s", ex);
		for (i = 0; i < k; i++) {
			float v;

			memcpy(&v, &e[2 * i + 1], 4);
			EXPECT_GT(256, e[2 * i]);
			EXPECT_TRUE(v > 0 && v <= 1) TH_LOG("weight %d of %s is %g", i, ex, v);
		}
	}
	EXPECT_EQ(N_TOK * a.n_layers, routes);
	for (pos = 0; pos < N_TOK; pos++)
		for (layer = 0; layer < a.n_layers; layer++)
			EXPECT_EQ(1, seen[pos][layer]) TH_LOG("pos %u layer %u", pos, layer);
	free(t);
	close(s);
}

/* With route off, no colibri_route event: the loop is behind _enabled(). */
TEST_F(trace, route_off_leaves_the_others)
{
	uint32_t toks[N_TOK] = { 1, 2, 3 };
	const char *at;
	char *t;
	int s;

	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "tr", 64, 0, NULL));
	ASSERT_EQ(0, trace_on());
	ASSERT_EQ(0, write_str(EVENTS "/colibri_route/enable", "0"));
	EXPECT_EQ(0, submit(s, toks, N_TOK, NULL));
	t = trace_off_read();
	ASSERT_NE(NULL, t);
	at = t;
	EXPECT_NE(NULL, next_event(&at, "colibri_forward"));
	at = t;
	EXPECT_EQ(NULL, next_event(&at, "colibri_route"));
	free(t);
	close(s);
}

/* build/kmod/RELEASE/accel/colibri_refaccel.ko, next to colibri.ko. */
static int ra_load(void)
{
	const char *ko = getenv("COLIBRI_KO");
	char path[4096];
	int fd, ret;

	if (!ko || !strrchr(ko, '/'))
		return -ENOENT;
	snprintf(path, sizeof(path), "%.*s/accel/" RA_MOD ".ko", (int)(strrchr(ko, '/') - ko), ko);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

TEST_F(trace, each_accelerator_job_is_an_event)
{
	uint32_t toks[N_TOK] = { 1, 2, 3 };
	unsigned int layer, expert, ntok, jobs = 0;
	struct colibri_attach a;
	unsigned long long time_ns;
	long long done0, done1;
	char name[64];
	const char *at, *f;
	int s, st, ret;
	char *t;

	ASSERT_EQ(0, ra_load()) TH_LOG("load " RA_MOD " (run make modules)");
	done0 = vm_read_num("/sys/kernel/colibri/models/tr/accel/refaccel/jobs");
	ASSERT_LE(0, done0) TH_LOG("refaccel did not bind model tr");
	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "tr", 64, 0, &a));
	ASSERT_EQ(0, trace_on());
	ret = submit(s, toks, N_TOK, NULL);
	close(s);
	t = trace_off_read();
	done1 = vm_read_num("/sys/kernel/colibri/models/tr/accel/refaccel/jobs");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, ret);
	at = t;
	while ((f = next_event(&at, "colibri_accel_job"))) {
		ASSERT_EQ(6, sscanf(f, "accel=%63s layer=%u expert=%u tokens=%u status=%d time_ns=%llu",
				    name, &layer, &expert, &ntok, &st, &time_ns));
		EXPECT_STREQ("refaccel", name);
		EXPECT_GT(a.n_layers, layer);
		EXPECT_GT(256, expert);
		EXPECT_LE(1, ntok);
		EXPECT_GE(N_TOK, ntok);
		EXPECT_EQ(0, st);
		EXPECT_LT(0, time_ns);
		jobs++;
	}
	EXPECT_LT(0, jobs) TH_LOG("no colibri_accel_job in:\n%.2000s", t);
	EXPECT_EQ(done1 - done0, jobs);
	free(t);
	EXPECT_EQ(0, syscall(SYS_delete_module, RA_MOD, O_NONBLOCK) ? -errno : 0);
}

TEST_HARNESS_MAIN

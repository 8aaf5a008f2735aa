// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri stats - per model, where its expert jobs ran (CPU or which
 * accelerator), read from /sys/kernel/colibri/models/NAME/.
 *
 * Reads sysfs rather than asking /dev/colibri so it works without opening
 * the device, and so that --sysfs can point it at a copy or a fake tree
 * (the tests do).  Files a given module does not have (an older module has
 * no experts_* and no accel/) are shown as "-" / null, never as an error.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "cli.h"

#define STATS_DEFAULT_SYSFS "/sys/kernel/colibri"

static const char stats_usage[] =
	"usage: colibri stats [--sysfs DIR] [--json] [MODEL...]\n";

static const char stats_help[] =
	"Per loaded model: arch, sessions, tokens, forward passes, largest batch,\n"
	"and where its expert jobs ran.  One expert job is one routed expert of\n"
	"one layer in one forward pass, for all the tokens routed to it.\n"
	"\n"
	"  cpu          jobs the CPU ran (including reruns of jobs an accelerator\n"
	"               failed, timed out on or refused)\n"
	"  ACCEL        one line per bound accelerator: jobs it completed, and how\n"
	"               often it failed, timed out or refused a job\n"
	"  share        jobs of that line / all completed expert jobs\n"
	"               (CPU + offloaded)\n"
	"\n"
	"Models are shown sorted by name, or only those named (in that order).\n"
	"A counter the module does not provide (older module) is shown as \"-\"\n"
	"(null in JSON); so is a share while no expert job has run.\n"
	"\n"
	"  --sysfs DIR  read DIR instead of " STATS_DEFAULT_SYSFS "\n"
	"  --json       print one JSON object: {\"sysfs\": DIR, \"models\": [{\"name\",\n"
	"               \"arch\", \"sessions\", \"tokens\", \"forwards\", \"batch_max\",\n"
	"               \"expert_jobs\": {\"total\", \"cpu\", \"cpu_share\", \"offloaded\",\n"
	"               \"accelerators\": [{\"name\", \"jobs\", \"failed\", \"timeouts\",\n"
	"               \"refused\", \"share\"}]}}]}; shares are fractions in 0..1\n"
	"\n"
	"Exit status: 0, or 1 if DIR or a named model does not exist.\n";

/* A counter read from one sysfs file; !present when the file is missing or
 * does not hold a number. */
struct counter {
	int present;
	long long v;
};

struct accel_stats {
	char *name;
	struct counter jobs, failed, timeouts, refused;
};

struct model_stats {
	const char *name;
	char arch[64];
	struct counter sessions, tokens, forwards, batch_max;
	struct counter cpu, offloaded;
	struct accel_stats *accel;
	size_t n_accel;
};

/* Reads the first line of DIR/FILE into buf (newline removed); 0 or -errno. */
static int read_line(const char *dir, const char *file, char *buf, size_t size)
{
	char path[4096];
	FILE *f;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return 0;
}

static struct counter read_counter(const char *dir, const char *file)
{
	struct counter c = { 0, 0 };
	char buf[64], *end;

	if (read_line(dir, file, buf, sizeof(buf)) || !buf[0])
		return c;
	errno = 0;
	c.v = strtoll(buf, &end, 10);
	c.present = !errno && end != buf && !*end;
	return c;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names of the subdirectories of @path, sorted; *out is NULL and the
 * count 0 when @path does not exist.  Returns the count or -errno.
 */
static long list_subdirs(const char *path, char ***out)
{
	char **names = NULL, **grown, sub[4096];
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub) ||
		    !is_dir(sub))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				goto err_nomem;
			names = grown;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto err_nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*out = names;
	return (long)n;

err_nomem:
	closedir(d);
	while (n)
		free(names[--n]);
	free(names);
	return -ENOMEM;
}

static void free_names(char **names, long n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

/* Fills @m from MODELS_DIR/NAME; 0, -ENAMETOOLONG or -ENOMEM. */
static int read_model(const char *models_dir, const char *name, struct model_stats *m)
{
	char dir[4096], adir[4096 + 64], sub[8192];
	char **names;
	long n, i;

	memset(m, 0, sizeof(*m));
	m->name = name;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", models_dir, name) >= sizeof(dir))
		return -ENAMETOOLONG;
	if (read_line(dir, "arch", m->arch, sizeof(m->arch)) || !m->arch[0])
		snprintf(m->arch, sizeof(m->arch), "-");
	m->sessions = read_counter(dir, "sessions");
	m->tokens = read_counter(dir, "tokens");
	m->forwards = read_counter(dir, "forwards");
	m->batch_max = read_counter(dir, "batch_max");
	m->cpu = read_counter(dir, "experts_cpu");
	m->offloaded = read_counter(dir, "experts_offloaded");

	snprintf(adir, sizeof(adir), "%s/accel", dir);
	n = list_subdirs(adir, &names);
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n <= 0)	/* no accel/ (older module) or unreadable: no accelerator lines */
		return 0;
	m->accel = calloc((size_t)n, sizeof(*m->accel));
	if (!m->accel) {
		free_names(names, n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct accel_stats *a = &m->accel[i];

		snprintf(sub, sizeof(sub), "%s/%s", adir, names[i]);
		a->name = names[i];	/* owned by m->accel[i] now */
		a->jobs = read_counter(sub, "jobs");
		a->failed = read_counter(sub, "failed");
		a->timeouts = read_counter(sub, "timeouts");
		a->refused = read_counter(sub, "refused");
	}
	m->n_accel = (size_t)n;
	free(names);
	return 0;
}

static void free_model(struct model_stats *m)
{
	size_t i;

	for (i = 0; i < m->n_accel; i++)
		free(m->accel[i].name);
	free(m->accel);
}

/* All completed expert jobs: each ran either on the CPU or on one accelerator. */
static struct counter total_jobs(const struct model_stats *m)
{
	struct counter t = { 0, 0 };

	if (m->cpu.present && m->offloaded.present) {
		t.present = 1;
		t.v = m->cpu.v + m->offloaded.v;
	}
	return t;
}

/* The share of @part in @total as a fraction, or -1 when it is unknown. */
static double share(struct counter part, struct counter total)
{
	if (!part.present || !total.present || total.v <= 0)
		return -1;
	return (double)part.v / (double)total.v;
}

/* --- text ------------------------------------------------------------------ */

static const char *fmt_counter(struct counter c, char *buf, size_t size)
{
	if (!c.present)
		return "-";
	snprintf(buf, size, "%lld", c.v);
	return buf;
}

static const char *fmt_share(double s, char *buf, size_t size)
{
	if (s < 0)
		return "-";
	snprintf(buf, size, "%.1f%%", 100.0 * s);
	return buf;
}

static void print_text(const struct model_stats *m)
{
	struct counter total = total_jobs(m);
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	int w = 8;
	size_t i;

	for (i = 0; i < m->n_accel; i++)
		if ((int)strlen(m->accel[i].name) > w)
			w = (int)strlen(m->accel[i].name);

	printf("%-14s %s\n", "model", m->name);
	printf("%-14s %s\n", "arch", m->arch);
	printf("%-14s %s\n", "sessions", fmt_counter(m->sessions, b1, sizeof(b1)));
	printf("%-14s %s\n", "tokens", fmt_counter(m->tokens, b1, sizeof(b1)));
	printf("%-14s %s\n", "forwards", fmt_counter(m->forwards, b1, sizeof(b1)));
	printf("%-14s %s\n", "batch_max", fmt_counter(m->batch_max, b1, sizeof(b1)));
	printf("%-14s %s (cpu %s, offloaded %s)\n", "expert jobs",
	       fmt_counter(total, b1, sizeof(b1)), fmt_counter(m->cpu, b2, sizeof(b2)),
	       fmt_counter(m->offloaded, b3, sizeof(b3)));
	printf("  %-*s %12s %7s %8s %8s %8s\n", w, "WHERE", "JOBS", "SHARE", "FAILED",
	       "TIMEOUTS", "REFUSED");
	printf("  %-*s %12s %7s\n", w, "cpu", fmt_counter(m->cpu, b1, sizeof(b1)),
	       fmt_share(share(m->cpu, total), b2, sizeof(b2)));
	for (i = 0; i < m->n_accel; i++) {
		const struct accel_stats *a = &m->accel[i];

		printf("  %-*s %12s %7s %8s %8s %8s\n", w, a->name,
		       fmt_counter(a->jobs, b1, sizeof(b1)),
		       fmt_share(share(a->jobs, total), b2, sizeof(b2)),
		       fmt_counter(a->failed, b3, sizeof(b3)),
		       fmt_counter(a->timeouts, b4, sizeof(b4)),
		       fmt_counter(a->refused, b5, sizeof(b5)));
	}
}

/* --- JSON ------------------------------------------------------------------ */

static void add_counter(cJSON *o, const char *key, struct counter c)
{
	if (c.present)
		cJSON_AddNumberToObject(o, key, (double)c.v);
	else
		cJSON_AddNullToObject(o, key);
}

static void add_share(cJSON *o, const char *key, double s)
{
	if (s < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, s);
}

static cJSON *model_json(const struct model_stats *m)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
	cJSON *list = cJSON_CreateArray();
	struct counter total = total_jobs(m);
	size_t i;

	cJSON_AddStringToObject(o, "name", m->name);
	if (strcmp(m->arch, "-"))
		cJSON_AddStringToObject(o, "arch", m->arch);
	else
		cJSON_AddNullToObject(o, "arch");
	add_counter(o, "sessions", m->sessions);
	add_counter(o, "tokens", m->tokens);
	add_counter(o, "forwards", m->forwards);
	add_counter(o, "batch_max", m->batch_max);
	add_counter(e, "total", total);
	add_counter(e, "cpu", m->cpu);
	add_share(e, "cpu_share", share(m->cpu, total));
	add_counter(e, "offloaded", m->offloaded);
	for (i = 0; i < m->n_accel; i++) {
		const struct accel_stats *a = &m->accel[i];
		cJSON *ao = cJSON_CreateObject();

		cJSON_AddStringToObject(ao, "name", a->name);
		add_counter(ao, "jobs", a->jobs);
		add_counter(ao, "failed", a->failed);
		add_counter(ao, "timeouts", a->timeouts);
		add_counter(ao, "refused", a->refused);
		add_share(ao, "share", share(a->jobs, total));
		cJSON_AddItemToArray(list, ao);
	}
	cJSON_AddItemToObject(e, "accelerators", list);
	cJSON_AddItemToObject(o, "expert_jobs", e);
	return o;
}

/* --- command --------------------------------------------------------------- */

/* Is @name a model under @models_dir?  Names with '/' or leading '.' never are. */
static int model_exists(const char *models_dir, const char *name)
{
	char path[4096];

	if (!name[0] || name[0] == '.' || strchr(name, '/'))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", models_dir, name) >= sizeof(path))
		return 0;
	return is_dir(path);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *sysfs = STATS_DEFAULT_SYSFS;
	char models_dir[4096], **names = NULL;
	cJSON *root = NULL, *list = NULL;
	int c, json = 0, ret = 0, unknown = 0, i, j;
	long n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sysfs = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("%s\n%s", stats_usage, stats_help);
			return 0;
		default:
			fprintf(stderr, "%s", stats_usage);
			return 2;
		}
	}
	if (!is_dir(sysfs)) {
		fprintf(stderr, "colibri stats: %s: no such directory (is colibri.ko loaded?)\n",
			sysfs);
		return 1;
	}
	if ((size_t)snprintf(models_dir, sizeof(models_dir), "%s/models", sysfs) >=
	    sizeof(models_dir)) {
		fprintf(stderr, "colibri stats: %s: path too long\n", sysfs);
		return 1;
	}

	/* Check every named model before printing anything. */
	for (i = optind; i < argc; i++) {
		if (!model_exists(models_dir, argv[i])) {
			fprintf(stderr, "colibri stats: %s: no such model loaded (see %s)\n",
				argv[i], models_dir);
			unknown = 1;
		}
	}
	if (unknown)
		return 1;

	if (optind < argc) {
		n = argc - optind;
	} else {
		/* models/ is missing only if no module ever created it: no models. */
		n = list_subdirs(models_dir, &names);
		if (n < 0) {
			fprintf(stderr, "colibri stats: %s: %s\n", models_dir, strerror((int)-n));
			return 1;
		}
	}

	if (json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "sysfs", sysfs);
		list = cJSON_AddArrayToObject(root, "models");
	} else if (n == 0) {
		printf("no models loaded\n");
	}
	for (i = 0; i < n; i++) {
		const char *name = names ? names[i] : argv[optind + i];
		struct model_stats m;
		int dup = 0, err;

		for (j = 0; !names && j < i; j++)
			dup |= !strcmp(argv[optind + j], name);
		if (dup)
			continue;
		err = read_model(models_dir, name, &m);
		if (err) {
			fprintf(stderr, "colibri stats: %s: %s\n", name, strerror(-err));
			free_model(&m);
			ret = 1;
			break;
		}
		if (json) {
			cJSON_AddItemToArray(list, model_json(&m));
		} else {
			if (i)
				putchar('\n');
			print_text(&m);
		}
		free_model(&m);
	}
	if (json && !ret) {
		char *s = cJSON_Print(root);

		if (s)
			puts(s);
		else
			ret = 1;
		free(s);
	}
	cJSON_Delete(root);
	free_names(names, names ? n : 0);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * The tools' command lines from one table each (struct tool_cli): the getopt strings, the
 * parsing and checking of every value, and -h, so that a tool's main says what it takes and
 * nothing of how.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"

/* getopt_long's values for the common long options; a tool's long options come after them. */
enum {
	OPT_BACKEND = 0x100,
	OPT_IMPL,
	OPT_CSV,
	OPT_SWEEP_FD,
	OPT_HELP,
	OPT_TOOL,
};

static const struct option common_longopts[] = {
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "impl", required_argument, NULL, OPT_IMPL },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "sweep-fd", required_argument, NULL, OPT_SWEEP_FD },
	{ "help", no_argument, NULL, OPT_HELP },
};
#define N_COMMON (sizeof(common_longopts) / sizeof(common_longopts[0]))

/* The options every tool takes, after its own; the sweep's line where the tool sweeps. */
#define COMMON_USAGE \
	"  --backend NAME  use only this gdrcopy backend (gdrdrv, dmabuf, vulkan): GDRCOPY_BACKEND\n" \
	"  --impl NAME     force one CPU copy routine, a name GDRCOPY_COPY_IMPL takes (gdrapi(7))\n"
#define SWEEP_USAGE \
	"  --impl all      run it once for every copy routine this CPU has, one process each\n"
#define LAST_USAGE \
	"  --csv           print comma-separated rows instead of the human output\n" \
	"  -h, --help      print this help\n"

/* The most options a tool may have; pplat has the most, 13. */
#define MAX_OPTIONS 24

/*
 * What the parser allocates lives as long as the process: kept here, where leak checkers see it
 * after main has returned, one block for the arguments and one per list.
 */
static void *kept[MAX_OPTIONS + 1];
static size_t nkept;

static void *keep(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		tool_die("out of memory");
	kept[nkept++] = p;
	return p;
}

static const char *const alloc_choices[] = { "cuMemAlloc", "cuMemCreate", NULL };
/* Indexed by gdr_map_flags_t: GDR_MAP_FLAG_DEFAULT .. GDR_MAP_FLAG_REQ_DEVICE_MAPPING. */
static const char *const map_choices[] = { "default", "wc", "cache", "device", NULL };

const char *tool_map_flag_name(int flags)
{
	size_t n = sizeof(map_choices) / sizeof(map_choices[0]) - 1;

	return flags >= 0 && (size_t)flags < n ? map_choices[flags] : "unknown";
}

static size_t parse_size(const char *arg, const char *opt)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	/* strtoull negates " -5" to a huge value: its sign is looked for after the blanks it skips. */
	if (errno || end == arg || arg[strspn(arg, " \t\n\v\f\r")] == '-')
		tool_usage_error("%s %s: not a size", opt, arg);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end)
		tool_usage_error("%s %s: not a size", opt, arg);
	/* Checked before the shift, which would drop the high bits silently. */
	if (v > (SIZE_MAX / 2) >> shift)
		tool_usage_error("%s %s: too large (at most %zu bytes)", opt, arg, SIZE_MAX / 2);
	return (size_t)(v << shift);
}

static long parse_long(const char *arg, const char *opt, long min, long max)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max)
		tool_usage_error("%s %s: expected an integer from %ld to %ld", opt, arg, min, max);
	return v;
}

/* The index of arg in choices (any case), or die with "OPT ARG: expected A, B or C". */
static int parse_choice(const char *arg, const char *opt, const char *const *choices)
{
	char expected[256] = "";
	size_t used = 0, n = 0;

	while (choices[n])
		n++;
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(arg, choices[i]))
			return (int)i;
	for (size_t i = 0; i < n && used < sizeof(expected); i++)
		used += (size_t)snprintf(expected + used, sizeof(expected) - used, "%s%s",
					 !i ? "" : i == n - 1 ? " or " : ", ", choices[i]);
	tool_usage_error("%s %s: expected %s", opt, arg, expected);
}

static void list_append(struct tool_list *l, const char *arg, int argc)
{
	if (!l->v)
		l->v = keep((size_t)argc, sizeof(*l->v));
	l->v[l->n++] = arg;
}

static void set_value(const struct tool_option *o, const char *arg, int argc)
{
	char opt[64];

	if (o->key)
		snprintf(opt, sizeof(opt), "-%c", o->key);
	else
		snprintf(opt, sizeof(opt), "--%s", o->name);
	switch (o->arg) {
	case TOOL_ARG_FLAG:
		*(int *)o->dest = 1;
		break;
	case TOOL_ARG_SIZE:
		*(size_t *)o->dest = parse_size(arg, opt);
		break;
	case TOOL_ARG_COUNT:
		*(size_t *)o->dest = (size_t)parse_long(arg, opt, o->min, o->max);
		break;
	case TOOL_ARG_INT:
		*(int *)o->dest = (int)parse_long(arg, opt, o->min, o->max);
		break;
	case TOOL_ARG_ALLOC:
		*(enum tool_alloc_kind *)o->dest = parse_choice(arg, opt, alloc_choices) ?
						   TOOL_ALLOC_CUMEMCREATE : TOOL_ALLOC_CUMEMALLOC;
		break;
	case TOOL_ARG_MAP:
		*(int *)o->dest = parse_choice(arg, opt, map_choices);
		break;
	case TOOL_ARG_CHOICE:
		*(int *)o->dest = parse_choice(arg, opt, o->choices);
		break;
	case TOOL_ARG_STRING:
		*(const char **)o->dest = arg;
		break;
	case TOOL_ARG_LIST:
		list_append(o->dest, arg, argc);
		break;
	}
}

/* --backend NAME: one of gdr_ext_backend_name's. */
static void check_backend(const char *arg)
{
	const char *known;

	for (int id = 1; (known = gdr_ext_backend_name(id)); id++)
		if (!strcmp(arg, known))
			return;
	tool_usage_error("--backend %s: unknown backend (known: gdrdrv, dmabuf, vulkan)", arg);
}

/* One of the common long options: 1 if c was one, 0 if not. */
static int common_option(int c, const char *arg, struct tool_common *o)
{
	int fd;

	switch (c) {
	case OPT_BACKEND:
		check_backend(arg);
		o->backend = arg;
		return 1;
	case OPT_IMPL:
		/* Any name: the library decides what it takes, when it is opened (tool_gdr_open). */
		o->impl = arg;
		return 1;
	case OPT_CSV:
		tool_csv = 1;
		return 1;
	case OPT_SWEEP_FD:
		fd = (int)parse_long(arg, "--sweep-fd", 0, INT_MAX);
		/* Every message of a sweep's child goes to this descriptor: it must be open. */
		if (fcntl(fd, F_GETFD) < 0)
			tool_usage_error("--sweep-fd %s: %s (the option is for --impl all's own runs)",
					 arg, strerror(errno));
		tool_sweep_fd = fd;
		return 1;
	default:
		return 0;
	}
}

static void usage(const struct tool_cli *cli, FILE *f)
{
	fprintf(f, "usage: %s [options]\n", cli->name);
	for (const struct tool_option *o = cli->options; o->key || o->name; o++)
		fputs(o->usage, f);
	fprintf(f, "%s%s%s", COMMON_USAGE, cli->no_sweep ? "" : SWEEP_USAGE, LAST_USAGE);
}

/* The library reads what --backend and --impl ask for from its environment. */
static void set_env(const struct tool_common *o)
{
	if (o->backend)
		setenv("GDRCOPY_BACKEND", o->backend, 1);
	if (o->impl && strcmp(o->impl, "all")) {
		setenv("GDRCOPY_COPY_IMPL", o->impl, 1);
		tool_impl_forced = o->impl;
	}
}

void tool_options(const struct tool_cli *cli, int argc, char **argv, struct tool_common *common)
{
	struct option longopts[N_COMMON + MAX_OPTIONS + 1];
	char shortopts[2 * MAX_OPTIONS + 2] = "h";
	size_t nlong = N_COMMON, nshort = 1, n = 0;
	int c;

	memset(common, 0, sizeof(*common));
	common->argc = argc;
	common->argv = keep((size_t)argc + 1, sizeof(*common->argv));
	memcpy(common->argv, argv, (size_t)argc * sizeof(*argv));
	memcpy(longopts, common_longopts, sizeof(common_longopts));
	for (; cli->options[n].key || cli->options[n].name; n++) {
		const struct tool_option *o = &cli->options[n];
		int has_arg = o->arg == TOOL_ARG_FLAG ? no_argument : required_argument;

		if (n == MAX_OPTIONS)
			tool_die("%s has more than %d options", cli->name, MAX_OPTIONS);
		if (o->key) {
			shortopts[nshort++] = (char)o->key;
			if (has_arg)
				shortopts[nshort++] = ':';
		}
		if (o->name)
			longopts[nlong++] = (struct option){ o->name, has_arg, NULL,
							     o->key ? o->key : OPT_TOOL + (int)n };
	}
	shortopts[nshort] = '\0';
	longopts[nlong] = (struct option){ NULL, 0, NULL, 0 };

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		size_t i;

		if (common_option(c, optarg, common))
			continue;
		if (c == 'h' || c == OPT_HELP) {
			usage(cli, stdout);
			exit(0);
		}
		for (i = 0; i < n; i++)
			if (c == (cli->options[i].key ? cli->options[i].key : OPT_TOOL + (int)i))
				break;
		if (i == n) {
			usage(cli, stderr);
			exit(TOOL_EXIT_USAGE);
		}
		set_value(&cli->options[i], optarg, argc);
	}
	if (optind < argc)
		tool_usage_error("unexpected argument %s (see -h)", argv[optind]);
	/*
	 * A sweep's child gets the parent's arguments, then the routine it runs as a later --impl,
	 * which wins; its "all", however it was spelt (getopt takes "--imp" too), must not start
	 * a sweep of its own: alone, it is the run of the library's own choice.
	 */
	if (tool_sweep_fd >= 0 && tool_impl_is_all(common))
		common->impl = NULL;
	if (tool_impl_is_all(common) && cli->no_sweep)
		tool_usage_error("%s", cli->no_sweep);
	set_env(common);
}

int tool_impl_is_all(const struct tool_common *o)
{
	return o->impl && !strcmp(o->impl, "all");
}

/* SPDX-License-Identifier: MIT */
/*
 * --impl all: run the tool once per copy routine and set the results side by side. The library
 * chooses its routines once per process (at gdr_open), so each routine gets a fresh process: the
 * tool re-executes itself with GDRCOPY_COPY_IMPL set and reads the child's results from a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common.h"

const char *const tool_impl_candidates[] = {
	"generic", "memcpy",
#if defined(__x86_64__) || defined(__i386__)
	"sse", "sse41", "avx2", "avx512", "movdir64b", "rep_movsb",
#elif defined(__aarch64__)
	"stp", "neon",
#elif defined(__powerpc64__)
	"power",
#endif
	NULL,
};

int tool_cpu_can_run(const char *impl, char *why, size_t len)
{
	int ok = 1;

#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	__builtin_cpu_init();
	if (!strcmp(impl, "sse"))
		ok = __builtin_cpu_supports("sse");
	else if (!strcmp(impl, "sse41"))
		ok = __builtin_cpu_supports("sse4.1");
	else if (!strcmp(impl, "avx2"))
		ok = __builtin_cpu_supports("avx2");
	else if (!strcmp(impl, "avx512"))
		ok = __builtin_cpu_supports("avx512f");
	else if (!strcmp(impl, "movdir64b"))
		ok = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 28));
#endif
	if (!ok)
		snprintf(why, len, "this CPU cannot run %s", impl);
	return ok;
}

/* argv without "--impl all" / "--impl=all", plus --impl NAME (not for auto) and --sweep-fd FD. */
static char **child_argv(int argc, char **argv, const char *impl, const char *fd)
{
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	int n = 0;

	if (!v)
		tool_die("out of memory");
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--impl=all"))
			continue;
		if (!strcmp(argv[i], "--impl") && i + 1 < argc && !strcmp(argv[i + 1], "all")) {
			i++;
			continue;
		}
		v[n++] = argv[i];
	}
	if (strcmp(impl, "auto")) {
		v[n++] = (char *)"--impl";
		v[n++] = (char *)impl;
	}
	v[n++] = (char *)"--sweep-fd";
	v[n++] = (char *)fd;
	v[n] = NULL;
	return v;
}

static void add_row(struct sweep_run *run, const struct sweep_row *row)
{
	struct sweep_row *rows = realloc(run->rows, (run->nrows + 1) * sizeof(*rows));

	if (!rows)
		tool_die("out of memory");
	rows[run->nrows++] = *row;
	run->rows = rows;
}

/* One line from a child: impl, row, error or warn. */
static void parse_line(struct sweep_run *run, char *line, int *to_ok, int *from_ok)
{
	struct sweep_row row;
	char dir[8];

	if (!strncmp(line, "impl ", 5)) {
		if (sscanf(line + 5, "%23s %23s", run->to_impl, run->from_impl) != 2)
			return;
		if (!strcmp(run->impl, "auto"))
			return;
		*to_ok = !strcmp(run->to_impl, run->impl);
		*from_ok = !strcmp(run->from_impl, run->impl);
	} else if (!strncmp(line, "row ", 4)) {
		memset(&row, 0, sizeof(row));
		if (sscanf(line + 4, "%47s %7s %zu %lf %lf", row.test, dir, &row.size, &row.v1,
			   &row.v2) != 5)
			return;
		if (!strcmp(dir, "to") ? *to_ok : *from_ok)
			add_row(run, &row);
	} else if (!strncmp(line, "error ", 6)) {
		snprintf(run->why, sizeof(run->why), "%.255s", line + 6);
	} else if (!strncmp(line, "warn ", 5)) {
		fprintf(stderr, "%s: %s: warning: %s\n", program_invocation_short_name, run->impl,
			line + 5);
	}
}

static void run_child(int argc, char **argv, struct sweep_run *run)
{
	int fds[2], status, to_ok = 1, from_ok = 1, devnull;
	char fdstr[16], buf[4096], *line;
	size_t used = 0;
	ssize_t got;
	pid_t pid;

	if (pipe(fds))
		tool_die("pipe failed: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tool_die("fork failed: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		snprintf(fdstr, sizeof(fdstr), "%d", fds[1]);
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		unsetenv("GDRCOPY_COPY_IMPL");
		execv("/proc/self/exe", child_argv(argc, argv, run->impl, fdstr));
		dprintf(fds[1], "error cannot re-execute /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		got = read(fds[0], buf + used, sizeof(buf) - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;
		buf[used] = '\0';
		while ((line = memchr(buf, '\n', used)) != NULL) {
			size_t len = (size_t)(line - buf) + 1;

			*line = '\0';
			parse_line(run, buf, &to_ok, &from_ok);
			memmove(buf, buf + len, used - len);
			used -= len;
		}
		if (used == sizeof(buf) - 1)
			used = 0;	/* an absurdly long line: drop it */
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!run->why[0] && WIFSIGNALED(status))
		snprintf(run->why, sizeof(run->why), "killed by signal %d", WTERMSIG(status));
	else if (!run->why[0] && WEXITSTATUS(status))
		snprintf(run->why, sizeof(run->why), "exited with status %d", WEXITSTATUS(status));
	if (run->why[0])
		return;
	if (!run->to_impl[0] || !strcmp(run->to_impl, "?")) {
		snprintf(run->why, sizeof(run->why), "this libgdrapi does not report its copy "
			 "routines (GDR_ATTR_EXT_COPY_TO_IMPL), so a forced routine cannot be checked");
		return;
	}
	if (!to_ok && !from_ok) {
		snprintf(run->why, sizeof(run->why), "the library used %s / %s instead",
			 run->to_impl, run->from_impl);
		return;
	}
	run->ran = 1;
}

struct sweep_run *tool_sweep(int argc, char **argv, size_t *n)
{
	size_t count = 1;
	struct sweep_run *runs;

	while (tool_impl_candidates[count - 1])
		count++;
	runs = calloc(count, sizeof(*runs));
	if (!runs)
		tool_die("out of memory");
	for (size_t i = 0; i < count; i++) {
		runs[i].impl = i ? tool_impl_candidates[i - 1] : "auto";
		if (i && !tool_cpu_can_run(runs[i].impl, runs[i].why, sizeof(runs[i].why)))
			continue;
		run_child(argc, argv, &runs[i]);
	}
	*n = count;
	return runs;
}

void tool_sweep_free(struct sweep_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(runs[i].rows);
	free(runs);
}

static const struct sweep_row *find_row(const struct sweep_run *run, const char *test, size_t size)
{
	for (size_t i = 0; i < run->nrows; i++)
		if (run->rows[i].size == size && !strcmp(run->rows[i].test, test))
			return &run->rows[i];
	return NULL;
}

/* Every distinct test name, in the order the runs first report them. */
static size_t list_tests(const struct sweep_run *runs, size_t n, const char *tests[], size_t max)
{
	size_t nt = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; r < runs[i].nrows; r++) {
			size_t t;

			for (t = 0; t < nt; t++)
				if (!strcmp(tests[t], runs[i].rows[r].test))
					break;
			if (t == nt && nt < max)
				tests[nt++] = runs[i].rows[r].test;
		}
	}
	return nt;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The sizes any run reported for test, sorted; *n their count. Free the result. */
static size_t *test_sizes(const struct sweep_run *runs, size_t n, const char *test, size_t *count)
{
	size_t total = 0, k = 0, *sizes;

	for (size_t i = 0; i < n; i++)
		total += runs[i].nrows;
	sizes = calloc(total ? total : 1, sizeof(*sizes));
	if (!sizes)
		tool_die("out of memory");
	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < runs[i].nrows; r++)
			if (!strcmp(runs[i].rows[r].test, test))
				sizes[k++] = runs[i].rows[r].size;
	qsort(sizes, k, sizeof(*sizes), cmp_size);
	*count = 0;
	for (size_t i = 0; i < k; i++)
		if (!*count || sizes[*count - 1] != sizes[i])
			sizes[(*count)++] = sizes[i];
	return sizes;
}

static void print_table(const struct sweep_run *runs, size_t n, const char *test,
			const char *value, int higher_better)
{
	size_t ns, *sizes = test_sizes(runs, n, test, &ns);

	printf("\n%s: %s by copy routine (auto = the library's own choice)\n", test, value);
	printf("%-10s", "Size(B)");
	for (size_t i = 0; i < n; i++)
		if (runs[i].nrows)
			printf(" %10s", runs[i].impl);
	printf(" %10s %9s\n", "best", "auto/best");
	for (size_t s = 0; s < ns; s++) {
		const struct sweep_row *x, *a = find_row(&runs[0], test, sizes[s]);
		const char *best = NULL;
		double best_v = 0;

		printf("%-10zu", sizes[s]);
		for (size_t i = 0; i < n; i++) {
			if (!runs[i].nrows)
				continue;
			x = find_row(&runs[i], test, sizes[s]);
			if (!x) {
				printf(" %10s", "-");
				continue;
			}
			printf(" %10.4f", x->v1);
			if (i && (!best || (higher_better ? x->v1 > best_v : x->v1 < best_v))) {
				best = runs[i].impl;
				best_v = x->v1;
			}
		}
		if (best && a && a->v1 > 0 && best_v > 0)
			printf(" %10s %9.2f\n", best, higher_better ? best_v / a->v1 : a->v1 / best_v);
		else
			printf(" %10s %9s\n", best ? best : "-", "-");
	}
	free(sizes);
}

void tool_sweep_print(const struct sweep_run *runs, size_t n, const char *value,
		      int higher_better, const char *csv_header)
{
	const char *tests[16];
	size_t nt;

	/* Without the library's own choice there is nothing to compare with: say why, once. */
	if (!runs[0].ran)
		tool_die("%s", runs[0].why);
	for (size_t i = 0; i < n; i++) {
		if (runs[i].ran)
			continue;
		fprintf(tool_csv ? stderr : stdout, "routine %s: skipped: %s\n", runs[i].impl,
			runs[i].why);
	}
	if (!tool_csv) {
		for (size_t i = 0; i < n; i++)
			if (runs[i].ran)
				printf("routine %s: library used %s to GPU, %s from GPU\n",
				       runs[i].impl, runs[i].to_impl, runs[i].from_impl);
	}
	if (tool_csv) {
		printf("%s\n", csv_header);
		for (size_t i = 0; i < n; i++)
			for (size_t r = 0; r < runs[i].nrows; r++)
				printf("%s,%s,%zu,%.4f,%.6g\n", runs[i].impl, runs[i].rows[r].test,
				       runs[i].rows[r].size, runs[i].rows[r].v1,
				       runs[i].rows[r].v2);
		return;
	}
	nt = list_tests(runs, n, tests, sizeof(tests) / sizeof(tests[0]));
	for (size_t t = 0; t < nt; t++)
		print_table(runs, n, tests[t], value, higher_better);
	printf("\nauto/best: how many times the automatic choice is slower than the best routine "
	       "at that size (1.00: it is the best). A forced routine covers the sizes the library "
	       "lets it (GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=2 logs where it keeps its own "
	       "choice)\n");
}

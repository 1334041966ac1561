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

#include "common.h"

int tool_sweep_fd = -1;

struct sweep_row {
	char test[48];
	size_t size;
	double v1, v2;
};

struct sweep_run {
	const char *impl;	/* "auto" or a routine name */
	int ran;		/* rows are valid */
	int failed;		/* it did not run for a failure (why), not for a skip */
	char why[256];		/* why not */
	char to_impl[24], from_impl[24];	/* what the library reported */
	int impls;		/* the routines it says this CPU runs (GDR_ATTR_EXT_COPY_IMPLS) */
	struct sweep_row *rows;
	size_t nrows;
};

void tool_sweep_line(const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(tool_sweep_fd, line, (size_t)n) != n)
		_exit(3);	/* the parent is gone: nobody is left to report to */
}

/*
 * argv, then --impl NAME (not for auto) and --sweep-fd FD. The parent's own --impl all stays: a
 * later --impl wins, and a child takes "all" for the library's own choice (tool_options).
 */
static char **child_argv(int argc, char **argv, const char *impl, const char *fd)
{
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	int n = 0;

	if (!v)
		tool_die("out of memory");
	for (int i = 0; i < argc; i++)
		v[n++] = argv[i];
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
		if (sscanf(line + 5, "%23s %23s %d", run->to_impl, run->from_impl, &run->impls) != 3)
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
	char fdstr[16], buf[4096], *line, **child_args;
	size_t used = 0;
	ssize_t got;
	pid_t pid;

	if (pipe(fds))
		tool_die("pipe failed: %s", strerror(errno));
	/* Made before the fork, so that the child allocates nothing: it only execs or exits. */
	snprintf(fdstr, sizeof(fdstr), "%d", fds[1]);
	child_args = child_argv(argc, argv, run->impl, fdstr);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tool_die("fork failed: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		unsetenv("GDRCOPY_COPY_IMPL");
		execv("/proc/self/exe", child_args);
		dprintf(fds[1], "error cannot re-execute /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	free(child_args);
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
	/*
	 * A routine the library would not run (2) or that this machine cannot measure (77) is a
	 * skip; any other end (its copies moved the wrong data, a crash) fails the sweep, as it
	 * fails the tool run with that routine alone.
	 */
	run->failed = WIFSIGNALED(status) ||
		      (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
		       WEXITSTATUS(status) != TOOL_EXIT_USAGE && WEXITSTATUS(status) != TOOL_EXIT_SKIP);
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

/* The run of the library's own choice, then one per routine it says this CPU runs. */
static struct sweep_run *run_all(const struct tool_common *common, size_t *n)
{
	struct sweep_run *runs = calloc(GDR_COPY_IMPL_COUNT + 1, sizeof(*runs));
	size_t count = 1;

	if (!runs)
		tool_die("out of memory");
	runs[0].impl = "auto";
	run_child(common->argc, common->argv, &runs[0]);
	for (int id = 0; id < GDR_COPY_IMPL_COUNT; id++) {
		if (!(runs[0].impls & 1 << id))
			continue;
		runs[count].impl = gdr_ext_copy_impl_name(id);
		run_child(common->argc, common->argv, &runs[count++]);
	}
	*n = count;
	return runs;
}

static void free_runs(struct sweep_run *runs, size_t n)
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

static void print_runs(const struct sweep_run *runs, size_t n, const char *value,
		       int higher_better, const char *csv_header)
{
	const char *tests[16];
	size_t nt;

	for (size_t i = 0; i < n; i++) {
		if (runs[i].ran)
			continue;
		fprintf(tool_csv ? stderr : stdout, "routine %s: %s: %s\n", runs[i].impl,
			runs[i].failed ? "failed" : "skipped", runs[i].why);
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

int tool_sweep(const struct tool_common *common, const char *value, int higher_better,
	       const char *csv_header)
{
	size_t n, failed = 0;
	struct sweep_run *runs;

	/* A sweep's child sweeping again would re-execute itself without end. */
	if (tool_sweep_fd >= 0)
		tool_die("--impl all inside a run of --impl all (--sweep-fd is for those runs only: "
			 "leave it out)");
	runs = run_all(common, &n);

	/* Without the library's own choice there is nothing to compare with: say why, once. */
	if (!runs[0].ran)
		tool_die("%s", runs[0].why);
	print_runs(runs, n, value, higher_better, csv_header);
	for (size_t i = 0; i < n; i++)
		failed += runs[i].failed;
	free_runs(runs, n);
	if (failed)
		tool_die("%zu of %zu runs failed (the \"routine NAME: failed\" lines say why)", failed,
			 n);
	return 0;
}

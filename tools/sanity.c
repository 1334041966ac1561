/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_sanity's runner: options, the probe of the platform, one forked child per case in its
 * own process group (killed as a group afterwards), GDRCopy's "&&&&" lines and summary, and the
 * per-case result lines for tests/run-tests.sh.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sanity.h"

/* Shared with every child: the platform (written by the probe) and the last case's reason. */
struct sanity_shared {
	struct sanity_platform plat;
	char reason[2 * GDR_EXT_ERRORS_MAX];	/* room for the library's reasons */
};

static struct sanity_shared *shm;
const struct sanity_platform *sanity_plat;

#define CASE_TIMEOUT_S 120

static void set_reason(const char *fmt, va_list ap)
{
	char msg[sizeof(shm->reason)];

	/* The first reason wins: a failing grandchild explains its parent's failure. */
	if (shm->reason[0])
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	memcpy(shm->reason, msg, sizeof(msg));
}

void sanity_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(fmt, ap);
	va_end(ap);
	fflush(NULL);
	_exit(1);
}

void sanity_waive(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(fmt, ap);
	va_end(ap);
	fflush(NULL);
	_exit(SANITY_EXIT_WAIVED);
}

void sanity_log(const char *fmt, ...)
{
	va_list ap;

	if (!sanity_plat || !sanity_plat->verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * In a child: learn the backend and the device's attributes. Exits 0, or with shm->reason set
 * 1, or TOOL_EXIT_USAGE when the library refused --impl (the child's gdr_open is the first).
 */
static void probe_child(struct sanity_platform *p)
{
	const char *refused;
	struct tool_cuda cu;
	char why[256];
	gdr_t g;

	if (tool_cuda_try_init(&cu, p->dev_id, why, sizeof(why)) != CUDA_SUCCESS) {
		snprintf(shm->reason, sizeof(shm->reason), "%s", why);
		_exit(1);
	}
	cuDeviceGetAttribute(&p->coherent,
			     CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, cu.dev);
	cuDeviceGetAttribute(&p->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu.dev);
	cuDeviceGetAttribute(&p->compute_mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, cu.dev);
	cuDeviceGetAttribute(&p->vmm_rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
			     cu.dev);
	tool_library_reason();	/* forget what earlier calls left */
	g = gdr_open();
	if (!g) {
		snprintf(shm->reason, sizeof(shm->reason), "%s", tool_gdr_open_failure());
		_exit(1);
	}
	refused = tool_impl_refused();
	if (refused) {
		snprintf(shm->reason, sizeof(shm->reason), "%s", refused);
		_exit(TOOL_EXIT_USAGE);
	}
	p->backend = tool_backend(g);
	gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &p->persistent);
	gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &p->forcepci);
	gdr_close(g);
	tool_cuda_fini(&cu);
	_exit(0);
}

/* The probe child's exit status, with shm->reason set when it is not 0. */
static int probe(struct sanity_platform *p)
{
	int status;
	pid_t pid;

	shm->reason[0] = '\0';
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tool_die("fork failed: %s", strerror(errno));
	if (pid == 0)
		probe_child(p);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || shm->reason[0]))
		return WEXITSTATUS(status);
	snprintf(shm->reason, sizeof(shm->reason), "the probe process died (status 0x%x)", status);
	return 1;
}

enum verdict { PASSED, FAILED, WAIVED };

static enum verdict run_case(const struct sanity_case *tc)
{
	double deadline = tool_now_us() + CASE_TIMEOUT_S * 1e6;
	struct timespec tick = { 0, 1000000 };
	int status = 0;
	pid_t pid, got;

	shm->reason[0] = '\0';
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tool_die("fork failed: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		tc->fn();
		fflush(NULL);
		_exit(0);
	}
	setpgid(pid, pid);	/* also here: the group must exist before killpg, whoever runs first */
	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && tool_now_us() < deadline)
		nanosleep(&tick, NULL);
	if (got == 0) {
		killpg(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(shm->reason, sizeof(shm->reason), "timed out after %d s", CASE_TIMEOUT_S);
		return FAILED;
	}
	killpg(pid, SIGKILL);	/* whatever the case left running */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return PASSED;
	if (WIFEXITED(status) && WEXITSTATUS(status) == SANITY_EXIT_WAIVED)
		return WAIVED;
	if (!shm->reason[0]) {
		if (WIFSIGNALED(status))
			snprintf(shm->reason, sizeof(shm->reason), "killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(shm->reason, sizeof(shm->reason), "exited with status %d",
				 WEXITSTATUS(status));
	}
	return FAILED;
}

static int cmp_case(const void *a, const void *b)
{
	return strcmp(((const struct sanity_case *)a)->name, ((const struct sanity_case *)b)->name);
}

/* Both tables, sorted by name; *n their count. */
static struct sanity_case *catalogue(size_t *n)
{
	const struct sanity_case *tables[] = { sanity_cases_basic, sanity_cases_invalidation };
	static struct sanity_case all[64];
	size_t count = 0;

	for (size_t t = 0; t < 2; t++) {
		for (const struct sanity_case *c = tables[t]; c->name; c++) {
			if (count == sizeof(all) / sizeof(all[0]))
				tool_die("more than %zu test cases: make the catalogue bigger", count);
			all[count++] = *c;
		}
	}
	qsort(all, count, sizeof(*all), cmp_case);
	*n = count;
	return all;
}

struct outcome {
	const char *name;
	enum verdict v;
	char reason[sizeof(((struct sanity_shared *)0)->reason)];
};

/* GDRCopy's lists hold names alone, and scripts read them so; -v adds each test's reason. */
static void print_list(const char *title, const struct outcome *o, size_t n, enum verdict v,
		       int verbose)
{
	int any = 0;

	for (size_t i = 0; i < n; i++) {
		if (o[i].v != v)
			continue;
		if (!any)
			printf("\nList of %s tests:\n", title);
		any = 1;
		if (verbose && o[i].reason[0])
			printf("    %s: %s\n", o[i].name, o[i].reason);
		else
			printf("    %s\n", o[i].name);
	}
}

/* -l: the catalogue, the tests apart from the extended ones. */
static void print_catalogue(const struct sanity_case *cases, size_t n)
{
	printf("List of tests:\n");
	for (size_t i = 0; i < n; i++)
		if (!cases[i].extended)
			printf("    %s\n", cases[i].name);
	printf("List of extended tests:\n");
	for (size_t i = 0; i < n; i++)
		if (cases[i].extended)
			printf("    %s\n", cases[i].name);
}

/* Die unless every -t names a test. */
static void check_picked(const struct sanity_case *cases, size_t n, const struct tool_list *picked)
{
	for (size_t p = 0; p < picked->n; p++) {
		size_t i;

		for (i = 0; i < n && strcmp(cases[i].name, picked->v[p]); i++)
			;
		if (i == n)
			tool_usage_error("-t %s: no such test (-l lists them)", picked->v[p]);
	}
}

/* Whether case c runs: every -t named, or else the tests (and with -e the extended ones). */
static int selected(const struct sanity_case *c, const struct tool_list *picked, int extended)
{
	int want = !picked->n ? (!c->extended || extended) : 0;

	for (size_t p = 0; p < picked->n; p++)
		want |= !strcmp(picked->v[p], c->name);
	return want;
}

/* Run case c into o, and say how it went: as a CSV row, a "&&&&" line, a results line. */
static void run_and_report(const struct sanity_case *c, struct outcome *o, int verbose,
			   FILE *results)
{
	static const char *const verdict_name[] = { "PASSED", "FAILED", "WAIVED" };
	static const char *const result_word[] = { "pass", "fail", "skip" };

	if (verbose && !tool_csv)
		printf("&&&& RUNNING %s\n", c->name);
	o->name = c->name;
	o->v = run_case(c);
	if (o->v != PASSED)
		memcpy(o->reason, shm->reason, sizeof(o->reason));
	if (tool_csv)
		printf("%s,%s,\"%s\"\n", o->name, result_word[o->v], o->reason);
	else if (verbose || o->v == FAILED)
		printf("&&&& %s %s%s%s\n", verdict_name[o->v], o->name,
		       o->reason[0] ? "\n     reason: " : "", o->reason);
	if (results) {
		fprintf(results, "%s %s%s%s\n", result_word[o->v], o->name,
			o->reason[0] ? " " : "", o->reason);
		fflush(results);
	}
}

/* The probe's findings, shared with every case; dies when the platform cannot run any case. */
static void probe_platform(int dev_id, int verbose)
{
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		tool_die("mmap of the shared page failed: %s", strerror(errno));
	memset(shm, 0, sizeof(*shm));
	shm->plat.dev_id = dev_id;
	shm->plat.verbose = verbose;
	switch (probe(&shm->plat)) {
	case 0:
		break;
	case TOOL_EXIT_USAGE:
		tool_usage_error("%s", shm->reason);
	default:
		tool_die("%s", shm->reason);
	}
	sanity_plat = &shm->plat;
}

int main(int argc, char **argv)
{
	int verbose = 0, no_summary = 0, list = 0, extended = 0, dev_id = 0;
	const char *results_path = getenv("GDR_TEST_RESULTS");
	struct tool_list picked = { NULL, 0 };
	const struct tool_option options[] = {
		{ 'v', NULL, TOOL_ARG_FLAG, &verbose, 0, 0, NULL,
		  "  -v        verbose: print &&&& lines and each case's details\n" },
		{ 's', NULL, TOOL_ARG_FLAG, &no_summary, 0, 0, NULL, "  -s        no summary\n" },
		{ 'l', NULL, TOOL_ARG_FLAG, &list, 0, 0, NULL,
		  "  -l        list the tests and the extended tests\n" },
		{ 't', NULL, TOOL_ARG_LIST, &picked, 0, 0, NULL,
		  "  -t NAME   run only this test (repeatable)\n" },
		{ 'd', NULL, TOOL_ARG_INT, &dev_id, 0, 1024, NULL, TOOL_DEVICE_USAGE },
		{ 'e', NULL, TOOL_ARG_FLAG, &extended, 0, 0, NULL,
		  "  -e        also run the extended tests\n" },
		{ 0, "results", TOOL_ARG_STRING, &results_path, 0, 0, NULL,
		  "  --results FILE   write \"pass|fail|skip NAME [reason]\" lines (default: "
		  "$GDR_TEST_RESULTS)\n" },
		{ 0, NULL, TOOL_ARG_FLAG, NULL, 0, 0, NULL, NULL },
	};
	const struct tool_cli cli = {
		"gdrcopy_sanity", options,
		"--impl all is for copylat and copybw; give sanity one routine",
	};
	size_t ncases, nsel = 0, counts[3] = { 0 };
	struct sanity_case *cases = catalogue(&ncases);
	struct tool_common common;
	struct outcome *out;
	FILE *results = NULL;

	tool_options(&cli, argc, argv, &common);
	if (list) {
		print_catalogue(cases, ncases);
		return 0;
	}
	check_picked(cases, ncases, &picked);
	probe_platform(dev_id, verbose);
	if (results_path && *results_path) {
		results = fopen(results_path, "a");
		if (!results)
			tool_die("cannot open --results %s: %s", results_path, strerror(errno));
	}
	/* Not a line of GDRCopy's, whose first line scripts may read: a detail, as -v's are. */
	if (tool_csv)
		printf("test,result,reason\n");
	else if (verbose)
		printf("Backend: %s; persistent mappings: %d; FORCE_PCIE supported: %d; "
		       "coherent platform: %d; compute capability major: %d\n",
		       tool_backend_name(sanity_plat->backend), sanity_plat->persistent,
		       sanity_plat->forcepci, sanity_plat->coherent, sanity_plat->cc_major);
	out = calloc(ncases, sizeof(*out));
	if (!out)
		tool_die("out of memory");
	for (size_t i = 0; i < ncases; i++) {
		if (!selected(&cases[i], &picked, extended))
			continue;
		run_and_report(&cases[i], &out[nsel], verbose, results);
		counts[out[nsel++].v]++;
	}
	if (!no_summary && !tool_csv) {
		printf("\nTotal: %zu, Passed: %zu, Failed: %zu, Waived: %zu\n", nsel, counts[PASSED],
		       counts[FAILED], counts[WAIVED]);
		print_list("failed", out, nsel, FAILED, verbose);
		print_list("waived", out, nsel, WAIVED, verbose);
	}
	if (results)
		fclose(results);
	free(out);
	return counts[FAILED] ? EXIT_FAILURE : EXIT_SUCCESS;
}

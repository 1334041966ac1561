/* SPDX-License-Identifier: MIT */
/* The failing-calls loop: which call fails, what must stay as it was, the public calls. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "failing_calls.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"

#define PIN_SIZE (256 * 1024UL)
#define MAX_CALLS 200		/* more than any public call makes */

/* ---- which call fails ---- */

/* libgdrapi's code, from its program headers: calls returning there are the library's. */
static uintptr_t library_lo, library_hi;

static int find_library(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (!strstr(info->dlpi_name, "libgdrapi"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!library_lo || lo < library_lo)
			library_lo = lo;
		if (hi > library_hi)
			library_hi = hi;
	}
	return 1;
}

void failing_calls_init(void)
{
	dl_iterate_phdr(find_library, NULL);
	if (!library_hi) {
		printf("libgdrapi is not loaded in this program\n");
		exit(TEST_FAIL);
	}
	/* The log's lines are the reasons; the run's output stays short without them on stderr. */
	unsetenv("GDRCOPY_ENABLE_LOGGING");
}

bool failing_from_library(const void *return_address)
{
	uintptr_t a = (uintptr_t)return_address;

	return a >= library_lo && a < library_hi;
}

/* Only the thread calling the library counts and fails its calls. */
static struct {
	bool armed;
	long calls;		/* the library's calls seen since armed */
	long fail_at;		/* the one to fail, counted from 1 */
	unsigned int way;	/* which of its ways to fail it in */
	unsigned int ways;	/* how many it has, once failed */
	const char *failed;	/* its name, once failed */
	const char *reason;	/* what the log must say, or NULL */
	int err;		/* what the public call must return, or 0 */
} inj;

bool failing_call(const char *name, const void *return_address)
{
	if (!inj.armed || (return_address && !failing_from_library(return_address)))
		return false;
	if (++inj.calls != inj.fail_at)
		return false;
	inj.failed = name;
	inj.ways = 1;
	return true;
}

unsigned int failing_way(unsigned int n)
{
	inj.ways = n;
	return inj.way < n ? inj.way : n - 1;
}

void failing_expect(const char *reason, int err)
{
	inj.reason = reason;
	inj.err = err;
}

void *failing_next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "no %s after this program: %s\n", name, dlerror());
		abort();
	}
	return p;
}

/* ---- what a failure must leave as it was ---- */

static const struct failing_backend *backend;

/* Shared mappings: GPU memory, the drivers' and the library's mappings of it. */
static int shared_mapping_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's')
			n++;
	fclose(f);
	return n;
}

#define MAX_COUNTERS 16

struct mark {
	long fds, shared_maps, blocks;
	long counts[MAX_COUNTERS];	/* the backend's counters, in order */
};

static void mark_take(struct mark *m)
{
	m->fds = test_fd_count();
	m->shared_maps = shared_mapping_count();
	m->blocks = failing_library_blocks();
	for (int i = 0; i < MAX_COUNTERS && backend->counters[i].name; i++)
		m->counts[i] = backend->counters[i].count();
}

static bool same(const char *what, const char *name, long before, long now)
{
	if (before == now)
		return true;
	test_fail("%s: %s was %ld, is %ld", what, name, before, now);
	return false;
}

/* Whether now is as before; says what differs. */
static bool mark_same(const struct mark *before, const char *what)
{
	struct mark now;

	mark_take(&now);
	if (!same(what, "descriptors", before->fds, now.fds) ||
	    !same(what, "shared mappings", before->shared_maps, now.shared_maps) ||
	    !same(what, "the library's blocks", before->blocks, now.blocks))
		return false;
	for (int i = 0; i < MAX_COUNTERS && backend->counters[i].name; i++)
		if (!same(what, backend->counters[i].name, before->counts[i], now.counts[i]))
			return false;
	return true;
}

/* Whether the process has made, since before, an object it keeps. */
static bool kept_made(const struct mark *before)
{
	struct mark now;

	mark_take(&now);
	for (int i = 0; i < MAX_COUNTERS && backend->counters[i].name; i++)
		if (backend->counters[i].kept_by_process && now.counts[i] > before->counts[i])
			return true;
	return false;
}

/* ---- the calls under test ---- */

/* The buffer and how far the library has got with it. */
static struct {
	uint64_t dptr;		/* the pin's first byte */
	gdr_t g;
	gdr_mh_t mh;
	void *map;		/* the mapping, from info.va */
	uint64_t va;		/* info.va */
	bool pinned, mapped;
} s;

enum stage { CLOSED, OPENED, PINNED, MAPPED };

static int do_open(void)
{
	s.g = gdr_open();
	return s.g ? 0 : ENODEV;
}

static int do_pin(void)
{
	int ret = gdr_pin_buffer_v2(s.g, s.dptr, PIN_SIZE, 0, &s.mh);

	s.pinned = !ret;
	return ret;
}

/* Where the pin starts (info.va), kept for after it is gone; asked with no call failing. */
static int remember_va(void)
{
	gdr_info_v2_t info;

	CHECK_OK(gdr_get_info_v2(s.g, s.mh, &info));
	s.va = info.va;
	return TEST_PASS;
}

static int do_map(void)
{
	int ret = gdr_map(s.g, s.mh, &s.map, PIN_SIZE);

	s.mapped = !ret;
	return ret;
}

static int do_unmap(void)
{
	int ret = gdr_unmap(s.g, s.mh, s.map, PIN_SIZE);

	s.mapped = ret != 0;
	return ret;
}

static int do_unpin(void)
{
	int ret = gdr_unpin_buffer(s.g, s.mh);

	if (!ret)
		s.pinned = s.mapped = false;
	return ret;
}

/* gdr_close always frees, whatever it returns. */
static int do_close(void)
{
	int ret = gdr_close(s.g);

	s.g = NULL;
	s.pinned = s.mapped = false;
	return ret;
}

static int do_info(void)
{
	gdr_info_v2_t v2;
	gdr_info_t v1;
	int ret = gdr_get_info_v2(s.g, s.mh, &v2);

	return ret ? ret : gdr_get_info(s.g, s.mh, &v1);
}

static int do_callback_flag(void)
{
	int flag = -1;
	int ret = gdr_get_callback_flag(s.g, s.mh, &flag);

	return ret ? ret : flag == 0 || flag == 1 ? 0 : ERANGE;
}

/* Every attribute, GDRCopy's and this library's; the first error. */
static int do_attributes(void)
{
	static const gdr_attr_t attrs[] = {
		GDR_ATTR_USE_PERSISTENT_MAPPING, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE,
		GDR_ATTR_USING_DMA_BUF_MMAP, GDR_ATTR_EXT_BACKEND, GDR_ATTR_EXT_COPY_TO_IMPL,
		GDR_ATTR_EXT_COPY_FROM_IMPL, GDR_ATTR_EXT_COPY_IMPLS,
	};

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int v, ret = gdr_get_attribute(s.g, attrs[i], &v);

		if (ret)
			return ret;
	}
	return 0;
}

static int do_stage(enum stage to)
{
	int ret = 0;

	if (to >= OPENED && !s.g)
		ret = do_open();
	if (!ret && to >= PINNED && !s.pinned) {
		ret = do_pin();
		if (!ret && remember_va() != TEST_PASS)
			ret = EIO;
	}
	if (!ret && to >= MAPPED && !s.mapped)
		ret = do_map();
	return ret;
}

static void teardown(void)
{
	if (s.g)
		do_close();
}

/* Through the mapping both ways, checked against the GPU memory. */
static int check_data(unsigned int seed)
{
	uint8_t out[4096], back[4096];
	uint8_t *gpu = backend->gpu_bytes(s.dptr);
	uint8_t *at = (uint8_t *)s.map + (s.dptr - s.va) + 100;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(seed * 37 + i * 11);
	CHECK_OK(gdr_copy_to_mapping(s.mh, at, out, sizeof(out)));
	CHECK(!memcmp(gpu + 100, out, sizeof(out)), "the copy did not reach the GPU memory");
	memset(back, 0, sizeof(back));
	CHECK_OK(gdr_copy_from_mapping(s.mh, back, at, sizeof(back)));
	CHECK(!memcmp(back, out, sizeof(back)), "the copy back differs");
	return TEST_PASS;
}

struct op {
	const char *name;
	enum stage from;	/* where the call starts */
	int (*call)(void);
};

/*
 * The calls that build what the process keeps (CUDA, the Vulkan instance and device): each of
 * their failures is tried in a new process, and what they built stays after they succeeded.
 */
static const struct op first_ops[] = {
	{ "the process's first gdr_open", CLOSED, do_open },
	{ "the process's first gdr_pin_buffer_v2", OPENED, do_pin },
};

/* The calls a process repeats. */
static const struct op ops[] = {
	{ "gdr_open", CLOSED, do_open },
	{ "gdr_pin_buffer_v2", OPENED, do_pin },
	{ "gdr_get_info", PINNED, do_info },
	{ "gdr_get_callback_flag", PINNED, do_callback_flag },
	{ "gdr_get_attribute", OPENED, do_attributes },
	{ "gdr_map", PINNED, do_map },
	{ "gdr_unmap", MAPPED, do_unmap },
	{ "gdr_unpin_buffer", PINNED, do_unpin },
	{ "gdr_unpin_buffer of a mapped pin", MAPPED, do_unpin },
	{ "gdr_close", MAPPED, do_close },
};

/* What a failure must show: an error, the failed call's own told on, and a reason logged. */
static int check_failure(const char *what, int ret, bool public_errno)
{
	char errors[GDR_EXT_ERRORS_MAX];

	CHECK(ret, "%s: returned 0", what);
	CHECK(gdr_ext_take_errors(errors, sizeof(errors)) > 0,
	      "%s: returned %d and logged no error", what, ret);
	CHECK(!inj.reason || strstr(errors, inj.reason),
	      "%s: the reason does not name the failed call's error (%s): %s", what, inj.reason,
	      errors);
	CHECK(!inj.err || !public_errno || ret == inj.err,
	      "%s: returned %s for the failed call's %s: %s", what, strerror(ret),
	      strerror(inj.err), errors);
	return TEST_PASS;
}

/* The outcome of one failure, as fail_nth found it; in shared memory across processes. */
struct outcome {
	bool made;		/* the public call made that many calls */
	unsigned int ways;	/* in how many ways the failed call fails */
};

/* Fail the library's nth call in op (of first_ops when first), in its way-th way. */
static int fail_nth(const struct op *op, bool first, long n, unsigned int way,
		    struct outcome *out)
{
	struct mark before, start;
	char what[200];
	int ret;

	mark_take(&start);
	CHECK_OK(do_stage(op->from));
	gdr_ext_take_errors(NULL, 0);
	mark_take(&before);
	inj = (__typeof__(inj)){ .armed = true, .fail_at = n, .way = way };
	ret = op->call();
	inj.armed = false;
	out->made = inj.failed != NULL;
	out->ways = inj.ways;
	snprintf(what, sizeof(what), "%s with its call %ld (%s, way %u) failing", op->name, n,
		 inj.failed ? inj.failed : "none", way);
	if (out->made && ret) {
		/* gdr_open's errno is ENODEV whatever the backend's. */
		CHECK_PASS(check_failure(what, ret, op->call != do_open));
		/* The calls after what the process keeps are the repeated ops': this loop ends. */
		if (first && kept_made(&before))
			out->made = false;
		/* gdr_close frees even when it fails: it is checked against the start below. */
		if (op->call != do_close) {
			if (out->made && !mark_same(&before, what))
				return TEST_FAIL;
			CHECK(op->call() == 0, "%s, then again: failed", what);
		}
	} else {
		CHECK(ret == 0, "%s: returned %d", what, ret);
	}
	if (op->call == do_pin)
		CHECK_PASS(remember_va());
	/* A mapping gdr_close could not undo is the caller's to munmap (it logged so). */
	if (op->call == do_close && inj.failed && !strcmp(inj.failed, "munmap"))
		CHECK(!failing_munmap_unfailed(s.map, PIN_SIZE + (s.dptr - s.va)), "munmap: %s",
		      strerror(errno));
	CHECK_OK(do_stage(MAPPED));
	CHECK_PASS(check_data((unsigned int)n));
	teardown();
	if (!first && !mark_same(&start, what))
		return TEST_FAIL;
	return TEST_PASS;
}

/* Each of op's calls failing in each of its ways; in this process. */
static int fail_each(const struct op *op)
{
	struct outcome out = { .made = true };
	long n;

	for (n = 1; out.made && n < MAX_CALLS; n++)
		for (unsigned int way = 0; way == 0 || way < out.ways; way++)
			CHECK_PASS(fail_nth(op, false, n, way, &out));
	/* Every backend's pin calls its driver: none failing means none was seen. */
	CHECK(n > 2 || op->call != do_pin, "%s made no call that could fail", op->name);
	return TEST_PASS;
}

/* The ops a process repeats, in one process. */
static int run_repeated(void *arg)
{
	struct mark warm;
	gdr_mh_t bad;

	(void)arg;
	CHECK_PASS(backend->setup(&s.dptr));
	/* What a process makes once (CUDA, the Vulkan state, a thread's error buffer) is made. */
	CHECK_OK(do_stage(MAPPED));
	CHECK_PASS(check_data(0));
	EXPECT(gdr_pin_buffer_v2(s.g, s.dptr, PIN_SIZE, 0x80, &bad) == EINVAL, "bad flags");
	teardown();
	mark_take(&warm);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		CHECK_PASS(fail_each(&ops[i]));
	CHECK(mark_same(&warm, "after every op"));
	backend->cleanup();
	return TEST_PASS;
}

struct first_try {
	const struct op *op;
	long n;
	unsigned int way;
	struct outcome *out;
};

/* Set name to value, or unset it for NULL. */
static void set_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

/*
 * What every process builds once and keeps, whatever its backend: the library's process state,
 * this thread's error buffer, the fork handler's descriptor block. Built here by opens that
 * fail (no such backend; gdrdrv on /dev/null, which answers no command as gdrdrv), so that what
 * a process's first call leaves is its backend's.
 */
static void prime_process(void)
{
	static const char *const backends[] = { "none", "gdrdrv" };
	char *backend = getenv("GDRCOPY_BACKEND"), *path = getenv("GDRCOPY_GDRDRV_PATH");
	gdr_t g;

	backend = backend ? strdup(backend) : NULL;
	path = path ? strdup(path) : NULL;
	setenv("GDRCOPY_GDRDRV_PATH", "/dev/null", 1);
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		setenv("GDRCOPY_BACKEND", backends[i], 1);
		g = gdr_open();
		if (g)
			gdr_close(g);
	}
	set_env("GDRCOPY_BACKEND", backend);
	set_env("GDRCOPY_GDRDRV_PATH", path);
	free(backend);
	free(path);
	gdr_ext_take_errors(NULL, 0);
}

/*
 * The handle table's first chunk, which the first pin adds and every later one uses: built by
 * a pin that the vulkan backend refuses before it makes its device (and the others may make).
 */
static int prime_pin(void)
{
	gdr_mh_t mh;

	CHECK_OK(do_open());
	if (!gdr_pin_buffer_v2(s.g, s.dptr, PIN_SIZE, GDR_PIN_FLAG_FORCE_PCIE, &mh))
		CHECK_OK(gdr_unpin_buffer(s.g, mh));
	return TEST_PASS;
}

/* One failure of a process's first call, in a new process. */
static int run_first(void *arg)
{
	const struct first_try *t = arg;
	int status;

	prime_process();
	CHECK_PASS(backend->setup(&s.dptr));
	if (t->op->from >= OPENED)
		CHECK_PASS(prime_pin());
	status = fail_nth(t->op, true, t->n, t->way, t->out);
	teardown();
	backend->cleanup();
	return status;
}

/* Each of a process's first call's calls failing in each of its ways, each in a new process. */
static int fail_each_first(const struct op *op)
{
	struct outcome *out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct first_try t = { .op = op, .out = out };
	int status = TEST_PASS;

	CHECK(out != MAP_FAILED, "mmap: %s", strerror(errno));
	out->made = true;
	for (t.n = 1; status == TEST_PASS && out->made && t.n < MAX_CALLS; t.n++) {
		for (t.way = 0; status == TEST_PASS && (t.way == 0 || t.way < out->ways); t.way++) {
			out->made = false;
			status = test_child_run(&backend->child, run_first, &t);
		}
	}
	munmap(out, sizeof(*out));
	return status;
}

int failing_calls_run(const struct failing_backend *b)
{
	backend = b;
	for (size_t i = 0; i < sizeof(first_ops) / sizeof(first_ops[0]); i++)
		CHECK_PASS(fail_each_first(&first_ops[i]));
	return test_child_run(&b->child, run_repeated, NULL);
}

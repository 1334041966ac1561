/* SPDX-License-Identifier: MIT */
/*
 * The test harness of every tier (unit, simulated GPU, VM, real GPU), as liburing's test
 * helpers are its tests'. A test is a program that exits TEST_PASS, TEST_FAIL or TEST_SKIP (its
 * last line says why). A program of several cases lists them in a table: test_run() runs them
 * and writes one line per case, "pass NAME", "fail NAME reason" or "skip NAME reason", to stdout
 * and to $GDR_TEST_RESULTS, where tests/run-tests.sh counts them.
 *
 * The checks: CHECK* end the case at the first failure (the enclosing function returns
 * TEST_FAIL), for steps that later ones build on; EXPECT* record the failure and go on, for
 * lists of independent facts (ABI values, argument checks). Either says where and what failed;
 * the first failure is the case's reason. Outside test_run() a failed EXPECT makes
 * test_status() TEST_FAIL.
 */
#ifndef GDR_TEST_HARNESS_H
#define GDR_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TEST_PASS 0
#define TEST_FAIL 1
#define TEST_SKIP 77

/* A case: TEST_PASS, or a failure or skip whose reason test_fail, test_skip or a check gave. */
struct test_case {
	const char *name;
	int (*run)(void);
};

/* Record why the current case fails or skips, and return TEST_FAIL or TEST_SKIP. */
int test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The reason recorded so far ("" when none). */
const char *test_reason(void);
/* How many checks failed in the current case so far (in the program, outside cases). */
int test_failures(void);

/* Skip the whole program: print why and exit TEST_SKIP. */
void test_skip_program(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* What the macros call: record a failure at file:line. */
void test_failed_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a false condition: fmt (after its leading " ") says what, or else expr does. */
void test_check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *test_strerror(int err);

/*
 * CHECK(cond) or CHECK(cond, "fmt", ...): the message, when there is one, is said instead of
 * the condition. The " " joins the message's format, so that an absent one is a format too.
 */
#define TEST_CHECK_(on_fail, cond, ...) do { \
	if (!(cond)) { \
		test_check_failed(__FILE__, __LINE__, #cond, " " __VA_ARGS__); \
		on_fail; \
	} \
} while (0)
#define TEST_EQ_(on_fail, a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
		test_failed_at(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, \
			       #b, b_); \
		on_fail; \
	} \
} while (0)
/* expr returns 0 or a positive errno. */
#define TEST_ERR_(on_fail, expr, want) do { \
	int got_ = (expr), want_ = (want); \
	if (got_ != want_) { \
		test_failed_at(__FILE__, __LINE__, "%s returned %d (%s), expected %d (%s)", \
			       #expr, got_, test_strerror(got_), want_, test_strerror(want_)); \
		on_fail; \
	} \
} while (0)

#define CHECK(cond, ...) TEST_CHECK_(return TEST_FAIL, cond, __VA_ARGS__)
#define CHECK_EQ(a, b) TEST_EQ_(return TEST_FAIL, a, b)
#define CHECK_ERR(expr, want) TEST_ERR_(return TEST_FAIL, expr, want)
#define CHECK_OK(expr) CHECK_ERR(expr, 0)
/* expr is a step made of checks that returns a TEST_* status: return it unless it passed. */
#define CHECK_PASS(expr) do { \
	int status_ = (expr); \
	if (status_ != TEST_PASS) \
		return status_; \
} while (0)

#define EXPECT(cond, ...) TEST_CHECK_((void)0, cond, __VA_ARGS__)
#define EXPECT_EQ(a, b) TEST_EQ_((void)0, a, b)
#define EXPECT_ERR(expr, want) TEST_ERR_((void)0, expr, want)

/*
 * Run the cases (all, or those named in argv; "--list" prints their names), each reported on
 * its own line. Returns the program's exit status: TEST_FAIL if a case failed, else TEST_PASS.
 */
int test_run(const struct test_case *cases, int argc, char **argv);
/* Run one case and report it; its verdict. */
int test_run_case(const struct test_case *c);

/* Report a case run some other way: verdict "pass", "fail" or "skip"; fmt may be NULL. */
void test_report(const char *verdict, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The program's exit status so far: TEST_FAIL after a reported or recorded failure. */
int test_status(void);
/* Start afresh, in a child process: no reason and no failure inherited from the parent. */
void test_forget(void);

/* ---- processes (process.c) ---- */

struct test_usage {
	int fds;			/* open descriptors, not counting the one that counts them */
	int threads;
	long rss_kib;			/* -1 when unreadable */
};
void test_usage(struct test_usage *u);
int test_fd_count(void);
/* Whether resident memory says anything about leaks (not under ASan or an emulator). */
bool test_rss_meaningful(void);
/* Whether the thread count is this program's own (not an emulator's). */
bool test_threads_meaningful(void);

/* Capture what is written to stderr until test_capture_end, which returns it (and echoes it). */
void test_capture_begin(void);
const char *test_capture_end(void);

/* fork() after flushing stdio, so that buffered output is not written twice. */
pid_t test_fork(void);
/* Wait for pid: its exit status, or 128 + the signal that killed it; -1 if it cannot. */
int test_wait(pid_t pid);

/* env: NULL-terminated name/value pairs; a NULL value unsets the name. */
void test_set_env(const char *const *env);

struct test_child {
	const char *const *env;		/* set in the child (test_set_env) */
	char *output;			/* the child's stdout and stderr, when not NULL */
	size_t output_len;
	unsigned int timeout_s;		/* kill the child after this long; 0: no limit */
	/*
	 * The child leads a process group, and this process adopts what it leaves behind: when
	 * test_child_run returns, every process of the case is gone and has closed its files.
	 */
	bool isolate;
	/*
	 * End the child with _exit: no atexit handlers (Mesa's would join threads that exist only
	 * in the parent). Otherwise exit, so that LeakSanitizer checks the child.
	 */
	bool quick_exit;
};

/*
 * Run fn(arg) in a child process; fn returns a TEST_* status, which this returns (TEST_FAIL
 * too when the child reported a failed case). The reason the child recorded becomes this
 * process's: empty when the child reported its failures itself. A child that dies, hangs or
 * exits with something else fails, saying so.
 */
int test_child_run(const struct test_child *opts, int (*fn)(void *), void *arg);
/*
 * The same for a child whose exit status means something else: its exit status, 128 + the
 * signal that killed it, or -1 when it timed out or did not start (the reason says which).
 */
int test_child_exit(const struct test_child *opts, int (*fn)(void *), void *arg);

/* ---- the simulated GPU (simgpu.c) ---- */

/*
 * Load the simulated CUDA driver from dir, so that the library's dlopen of libcuda.so.1 finds it
 * before any other, and put dir first on LD_LIBRARY_PATH for programs this one executes; skip
 * the program when the simulator is not built there. No exec: it works under an emulator too.
 */
void test_use_sim_cuda(const char *dir);

/*
 * Mesa's software Vulkan driver: the manifest (ICD) whose driver library is for this program's
 * architecture, from GDR_TEST_LVP_ICD or the loader's directories; NULL when there is none.
 */
const char *test_lavapipe_icd(void);
/* Why lavapipe cannot be used here (no manifest, no Vulkan loader), or NULL. */
const char *test_lavapipe_missing(void);
/* Point Vulkan at lavapipe and the library at the vulkan backend, with warnings logged. */
void test_use_lavapipe(void);

/* The path of the Vulkan loader (libvulkan.so.1) the dynamic loader finds; NULL if none. */
const char *test_vulkan_loader_path(void);
/*
 * Load the hostile Vulkan loader (tests/sim/vulkan_hostile) from dir in front of the real one,
 * which it hands calls to, so that the library's dlopen of libvulkan.so.1 finds it: its handle,
 * for dlsym, or NULL with why. Before anything in this process has loaded Vulkan.
 */
void *test_use_vulkan_hostile(const char *dir, const char **why);

#endif /* GDR_TEST_HARNESS_H */

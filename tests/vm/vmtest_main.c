/* SPDX-License-Identifier: MIT */
/* main() of every kernel-tier test program: list the cases, or run one (see vmtest.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmtest.h"

#define VM_DEFAULT_TIMEOUT 60

static int timeout_s(void)
{
	const char *s = getenv("VMTEST_TIMEOUT");
	int t = s ? atoi(s) : 0;

	return t > 0 ? t : VM_DEFAULT_TIMEOUT;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* SIGKILL every process whose parent is this one: orphans of the case that left its group. */
static void kill_children(void)
{
	struct dirent *d;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return;
	while ((d = readdir(proc))) {
		char path[288], buf[512], *p;
		int pid = atoi(d->d_name), ppid;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		/* "pid (comm) state ppid ...": comm may hold anything but ends at the last ')' */
		if (!p || !(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		if (ppid == getpid())
			kill(pid, SIGKILL);
	}
	closedir(proc);
}

/*
 * Run c in a child that leads its own process group; the parent is a subreaper, so what the
 * case forks and leaves behind comes back to it to be killed and reaped: when this program
 * exits, every process of the case is gone and has closed its files.
 */
static int run_case(const struct vm_case *c)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int status, ret;
	pid_t pid;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = vm_fork();
	if (pid < 0) {
		vm_log("FAIL: fork: %s", strerror(errno));
		return VM_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		_exit(c->fn());
	}
	setpgid(pid, pid);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(timeout_s());
	ret = waitpid(pid, &status, 0);
	alarm(0);
	if (ret < 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		vm_log("FAIL: %s timed out after %d s", c->name, timeout_s());
		ret = VM_FAIL;
	} else if (WIFEXITED(status)) {
		ret = WEXITSTATUS(status);
		if (ret != VM_PASS && ret != VM_SKIP && ret != VM_FAIL) {
			vm_log("FAIL: %s exited %d", c->name, ret);
			ret = VM_FAIL;
		}
	} else {
		vm_log("FAIL: %s killed by signal %d (%s)", c->name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		ret = VM_FAIL;
	}

	/* Stragglers: the case's group, then any orphan that came to us from elsewhere. */
	kill(-pid, SIGKILL);
	kill_children();
	alarm(10);
	for (;;) {
		if (waitpid(-1, NULL, 0) > 0)
			continue;
		if (errno == EINTR) {
			vm_log("FAIL: %s left processes that do not die", c->name);
			ret = VM_FAIL;
		}
		break;
	}
	alarm(0);
	return ret;
}

int main(int argc, char **argv)
{
	const struct vm_case *c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (c = vm_cases; c->name; c++)
			printf("%s %s\n", c->name, c->modes);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
		return 2;
	}
	for (c = vm_cases; c->name; c++) {
		if (strcmp(c->name, argv[1]) == 0)
			return run_case(c);
	}
	fprintf(stderr, "FAIL: %s has no case %s\n", argv[0], argv[1]);
	return VM_FAIL;
}

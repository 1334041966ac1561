/* SPDX-License-Identifier: MIT */
/* main() of every kernel-tier test program: list the cases, or run one (see vmtest.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmtest.h"

#define VM_DEFAULT_TIMEOUT 60

static unsigned int timeout_s(void)
{
	const char *s = getenv("VMTEST_TIMEOUT");
	int t = s ? atoi(s) : 0;

	return t > 0 ? (unsigned int)t : VM_DEFAULT_TIMEOUT;
}

static const struct vm_case *selected;

static int run_selected(void *arg)
{
	(void)arg;
	return selected->run();
}

/*
 * The case in a child that leads its own process group; what it forks and leaves behind comes
 * back to this process to be killed and reaped: when this program exits, every process of the
 * case is gone and has closed its files.
 */
static int run_isolated(void)
{
	const struct test_child child = { .timeout_s = timeout_s(), .isolate = true };

	return test_child_run(&child, run_selected, NULL);
}

int main(int argc, char **argv)
{
	const struct vm_case *c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (c = vm_cases; c->name; c++)
			printf("%s %s\n", c->name, c->modes);
		return TEST_PASS;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
		return 2;
	}
	for (c = vm_cases; c->name; c++) {
		if (strcmp(c->name, argv[1]) == 0) {
			selected = c;
			return test_run_case(&(const struct test_case){ .name = c->name,
									 .run = run_isolated });
		}
	}
	fprintf(stderr, "%s has no case %s\n", argv[0], argv[1]);
	return TEST_FAIL;
}

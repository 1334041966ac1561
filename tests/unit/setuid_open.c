/* SPDX-License-Identifier: MIT */
/*
 * For test_setuid.sh: gdr_open in a process that test_setuid.sh may have made setuid, linked
 * with the static library so that no library path (which the loader ignores in such a process)
 * is needed. Prints the effective user, whether the loader ran the process in secure mode
 * (AT_SECURE), and the library's reasons for what gdr_open did.
 */
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <gdrapi.h>
#include <gdrapi_ext.h>

int main(void)
{
	char reasons[GDR_EXT_ERRORS_MAX];
	gdr_t g = gdr_open();
	size_t n = gdr_ext_take_errors(reasons, sizeof(reasons));

	printf("euid %u secure %lu open %s\n", (unsigned int)geteuid(), getauxval(AT_SECURE),
	       g ? "ok" : "failed");
	fwrite(reasons, 1, n, stdout);
	if (g)
		gdr_close(g);
	return 0;
}

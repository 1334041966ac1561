/* SPDX-License-Identifier: MIT */
/*
 * A client of the installed packages, built with nothing but what pkg-config says: the headers
 * (GDRCopy's gdrconfig.h too) and the library must come from the system paths. Without a GPU,
 * gdr_open gives NULL.
 */
#include <stdio.h>

#include <gdrapi.h>
#include <gdrapi_ext.h>
#include <gdrconfig.h>

#if defined(GDRAPI_X86) + defined(GDRAPI_POWER) + defined(GDRAPI_ARM64) != 1
#error "gdrconfig.h must define exactly one GDRAPI_<arch>"
#endif

int main(void)
{
	int major = -1, minor = -1;
	gdr_t g;

	gdr_runtime_get_version(&major, &minor);
	if (major != GDR_API_MAJOR_VERSION || minor != GDR_API_MINOR_VERSION) {
		fprintf(stderr, "the library is %d.%d, the header %d.%d\n", major, minor,
			GDR_API_MAJOR_VERSION, GDR_API_MINOR_VERSION);
		return 1;
	}
	g = gdr_open();
	printf("libgdrapi %d.%d, gdr_open: %s\n", major, minor,
	       g ? "a backend works here" : "NULL (no backend works here)");
	if (!g && gdr_ext_take_errors(NULL, 0) != 0) {
		fprintf(stderr, "gdr_ext_take_errors(NULL, 0) returned a length\n");
		return 1;
	}
	if (g && gdr_close(g)) {
		fprintf(stderr, "gdr_close failed\n");
		return 1;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
// The public header compiles as C++ (-Wall -Wextra -Werror -pedantic) and its functions keep C
// linkage: this program links against the library through the header's declarations.
#include "gdrapi.h"

#include <cstdio>

static_assert(sizeof(gdr_info_t) == 48, "gdr_info_t layout");
static_assert(sizeof(gdr_mh_t) == 8, "gdr_mh_t layout");

int main()
{
	int major = 0, minor = 0;

	gdr_runtime_get_version(&major, &minor);
	if (major != GDR_API_MAJOR_VERSION || minor != GDR_API_MINOR_VERSION) {
		std::fprintf(stderr, "runtime version %d.%d, header %d.%d\n", major, minor,
			     GDR_API_MAJOR_VERSION, GDR_API_MINOR_VERSION);
		return 1;
	}
	if (gdr_driver_get_version(nullptr, &major, &minor) == 0) {
		std::fprintf(stderr, "gdr_driver_get_version(NULL) succeeded\n");
		return 1;
	}
	std::printf("header compiles as C++ and links with C linkage\n");
	return 0;
}

// SPDX-License-Identifier: MIT
// The public headers compile as C++ (-Wall -Wextra -Werror -pedantic) and their functions keep C
// linkage: this program links against the library through the headers' declarations.
#include "gdrapi.h"
#include "gdrapi_ext.h"

#include <cstdio>
#include <cstring>

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
	if (gdr_ext_take_errors(nullptr, 0) != 0 ||
	    std::strcmp(gdr_ext_copy_impl_name(GDR_COPY_IMPL_AVX2), "avx2") != 0 ||
	    gdr_ext_copy_impl_name(GDR_COPY_IMPL_COUNT) != nullptr ||
	    std::strcmp(gdr_ext_backend_name(GDR_BACKEND_VULKAN), "vulkan") != 0) {
		std::fprintf(stderr, "gdrapi_ext.h's functions give wrong answers\n");
		return 1;
	}
	std::printf("headers compile as C++ and link with C linkage\n");
	return 0;
}

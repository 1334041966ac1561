/* SPDX-License-Identifier: MIT */
/*
 * What the library makes of CUDA's errors (src/cuda.c): the errno each CUresult becomes, which
 * every backend returns to its callers (and the Python package's table copies), and the text
 * log lines quote, for a code the driver names and for one it does not. No driver is loaded:
 * the text comes from a table of stand-ins for cuGetErrorName and cuGetErrorString.
 */
#include <errno.h>
#include <string.h>

#include "cuda_driver.h"
#include "harness.h"

static const struct {
	CUresult res;
	int err;
} errnos[] = {
	{ CUDA_SUCCESS, 0 },
	{ CUDA_ERROR_INVALID_VALUE, EINVAL },
	{ CUDA_ERROR_NOT_FOUND, EINVAL },
	{ CUDA_ERROR_INVALID_HANDLE, EINVAL },
	{ CUDA_ERROR_NOT_SUPPORTED, ENOTSUP },
	{ CUDA_ERROR_OUT_OF_MEMORY, ENOMEM },
	{ CUDA_ERROR_NOT_PERMITTED, EPERM },
	{ CUDA_ERROR_INVALID_DEVICE, ENODEV },
	{ CUDA_ERROR_NO_DEVICE, ENODEV },
	{ CUDA_ERROR_NOT_INITIALIZED, EIO },
	{ CUDA_ERROR_UNKNOWN, EIO },
	{ (CUresult)12345, EIO },
};

static int case_errnos(void)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		EXPECT(gdr_cuda_errno(errnos[i].res) == errnos[i].err,
		       "CUresult %d becomes errno %d, not %d", (int)errnos[i].res,
		       gdr_cuda_errno(errnos[i].res), errnos[i].err);
	return TEST_PASS;
}

/* The driver knows CUDA_ERROR_INVALID_VALUE; it names CUDA_ERROR_UNKNOWN without a text. */
static CUresult CUDAAPI stub_name(CUresult res, const char **name)
{
	if (res == CUDA_ERROR_INVALID_VALUE || res == CUDA_ERROR_UNKNOWN) {
		*name = res == CUDA_ERROR_UNKNOWN ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_INVALID_VALUE";
		return CUDA_SUCCESS;
	}
	*name = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult CUDAAPI stub_string(CUresult res, const char **str)
{
	if (res == CUDA_ERROR_INVALID_VALUE) {
		*str = "invalid argument";
		return CUDA_SUCCESS;
	}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

#define EXPECT_TEXT(res, len, want) do { \
	const char *got_ = gdr_cuda_strerror(&cuda, res, buf, len); \
	EXPECT(got_ == buf && !strcmp(got_, want), "CUresult %d in %d bytes reads \"%s\", not " \
	       "\"%s\"", (int)(res), (int)(len), got_, want); \
} while (0)

static int case_strerror(void)
{
	struct gdr_cuda cuda = { .cuGetErrorName = stub_name, .cuGetErrorString = stub_string };
	char buf[64];

	EXPECT_TEXT(CUDA_ERROR_INVALID_VALUE, sizeof(buf),
		    "CUDA_ERROR_INVALID_VALUE (invalid argument)");
	EXPECT_TEXT(CUDA_ERROR_UNKNOWN, sizeof(buf), "CUDA_ERROR_UNKNOWN (no description)");
	EXPECT_TEXT((CUresult)12345, sizeof(buf), "CUresult 12345");
	/* Cut to its buffer, never past it. */
	memset(buf, 'x', sizeof(buf));
	EXPECT_TEXT(CUDA_ERROR_INVALID_VALUE, 8, "CUDA_ER");
	CHECK(buf[8] == 'x', "gdr_cuda_strerror wrote past its 8-byte buffer");
	return TEST_PASS;
}

static const struct test_case cases[] = {
	{ "errnos", case_errnos },
	{ "strerror", case_strerror },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}

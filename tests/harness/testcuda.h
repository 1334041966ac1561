/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver for test programs: the library's table (src/cuda.c) for what the library
 * calls, and the entry points only tests call (testcuda_entry_points.h), looked up here, so that
 * the library's table holds nothing it does not use and a driver that lacks a test's entry
 * point still serves the library.
 */
#ifndef GDR_TESTCUDA_H
#define GDR_TESTCUDA_H

#include "cuda_driver.h"
#include "testcuda_entry_points.h"

struct testcuda {
	const struct gdr_cuda *lib;	/* for gdr_cuda_strerror and gdr_cuda_ctx_enter */
	int driver_version;
#define TESTCUDA_FIELD(name, version) PFN_##name##_v##version name;
	GDR_CUDA_ENTRY_POINTS(TESTCUDA_FIELD)
	TESTCUDA_ENTRY_POINTS(TESTCUDA_FIELD)
#undef TESTCUDA_FIELD
};

/*
 * gdr_cuda_acquire (libcuda loaded, cuInit called), then every test entry point; the table is
 * the process's, filled once. NULL with why filled when either fails.
 */
const struct testcuda *testcuda_acquire(struct gdr_why *why);

#endif

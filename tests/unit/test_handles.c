/* SPDX-License-Identifier: MIT */
/*
 * The handle table: values are unique and non-zero, retired values stay dead after their slot is
 * reused, random values never resolve, and many live handles coexist.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "fake_gpu.h"
#include "gdrapi.h"

#define LIVE 3000

int main(void)
{
	static gdr_mh_t live[LIVE];
	gdr_mh_t first, reused;
	gdr_info_t info;
	uint8_t *gpu;
	gdr_t g;

	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(65536);
	g = gdr_open();
	if (!gpu || !g) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}

	/* A retired handle stays dead even when its slot is taken again. */
	CHECK_RET(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &first), 0);
	CHECK_RET(gdr_unpin_buffer(g, first), 0);
	CHECK_RET(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &reused), 0);
	CHECK(reused.h != first.h);
	CHECK(reused.h != 0);
	CHECK_RET(gdr_get_info(g, first, &info), EINVAL);
	CHECK_RET(gdr_get_info(g, reused, &info), 0);
	CHECK_RET(gdr_unpin_buffer(g, reused), 0);

	/* Many live handles: all distinct, all resolvable. */
	for (int i = 0; i < LIVE; i++)
		CHECK_RET(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &live[i]), 0);
	for (int i = 1; i < LIVE; i++)
		CHECK(live[i].h != live[i - 1].h);
	for (int i = 0; i < LIVE; i++)
		CHECK_RET(gdr_get_info(g, live[i], &info), 0);

	/* Random values resolve to nothing (and never crash). */
	srand(12345);
	for (int i = 0; i < 100000; i++) {
		gdr_mh_t h = { ((unsigned long)rand() << 33) ^ ((unsigned long)rand() << 11) ^
			       (unsigned long)rand() };
		int live_hit = 0;

		for (int j = 0; j < 4 && !live_hit; j++)
			live_hit = h.h == live[j].h;
		if (!live_hit)
			CHECK(gdr_get_info(g, h, &info) == EINVAL);
		CHECK(gdr_copy_to_mapping(h, gpu, &info, 1) == EINVAL);
	}
	for (int i = 0; i < LIVE; i += 2)
		CHECK_RET(gdr_unpin_buffer(g, live[i]), 0);
	for (int i = 0; i < LIVE; i += 2)
		CHECK_RET(gdr_get_info(g, live[i], &info), EINVAL);
	CHECK_RET(gdr_close(g), 0);
	for (int i = 1; i < LIVE; i += 2)
		CHECK(gdr_copy_to_mapping(live[i], gpu, &info, 1) == EINVAL);
	CHECK(fake_backend_pins == 0);
	fake_gpu_free(gpu);
	return check_result("test_handles");
}

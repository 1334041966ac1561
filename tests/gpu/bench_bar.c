/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "bench_bar.h"

int bench_bar_open(struct bench_bar *b, size_t size)
{
	const char *step = "gdr_open";
	gdr_info_v2_t info;

	memset(b, 0, sizeof(*b));
	if (gpu_vmm_alloc(&b->vmm, size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		printf("cuMemCreate of %zu bytes failed\n", size);
		return 1;
	}
	b->g = gdr_open();
	if (!b->g)
		goto fail;
	step = "gdr_pin_buffer";
	if (gdr_pin_buffer(b->g, b->vmm.ptr, b->vmm.size, 0, 0, &b->mh))
		goto fail_close;
	step = "gdr_map";
	if (gdr_map(b->g, b->mh, &b->va, b->vmm.size))
		goto fail_unpin;
	step = "gdr_get_info_v2";
	if (gdr_get_info_v2(b->g, b->mh, &info))
		goto fail_unmap;
	b->type = info.mapping_type;
	return 0;

fail_unmap:
	gdr_unmap(b->g, b->mh, b->va, b->vmm.size);
fail_unpin:
	gdr_unpin_buffer(b->g, b->mh);
fail_close:
	gdr_close(b->g);
fail:
	gpu_vmm_free(&b->vmm);
	printf("%s failed for %zu bytes of GPU memory: gdrcopy_info says what this machine can map\n",
	       step, size);
	return 1;
}

void bench_bar_close(struct bench_bar *b)
{
	gdr_unmap(b->g, b->mh, b->va, b->vmm.size);
	gdr_unpin_buffer(b->g, b->mh);
	gdr_close(b->g);
	gpu_vmm_free(&b->vmm);
}

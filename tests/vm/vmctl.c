/* SPDX-License-Identifier: MIT */
/*
 * The VM runner's helper (guest-init.sh):
 *   vmctl counts        the sim's counters as shell assignments (sim_pins=N ...)
 *   vmctl hold FILE     open gdrdrv, pin and map sim memory, create FILE, then wait to be
 *                       killed: a process that holds pins for the module-unload cases
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmtest.h"

static int counts(void)
{
	struct nvp2p_sim_counts c;
	int ret = vm_counts(&c);

	if (ret) {
		fprintf(stderr, "vmctl: cannot read the sim's counts: %s\n", strerror(ret));
		return 1;
	}
	printf("sim_pins=%llu sim_persistent=%llu sim_allocations=%llu sim_backing=%llu "
	       "sim_callbacks=%llu sim_misuses=%llu\n",
	       (unsigned long long)c.pins, (unsigned long long)c.persistent_pins,
	       (unsigned long long)c.allocations, (unsigned long long)c.backing_bytes,
	       (unsigned long long)c.callbacks, (unsigned long long)c.misuses);
	return 0;
}

static int hold(const char *ready)
{
	struct nvp2p_sim_alloc a, b;
	gdr_mh_t mh, mh2;
	void *map;
	gdr_t g;
	int ret, fd;

	g = vm_gdr_open();
	if (!g)
		return 1;
	if ((ret = vm_alloc(4 * GPU_PAGE, 0, &a)) || (ret = vm_alloc(GPU_PAGE, 0, &b))) {
		fprintf(stderr, "vmctl: alloc: %s\n", strerror(ret));
		return 1;
	}
	ret = gdr_pin_buffer(g, a.va, a.mapped_size, 0, 0, &mh);
	if (!ret)
		ret = gdr_map(g, mh, &map, a.mapped_size);
	if (!ret)
		ret = gdr_pin_buffer(g, b.va, b.mapped_size, 0, 0, &mh2);
	if (ret) {
		fprintf(stderr, "vmctl: pin or map: %s\n", strerror(ret));
		return 1;
	}
	memset(map, 0xa5, a.mapped_size);

	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "vmctl: %s: %s\n", ready, strerror(errno));
		return 1;
	}
	close(fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "counts") == 0)
		return counts();
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	fprintf(stderr, "usage: vmctl counts | vmctl hold FILE\n");
	return 2;
}

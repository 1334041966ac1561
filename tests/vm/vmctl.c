/* SPDX-License-Identifier: MIT */
/*
 * The VM runner's helper (guest-init.sh):
 *   vmctl counts        the sim's counters as shell assignments (sim_pins=N ...)
 *   vmctl hold FILE     open gdrdrv, pin and map sim memory, create FILE, then wait to be
 *                       killed: a process that holds pins for the module-unload cases
 *   vmctl kmsg STATE    the kernel log since the last call, as dmesg prints it; exits 3 if
 *                       records were overwritten before they were read (a splat may be lost)
 *   vmctl kmsg-flood    print the log buffer's size, then log twice that at debug level
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
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
	       "sim_callbacks=%llu sim_misuses=%llu sim_foreign_puts=%llu\n",
	       (unsigned long long)c.pins, (unsigned long long)c.persistent_pins,
	       (unsigned long long)c.allocations, (unsigned long long)c.backing_bytes,
	       (unsigned long long)c.callbacks, (unsigned long long)c.misuses,
	       (unsigned long long)c.foreign_puts);
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

/* syslog(2) actions */
#define KLOG_CLEAR 5
#define KLOG_SIZE_BUFFER 10

/* A /dev/kmsg record: "PRIO,SEQ,USEC,FLAGS;TEXT\n", then " KEY=VALUE" lines. */
struct kmsg_rec {
	unsigned long long seq;
	unsigned long long usec;
	const char *text;	/* its first line, in the record's buffer */
};

/* 0, or -1 if buf holds no record. */
static int kmsg_parse(char *buf, struct kmsg_rec *r)
{
	char *text = strchr(buf, ';'), *end;

	if (!text || sscanf(buf, "%*u,%llu,%llu", &r->seq, &r->usec) != 2)
		return -1;
	r->text = ++text;
	end = strchr(text, '\n');
	if (end)
		*end = '\0';
	return 0;
}

/*
 * Records are read from the syslog clear point, which this moves past what it read (as dmesg -c
 * does), so each call reads only what is new. STATE keeps the last sequence number read: a
 * record after it that is gone (EPIPE) or a gap in the numbers means the buffer wrapped over
 * records nobody read.
 */
static int kmsg(const char *state)
{
	unsigned long long last = 0, lost = 0;
	int have_last = 0, cleared = 0, overwritten = 0;
	struct kmsg_rec r;
	char buf[8192];
	FILE *f;
	int fd;

	f = fopen(state, "r");
	if (f) {
		have_last = fscanf(f, "%llu", &last) == 1;
		fclose(f);
	}
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || lseek(fd, 0, SEEK_DATA) < 0) {
		fprintf(stderr, "vmctl: cannot read /dev/kmsg: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n < 0 && errno == EPIPE) {
			overwritten = 1;
			continue;
		}
		if (n < 0 && errno == EAGAIN && !cleared) {
			/* Clear, then read on: what came meanwhile is read now, and again next
			 * time (skipped by its number), never lost between the two. */
			klogctl(KLOG_CLEAR, NULL, 0);
			cleared = 1;
			continue;
		}
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (kmsg_parse(buf, &r) || (have_last && r.seq <= last))
			continue;
		if (have_last && r.seq > last + 1)
			lost += r.seq - last - 1;
		/* As dmesg prints it. */
		printf("[%5llu.%06llu] %s\n", r.usec / 1000000, r.usec % 1000000, r.text);
		last = r.seq;
		have_last = 1;
	}
	close(fd);
	fflush(stdout);
	f = fopen(state, "w");
	if (!f) {
		fprintf(stderr, "vmctl: cannot write %s: %s\n", state, strerror(errno));
		return 1;
	}
	fprintf(f, "%llu\n", last);
	if (fclose(f)) {
		fprintf(stderr, "vmctl: cannot write %s: %s\n", state, strerror(errno));
		return 1;
	}
	if (!lost && !overwritten)
		return 0;
	if (lost)
		fprintf(stderr, "%llu kernel log records were overwritten before they were read\n",
			lost);
	else
		fprintf(stderr, "kernel log records were overwritten before they were read\n");
	return 3;
}

/* /dev/kmsg lets one open file log 10 lines at a burst: reopen before that. */
#define FLOOD_PER_OPEN 8

static int kmsg_flood(void)
{
	int size = klogctl(KLOG_SIZE_BUFFER, NULL, 0);
	char line[960];
	long long written = 0;
	int i = 0, fd = -1;

	if (size <= 0) {
		fprintf(stderr, "vmctl: cannot read the log buffer's size: %s\n", strerror(errno));
		return 1;
	}
	printf("%d\n", size);
	fflush(stdout);
	while (written < 2LL * size) {
		int len;

		if (i++ % FLOOD_PER_OPEN == 0) {
			if (fd >= 0)
				close(fd);
			fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
			if (fd < 0) {
				fprintf(stderr, "vmctl: cannot open /dev/kmsg: %s\n", strerror(errno));
				return 1;
			}
		}
		/* Debug level: kept in the buffer, not printed on the console. */
		len = snprintf(line, sizeof(line), "<7>vmctl: flood %d %0900d\n", i, 0);
		if (write(fd, line, (size_t)len) != len) {
			fprintf(stderr, "vmctl: writing /dev/kmsg: %s\n", strerror(errno));
			close(fd);
			return 1;
		}
		written += len;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "counts") == 0)
		return counts();
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc == 3 && strcmp(argv[1], "kmsg") == 0)
		return kmsg(argv[2]);
	if (argc == 2 && strcmp(argv[1], "kmsg-flood") == 0)
		return kmsg_flood();
	fprintf(stderr, "usage: vmctl counts | vmctl hold FILE | vmctl kmsg STATE | "
		"vmctl kmsg-flood\n");
	return 2;
}

/* SPDX-License-Identifier: MIT */
/* The kernel tier's test helpers (see vmtest.h); vmtest_main.c runs the cases. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmtest.h"

static int sim_fd = -1;

void vm_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int vm_persistent(void)
{
	const char *phase = getenv("GDR_VM_PHASE");

	return phase && strcmp(phase, "persistent") == 0;
}

int vm_sim_fd(void)
{
	if (sim_fd < 0) {
		sim_fd = open(NVP2P_SIM_DEVICE, O_RDWR | O_CLOEXEC);
		if (sim_fd < 0)
			vm_log("cannot open %s: %s (is nvp2p_sim loaded?)", NVP2P_SIM_DEVICE,
			       strerror(errno));
	}
	return sim_fd;
}

void vm_sim_close(void)
{
	if (sim_fd >= 0)
		close(sim_fd);
	sim_fd = -1;
}

void vm_sim_reopen(void)
{
	vm_sim_close();
	vm_sim_fd();
}

static int sim_ioctl(unsigned long cmd, void *arg)
{
	int fd = vm_sim_fd();

	if (fd < 0)
		return ENODEV;
	return ioctl(fd, cmd, arg) ? errno : 0;
}

int vm_alloc(uint64_t size, uint32_t flags, struct nvp2p_sim_alloc *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	out->flags = flags;
	return sim_ioctl(NVP2P_SIM_IOC_ALLOC, out);
}

int vm_alloc_at(uint64_t va, uint64_t size, struct nvp2p_sim_alloc *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	out->flags = NVP2P_SIM_ALLOC_AT_VA;
	out->va = va;
	return sim_ioctl(NVP2P_SIM_IOC_ALLOC, out);
}

int vm_free(uint64_t va)
{
	struct nvp2p_sim_free req = { .va = va };

	return sim_ioctl(NVP2P_SIM_IOC_FREE, &req);
}

int vm_sim_write(uint64_t va, const void *buf, size_t len)
{
	struct nvp2p_sim_rw req = { .va = va, .len = len, .buf = (uintptr_t)buf };

	return sim_ioctl(NVP2P_SIM_IOC_WRITE, &req);
}

int vm_sim_read(uint64_t va, void *buf, size_t len)
{
	struct nvp2p_sim_rw req = { .va = va, .len = len, .buf = (uintptr_t)buf };

	return sim_ioctl(NVP2P_SIM_IOC_READ, &req);
}

int vm_counts(struct nvp2p_sim_counts *c)
{
	memset(c, 0, sizeof(*c));
	return sim_ioctl(NVP2P_SIM_IOC_COUNTS, c);
}

int vm_inject(uint32_t count, uint32_t error)
{
	struct nvp2p_sim_inject req = { .count = count, .error = error };

	return sim_ioctl(NVP2P_SIM_IOC_INJECT, &req);
}

int vm_inject_put(uint32_t count, uint32_t error)
{
	struct nvp2p_sim_inject req = { .count = count, .error = error };

	return sim_ioctl(NVP2P_SIM_IOC_INJECT_PUT, &req);
}

int vm_inject_revoke(uint32_t count)
{
	struct nvp2p_sim_inject req = { .count = count };

	return sim_ioctl(NVP2P_SIM_IOC_INJECT_REVOKE, &req);
}

int vm_kmsg_contains(const char *needle)
{
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int found = 0;

	if (fd < 0)
		return -1;
	/* One record per read, oldest first; EPIPE: records were overwritten under us, go on. */
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, needle)) {
			found = 1;
			break;
		}
	}
	close(fd);
	return found;
}

int vm_read_number(const char *path, long long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return errno;
	ok = fscanf(f, "%lld", v) == 1;
	fclose(f);
	return ok ? 0 : EIO;
}

/* write(2), not stdio: a parameter's set refusing the value gives its own errno, not EIO. */
int vm_write_number(const char *path, long long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), len, err = 0;
	ssize_t n;

	if (fd < 0)
		return errno;
	len = snprintf(buf, sizeof(buf), "%lld\n", v);
	n = write(fd, buf, (size_t)len);
	if (n < 0)
		err = errno;
	else if (n != len)
		err = EIO;
	close(fd);
	return err;
}

uint64_t vm_pins(void)
{
	struct nvp2p_sim_counts c;

	return vm_counts(&c) ? ~0ULL : c.pins;
}

int vm_map_write_check(gdr_t g, gdr_mh_t mh, uint64_t va, size_t size, uint32_t seed)
{
	unsigned char *want = malloc(size), *got = malloc(size);
	void *map;

	CHECK(want && got, "out of memory");
	CHECK_OK(gdr_map(g, mh, &map, size));
	vm_fill(want, size, seed);
	CHECK_OK(gdr_copy_to_mapping(mh, map, want, size));
	CHECK_OK(vm_sim_read(va, got, size));
	CHECK(vm_diff(want, got, size) < 0, "byte %ld written through the mapping is not in memory",
	      vm_diff(want, got, size));
	CHECK_OK(gdr_unmap(g, mh, map, size));
	free(want);
	free(got);
	return TEST_PASS;
}

int vm_map_buf_flags(gdr_t g, uint64_t size, uint32_t flags, struct vm_buf *b)
{
	void *p;

	CHECK_OK(vm_alloc(size, flags, &b->a));
	CHECK_OK(gdr_pin_buffer(g, b->a.va, size, 0, 0, &b->mh));
	CHECK_OK(gdr_map(g, b->mh, &p, size));
	b->map = p;
	return TEST_PASS;
}

int vm_map_buf(gdr_t g, uint64_t size, struct vm_buf *b)
{
	return vm_map_buf_flags(g, size, 0, b);
}

int vm_fill_words(uint32_t *map, size_t words, uint32_t magic)
{
	size_t i;

	for (i = 0; i < words; i++)
		CHECK(vm_try_write32(&map[i], magic + (uint32_t)i) == 0, "store to word %zu faulted",
		      i);
	return TEST_PASS;
}

int vm_map_filled(gdr_t g, uint64_t size, size_t words, uint32_t magic, struct vm_buf *b)
{
	int ret = vm_map_buf(g, size, b);

	return ret ? ret : vm_fill_words(b->map, words, magic);
}

const char *vm_counts_str(const struct nvp2p_sim_counts *c)
{
	static __thread char buf[160];

	snprintf(buf, sizeof(buf), "pins %llu (persistent %llu), allocations %llu, backing %llu B",
		 (unsigned long long)c->pins, (unsigned long long)c->persistent_pins,
		 (unsigned long long)c->allocations, (unsigned long long)c->backing_bytes);
	return buf;
}

gdr_t vm_gdr_open(void)
{
	gdr_t g;

	setenv("GDRCOPY_BACKEND", "gdrdrv", 0);
	g = gdr_open();
	if (!g)
		vm_log("gdr_open failed with GDRCOPY_BACKEND=%s", getenv("GDRCOPY_BACKEND"));
	return g;
}

int vm_gdrdrv_open(void)
{
	int fd = open("/dev/gdrdrv", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		vm_log("cannot open /dev/gdrdrv: %s", strerror(errno));
	return fd;
}

int vm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

int vm_raw_pin(int fd, uint64_t addr, uint64_t size, uint32_t flags, uint64_t *handle)
{
	struct gdrdrv_pin_buffer_v2_params p = { .addr = addr, .size = size, .flags = flags };
	int ret = vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

int vm_raw_pin_v1(int fd, uint64_t addr, uint64_t size, uint64_t token, uint32_t va_space,
		  uint64_t *handle)
{
	struct gdrdrv_pin_buffer_params p = {
		.addr = addr, .size = size, .p2p_token = token, .va_space = va_space,
	};
	int ret = vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

int vm_raw_unpin(int fd, uint64_t handle)
{
	struct gdrdrv_unpin_buffer_params p = { .handle = handle };

	return vm_ioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, &p);
}

int vm_raw_info(int fd, uint64_t handle, struct gdrdrv_get_info_v2_params *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return vm_ioctl(fd, GDRDRV_IOC_GET_INFO_V2, info);
}

int vm_raw_cb_flag(int fd, uint64_t handle, uint32_t *flag)
{
	struct gdrdrv_get_cb_flag_params p = { .handle = handle };
	int ret = vm_ioctl(fd, GDRDRV_IOC_GET_CB_FLAG, &p);

	if (!ret)
		*flag = p.flag;
	return ret;
}

void *vm_raw_map(int fd, uint64_t handle, size_t len, int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)(handle * CPU_PAGE));

	if (p == MAP_FAILED) {
		*err = errno;
		return NULL;
	}
	*err = 0;
	return p;
}

int vm_find_gdrdrv_fd(void)
{
	char target[64];
	struct dirent *d;
	int found = -1;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t n;

		n = readlinkat(dirfd(dir), d->d_name, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "/dev/gdrdrv") == 0) {
			found = atoi(d->d_name);
			break;
		}
	}
	closedir(dir);
	return found;
}

/* volatile: only the signal handler reads it, so a compiler would drop or move the stores. */
static __thread sigjmp_buf *volatile probe_env;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* A fault outside a probe is a real crash: die of it as if no handler were there. */
static void probe_handler(int sig)
{
	if (probe_env)
		siglongjmp(*probe_env, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Installed once for the whole process: threads probing at once must not undo each other's. */
static void probe_install(void)
{
	struct sigaction sa = { .sa_handler = probe_handler };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

static int probe(volatile void *p, uint32_t *val, int write)
{
	sigjmp_buf env;
	int sig;

	pthread_once(&probe_once, probe_install);
	sig = sigsetjmp(env, 1);
	if (!sig) {
		probe_env = &env;
		if (write)
			*(volatile uint32_t *)p = *val;
		else
			*val = *(volatile uint32_t *)p;
	}
	probe_env = NULL;
	return sig;
}

int vm_try_read32(const volatile void *p, uint32_t *val)
{
	return probe((volatile void *)p, val, 0);
}

int vm_try_write32(volatile void *p, uint32_t val)
{
	return probe(p, &val, 1);
}

void vm_fill(void *buf, size_t len, uint32_t seed)
{
	unsigned char *b = buf;
	uint32_t x = seed * 2654435761u + 0x3f4c5e6a;
	size_t i;

	for (i = 0; i < len; i++) {
		/* xorshift, mixed with the offset so that equal seeds at other offsets differ */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)(x ^ (x >> 11) ^ i);
	}
}

long vm_diff(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	for (i = 0; i < len; i++) {
		if (x[i] != y[i])
			return (long)i;
	}
	return -1;
}

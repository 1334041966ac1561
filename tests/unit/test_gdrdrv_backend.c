/* SPDX-License-Identifier: MIT */
/*
 * The gdrdrv backend against a fake driver: the libc functions this program defines in front of
 * libc's for libgdrapi (failing_libc.c) hand ioctl, mmap, munmap and close to the fake, which
 * answers the gdrdrv commands on the device fd as a gdrdrv of a chosen version would. The cases
 * check which commands each version gets (GET_INFO_V2 from 2.4; GET_ATTR, PIN_BUFFER_V2 and
 * REQ_MAPPING_TYPE from 2.5), that gdr_pin_buffer always carries its tokens, that all 64 bits of
 * a handle reach mmap, the error paths of pin, map and unpin, and the failing-calls loop
 * (failing_calls.h): the device's open, the commands and the mmaps failing in turn with libc's
 * other calls, the fake's pins and mappings counted with what must not change. A command fails
 * as the driver would, out of memory or with an error of its own, which the library must hand
 * on. GDRCOPY_GDRDRV_PATH points the backend at /dev/null, which open accepts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "failing_calls.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gdrdrv.h"
#include "harness.h"

#define FAKE_PINS 8
#define FAKE_FIRST_HANDLE 0x123456789ULL	/* more than 32 bits */

struct fake_pin {
	int used;
	gdr_hnd_t handle;
	uint64_t addr, size, p2p_token;
	uint32_t va_space, flags, req_type, cb_flag;
	void *map;
	size_t map_len;
	uint32_t map_type;
};

static struct {
	uint32_t version, min_api;
	int fd;				/* the device fd: the one GET_VERSION came on */
	struct fake_pin pins[FAKE_PINS];
	gdr_hnd_t next_handle;
	unsigned long cmds[64];		/* commands received since the case began */
	int ncmds;
	off_t last_offset;
	int fail_unpin, fail_info, unmap_at_info, wrong_type;
	int fail_close;			/* close(2)'s errno for the device fd, which it frees */
	const int *unpin_errs;		/* the next UNPIN_BUFFERs' errnos, until a 0 */
	uint32_t report_type;		/* GET_INFO_V2's mapping_type for mapped pins, if not 0 */
	int device_ok;			/* REQ_MAPPING_TYPE(DEVICE) is granted, not refused */
	int eintr;			/* the next commands fail with EINTR, as if interrupted */
	/*
	 * UNPIN_BUFFERs of a mapped pin: on NVIDIA's gdrdrv before 2.4.4 (reporting 2.4 or
	 * less), the munmap after one writes to the freed pin (GDRCopy #314).
	 */
	int unpinned_mapped;
	unsigned long positive_cmd;	/* answered 1 once, having run it if positive_runs */
	int positive_runs;
	uint64_t info_va_shift;		/* added to GET_INFO's va */
	int info_size_zero;		/* GET_INFO's mapped_size is 0 */
} fake;


static unsigned int page_shift(void)
{
	return (unsigned int)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
}

static void fake_reset(uint32_t version)
{
	memset(&fake, 0, sizeof(fake));
	fake.version = version;
	fake.min_api = MINIMUM_GDR_API_VERSION;
	fake.fd = -1;
	fake.next_handle = FAKE_FIRST_HANDLE;
}

/* gdr_open over the fake driver of that version, reset; NULL (a failed expectation) if refused. */
static gdr_t open_driver(uint32_t version)
{
	gdr_t g;

	fake_reset(version);
	g = gdr_open();
	EXPECT(g, "gdr_open over gdrdrv %#x", version);
	return g;
}

static long fake_pins(void);

static int fake_count(unsigned long cmd)
{
	int n = 0;

	for (int i = 0; i < fake.ncmds; i++)
		n += fake.cmds[i] == cmd;
	return n;
}

static struct fake_pin *fake_pin_of(gdr_hnd_t h)
{
	for (int i = 0; i < FAKE_PINS; i++)
		if (fake.pins[i].used && fake.pins[i].handle == h)
			return &fake.pins[i];
	return NULL;
}

static int fake_pin(uint64_t addr, uint64_t size, uint64_t token, uint32_t va_space,
		    uint32_t flags, gdr_hnd_t *handle)
{
	for (int i = 0; i < FAKE_PINS; i++) {
		struct fake_pin *p = &fake.pins[i];

		if (p->used)
			continue;
		*p = (struct fake_pin){ .used = 1, .handle = fake.next_handle, .addr = addr,
					.size = size, .p2p_token = token, .va_space = va_space,
					.flags = flags };
		fake.next_handle += 16;
		*handle = p->handle;
		return 0;
	}
	return ENOMEM;
}

static void fake_info(const struct fake_pin *p, __u64 *va, __u64 *mapped_size,
		      __u32 *page_size)
{
	*va = p->addr & ~0xffffULL;
	*mapped_size = ((p->addr + p->size + 0xffff) & ~0xffffULL) - *va;
	*page_size = 65536;
}

/* The driver's side of one command; 0 or an errno. */
static int fake_command(unsigned long cmd, void *arg)
{
	int v24 = fake.version >= 0x20004, v25 = fake.version >= 0x20005;
	struct fake_pin *p;

	switch (cmd) {
	case GDRDRV_IOC_GET_VERSION: {
		struct gdrdrv_get_version_params *a = arg;

		a->gdrdrv_version = fake.version;
		a->minimum_gdr_api_version = fake.min_api;
		return 0;
	}
	case GDRDRV_IOC_PIN_BUFFER: {
		struct gdrdrv_pin_buffer_params *a = arg;

		return fake_pin(a->addr, a->size, a->p2p_token, a->va_space, 0, &a->handle);
	}
	case GDRDRV_IOC_PIN_BUFFER_V2: {
		struct gdrdrv_pin_buffer_v2_params *a = arg;

		if (!v25)
			return ENOTTY;
		if (a->pad)
			return EINVAL;
		return fake_pin(a->addr, a->size, 0, 0, a->flags, &a->handle);
	}
	case GDRDRV_IOC_UNPIN_BUFFER: {
		struct gdrdrv_unpin_buffer_params *a = arg;

		if (fake.fail_unpin) {
			fake.fail_unpin--;
			return EIO;
		}
		if (fake.unpin_errs && *fake.unpin_errs)
			return *fake.unpin_errs++;
		p = fake_pin_of(a->handle);
		if (!p)
			return EINVAL;
		fake.unpinned_mapped += p->map != NULL;
		p->used = 0;
		return 0;
	}
	case GDRDRV_IOC_GET_CB_FLAG: {
		struct gdrdrv_get_cb_flag_params *a = arg;

		p = fake_pin_of(a->handle);
		if (!p)
			return EINVAL;
		a->flag = p->cb_flag;
		return 0;
	}
	case GDRDRV_IOC_GET_INFO:
	case GDRDRV_IOC_GET_INFO_V2: {
		struct gdrdrv_get_info_v2_params *a = arg;

		if (cmd == GDRDRV_IOC_GET_INFO_V2 && !v24)
			return ENOTTY;
		p = fake_pin_of(a->handle);
		if (!p)
			return EINVAL;
		if (fake.fail_info) {
			fake.fail_info--;
			return EIO;
		}
		if (fake.unmap_at_info && p->map) {
			p->map_type = GDR_MR_NONE;
			fake.unmap_at_info = 0;
		}
		fake_info(p, &a->va, &a->mapped_size, &a->page_size);
		a->va += fake.info_va_shift;
		if (fake.info_size_zero)
			a->mapped_size = 0;
		a->tsc_khz = 1000;
		a->tm_cycles = 77;
		if (cmd == GDRDRV_IOC_GET_INFO_V2) {
			a->mapping_type = fake.report_type && p->map ? fake.report_type :
					  p->map_type;
		} else {
			struct gdrdrv_get_info_params *v1 = arg;

			v1->mapped = p->map_type != GDR_MR_NONE;
			v1->wc_mapping = p->map_type == GDR_MR_WC;
		}
		return 0;
	}
	case GDRDRV_IOC_GET_ATTR: {
		struct gdrdrv_get_attr_params *a = arg;

		if (!v25)
			return ENOTTY;
		if (a->attr != GDRDRV_ATTR_USE_PERSISTENT_MAPPING &&
		    a->attr != GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE)
			return EINVAL;
		a->val = a->attr == GDRDRV_ATTR_USE_PERSISTENT_MAPPING;
		return 0;
	}
	case GDRDRV_IOC_REQ_MAPPING_TYPE: {
		struct gdrdrv_req_mapping_type_params *a = arg;

		if (!v25)
			return ENOTTY;
		p = fake_pin_of(a->handle);
		if (!p)
			return EINVAL;
		if (a->mapping_type == GDR_MR_CACHING ||
		    (a->mapping_type == GDR_MR_DEVICE && !fake.device_ok))
			return EOPNOTSUPP;
		p->req_type = a->mapping_type;
		return 0;
	}
	}
	return ENOTTY;
}

/* libc's ioctl for this program and libgdrapi. */
static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	static int (*real_ioctl)(int, unsigned long, ...);
	int ret;

	if (_IOC_TYPE(request) != GDRDRV_IOCTL) {
		if (!real_ioctl)
			real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
		return real_ioctl(fd, request, arg);
	}
	if (request == GDRDRV_IOC_GET_VERSION && fake.fd < 0)
		fake.fd = fd;
	if (fake.ncmds < (int)(sizeof(fake.cmds) / sizeof(fake.cmds[0])))
		fake.cmds[fake.ncmds++] = request;
	if (fd == fake.fd && fake.eintr) {
		fake.eintr--;
		errno = EINTR;
		return -1;
	}
	if (fd == fake.fd && request == fake.positive_cmd) {
		fake.positive_cmd = 0;
		if (fake.positive_runs)
			fake_command(request, arg);
		return 1;
	}
	ret = fd == fake.fd ? fake_command(request, arg) : ENOTTY;
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
	struct fake_pin *p;
	void *m;

	if (!real_mmap)
		real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (fd < 0 || fd != fake.fd)
		return real_mmap(addr, len, prot, flags, fd, offset);
	fake.last_offset = offset;
	p = fake_pin_of((gdr_hnd_t)offset >> page_shift());
	if (!p || !(flags & MAP_SHARED) || p->map || (p->addr & 0xffff)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	m = real_mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return m;
	p->map = m;
	p->map_len = len;
	p->map_type = fake.wrong_type ? GDR_MR_CACHING :
		      p->req_type != GDR_MR_NONE ? p->req_type : GDR_MR_WC;
	return m;
}

static int fake_munmap(void *addr, size_t len)
{
	static int (*real_munmap)(void *, size_t);

	if (!real_munmap)
		real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	for (int i = 0; i < FAKE_PINS; i++) {
		struct fake_pin *p = &fake.pins[i];

		if (p->used && p->map == addr) {
			if (p->map_len != len) {
				errno = EINVAL;
				return -1;
			}
			p->map = NULL;
			p->map_type = GDR_MR_NONE;
		}
	}
	return real_munmap(addr, len);
}

/* The device file's release, as the kernel's: the driver unpins what the file still holds. */
static int fake_close(int fd)
{
	static int (*real_close)(int);

	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (fd >= 0 && fd == fake.fd) {
		for (int i = 0; i < FAKE_PINS; i++)
			fake.pins[i].used = 0;
		fake.fd = -1;
		if (fake.fail_close) {
			real_close(fd);
			errno = fake.fail_close;
			return -1;
		}
	}
	return real_close(fd);
}

static const struct failing_device fake_device = {
	.ioctl = fake_ioctl,
	.mmap = fake_mmap,
	.munmap = fake_munmap,
	.close = fake_close,
};

static int fake_maps(void)
{
	int n = 0;

	for (int i = 0; i < FAKE_PINS; i++)
		n += fake.pins[i].used && fake.pins[i].map;
	return n;
}

#define GVA 0x7f0000000000ULL

/* The open's errors since the last call, in log (what gdr_ext_take_errors gives). */
static char open_log[GDR_EXT_ERRORS_MAX];

static gdr_t open_logged(void)
{
	gdr_t g;

	gdr_ext_take_errors(NULL, 0);
	g = gdr_open();
	gdr_ext_take_errors(open_log, sizeof(open_log));
	return g;
}

/* Each refusal says what to do about it. */
static int case_open_refusals(void)
{
	gdr_t g;

	fake_reset(0x10005);
	g = open_logged();
	EXPECT(!g, "gdr_open accepted gdrdrv 1.5");
	EXPECT(strstr(open_log, "gdrdrv 1.5 is too old") &&
	       strstr(open_log, "and reload it (rmmod gdrdrv; modprobe gdrdrv)"),
	       "the refusal of gdrdrv 1.5 does not say what to do: %s", open_log);
	if (g)
		gdr_close(g);
	fake_reset(0x20006);
	fake.min_api = 0x20007;
	g = open_logged();
	EXPECT(!g, "gdr_open accepted a gdrdrv that wants libgdrapi 2.7");
	EXPECT(strstr(open_log, "gdrdrv needs libgdrapi 2.7 or newer") &&
	       strstr(open_log, "install the libgdrapi of the loaded gdrdrv's release"),
	       "the refusal of a gdrdrv that wants libgdrapi 2.7 does not say what to do: %s",
	       open_log);
	if (g)
		gdr_close(g);
	/* The limits themselves are met: the oldest gdrdrv, and one that wants this library. */
	fake_reset(MINIMUM_GDRDRV_VERSION);
	g = gdr_open();
	EXPECT(g, "gdr_open refused gdrdrv %#x, the oldest it takes", MINIMUM_GDRDRV_VERSION);
	if (g)
		gdr_close(g);
	fake_reset(0x20006);
	fake.min_api = GDR_API_VERSION;
	g = gdr_open();
	EXPECT(g, "gdr_open refused a gdrdrv that wants this libgdrapi, %#x", GDR_API_VERSION);
	if (g)
		gdr_close(g);
	return TEST_PASS;
}

/* gdr_info_t before 2.4, as NCCL declares it; the library still exports gdr_get_info for it. */
struct info_v1 {
	uint64_t va, mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1, wc_mapping:1;
};
extern int gdr_get_info_v1(gdr_t g, gdr_mh_t mh, struct info_v1 *info) __asm__("gdr_get_info");

/* A 2.6 driver: the new commands, tokens through PIN_BUFFER, 64-bit handles. */
static int case_driver_2_6(void)
{
	int v = -1, major = 0, minor = 0, flag = -1;
	gdr_mh_t mh, legacy;
	struct info_v1 v1;
	gdr_info_t info;
	void *va = NULL;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 3 * 65536, GDR_PIN_FLAG_FORCE_PCIE, &mh), "pin_v2");
	EXPECT(fake_count(GDRDRV_IOC_PIN_BUFFER_V2) == 1, "PIN_BUFFER_V2 not sent");
	EXPECT(fake.pins[0].flags == GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE, "flags %u",
	      fake.pins[0].flags);
	EXPECT(!gdr_pin_buffer(g, GVA + 0x100000, 65536, 0xabcdef, 7, &legacy), "legacy pin");
	EXPECT(fake_count(GDRDRV_IOC_PIN_BUFFER) == 1, "gdr_pin_buffer did not use PIN_BUFFER");
	EXPECT(fake.pins[1].p2p_token == 0xabcdef && fake.pins[1].va_space == 7,
	      "tokens %llx/%u", (unsigned long long)fake.pins[1].p2p_token, fake.pins[1].va_space);
	EXPECT(!gdr_get_info(g, mh, &info) && info.va == GVA && info.mapped_size == 3 * 65536 &&
	      info.page_size == 65536 && !info.mapped && info.cycles_per_ms == 1000,
	      "info after pin");
	EXPECT(fake_count(GDRDRV_IOC_GET_INFO_V2) >= 2 && !fake_count(GDRDRV_IOC_GET_INFO),
	      "GET_INFO_V2 not used");
	/* The v1 call hands on every field the driver gave, its clock included. */
	memset(&v1, 0, sizeof(v1));
	EXPECT(!gdr_get_info_v1(g, mh, &v1) && v1.va == GVA && v1.mapped_size == 3 * 65536 &&
	       v1.page_size == 65536 && v1.tm_cycles == 77 && v1.cycles_per_ms == 1000 &&
	       !v1.mapped, "v1 info after pin: tm_cycles %llu, cycles_per_ms %u",
	       (unsigned long long)v1.tm_cycles, v1.cycles_per_ms);

	EXPECT(!gdr_map(g, mh, &va, 3 * 65536), "map");
	EXPECT(fake.last_offset == (off_t)(FAKE_FIRST_HANDLE << page_shift()), "mmap offset %llx",
	      (unsigned long long)fake.last_offset);
	EXPECT(fake_count(GDRDRV_IOC_REQ_MAPPING_TYPE) == 1 && fake.pins[0].req_type == GDR_MR_NONE,
	      "REQ_MAPPING_TYPE(NONE) not sent for a default map");
	EXPECT(!gdr_get_info(g, mh, &info) && info.mapped && info.wc_mapping &&
	      info.mapping_type == GDR_MAPPING_TYPE_WC, "info while mapped");
	EXPECT(!gdr_unmap(g, mh, va, 3 * 65536) && !fake_maps(), "unmap");
	EXPECT(!gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_WC_MAPPING) &&
	      fake.pins[0].req_type == GDR_MR_WC, "map_v2 REQ_WC");
	EXPECT(!gdr_unmap(g, mh, va, 65536), "unmap 2");
	EXPECT(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_CACHE_MAPPING) == EOPNOTSUPP &&
	      !fake_maps(), "the driver's EOPNOTSUPP for REQ_CACHE");

	EXPECT(!gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v) && v == 1, "attr 1");
	EXPECT(!gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v) && v == 0,
	      "attr 2");
	EXPECT(fake_count(GDRDRV_IOC_GET_ATTR) == 2, "GET_ATTR not sent");
	EXPECT(!gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v) && v == 0, "attr 3");
	fake.pins[0].cb_flag = 1;
	EXPECT(!gdr_get_callback_flag(g, mh, &flag) && flag == 1, "callback flag");
	EXPECT(!gdr_driver_get_version(g, &major, &minor) && major == 2 && minor == 6,
	      "driver version %d.%d", major, minor);
	EXPECT(fake_count(GDRDRV_IOC_GET_VERSION) == 1, "GET_VERSION sent again");
	EXPECT(!gdr_close(g), "close");
	EXPECT(!fake.pins[0].used && !fake.pins[1].used, "gdr_close left pins");
	return TEST_PASS;
}

/* 2.5 is the first with GET_ATTR, PIN_BUFFER_V2 and REQ_MAPPING_TYPE: it gets all three. */
static int case_driver_2_5(void)
{
	void *va = NULL;
	gdr_mh_t mh;
	int v = -1;
	gdr_t g;

	g = open_driver(0x20005);
	if (!g)
		return 0;
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, GDR_PIN_FLAG_FORCE_PCIE, &mh) &&
	       fake_count(GDRDRV_IOC_PIN_BUFFER_V2) == 1, "PIN_BUFFER_V2 not sent to 2.5");
	EXPECT(!gdr_map(g, mh, &va, 65536) && fake_count(GDRDRV_IOC_REQ_MAPPING_TYPE) == 1,
	       "REQ_MAPPING_TYPE not sent to 2.5");
	EXPECT(!gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v) && v == 1 &&
	       fake_count(GDRDRV_IOC_GET_ATTR) == 1, "GET_ATTR not sent to 2.5");
	EXPECT_ERR(gdr_unmap(g, mh, va, 65536), 0);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/* 2.4 has GET_INFO_V2 but none of 2.5's commands. */
static int case_driver_2_4(void)
{
	int v = -1;
	gdr_info_t info;
	void *va = NULL;
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20004);
	if (!g)
		return 0;
	EXPECT(gdr_pin_buffer_v2(g, GVA, 65536, GDR_PIN_FLAG_FORCE_PCIE, &mh) == EINVAL &&
	      !fake_count(GDRDRV_IOC_PIN_BUFFER) && !fake_count(GDRDRV_IOC_PIN_BUFFER_V2),
	      "pin flags on 2.4 must be EINVAL without an ioctl");
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), "pin_v2 without flags");
	EXPECT(fake_count(GDRDRV_IOC_PIN_BUFFER) == 1 && !fake_count(GDRDRV_IOC_PIN_BUFFER_V2),
	      "2.4 must get PIN_BUFFER");
	EXPECT(!gdr_map(g, mh, &va, 65536) && !fake_count(GDRDRV_IOC_REQ_MAPPING_TYPE),
	      "map without REQ_MAPPING_TYPE");
	EXPECT(!gdr_get_info(g, mh, &info) && info.mapping_type == GDR_MAPPING_TYPE_WC &&
	      fake_count(GDRDRV_IOC_GET_INFO_V2) && !fake_count(GDRDRV_IOC_GET_INFO),
	      "GET_INFO_V2 on 2.4");
	EXPECT(!gdr_unmap(g, mh, va, 65536), "unmap");
	/* The driver cannot be asked; it maps WC, so a cached request fails and is unmapped. */
	EXPECT(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_CACHE_MAPPING) == EINVAL &&
	      !fake_maps(), "REQ_CACHE on 2.4: EINVAL and unmapped");
	EXPECT(!gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v) && v == 0 &&
	      !fake_count(GDRDRV_IOC_GET_ATTR), "attributes of 2.4 are 0, unasked");
	EXPECT(!gdr_close(g), "close");
	return TEST_PASS;
}

/*
 * Below 2.5 (NVIDIA's gdrdrv before 2.4.2 reports 2.4 too) a pin reaches the driver in whole GPU
 * pages, which NVIDIA's driver from R555 on requires and those drivers did not make (GDRCopy
 * #299, #305); from 2.5, as the caller gave it, in either command. What the caller sees is the
 * same: info.va and mapped_size are those of the pages that hold the range.
 */
static int case_pins_in_whole_pages_below_2_5(void)
{
	static const struct { uint32_t version; int rounds; } drivers[] = {
		{ 0x20003, 1 }, { 0x20004, 1 }, { 0x20005, 0 }, { 0x20006, 0 },
	};
	static const struct { uint64_t offset, size, pages; } ranges[] = {
		{ 0x1008, 8, 1 }, { 0xfff8, 16, 2 }, { 0, 65536, 1 }, { 0x10, 0x1fff0, 2 },
	};

	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
			for (int legacy = 0; legacy < 2; legacy++) {
				uint64_t addr = GVA + ranges[r].offset, size = ranges[r].size;
				uint64_t want_addr = drivers[d].rounds ? GVA : addr;
				uint64_t want_size = drivers[d].rounds ? ranges[r].pages * 65536 :
						     size;
				gdr_info_t info = { 0 };
				gdr_mh_t mh;
				int ret;
				gdr_t g = open_driver(drivers[d].version);

				if (!g)
					return 0;
				ret = legacy ? gdr_pin_buffer(g, addr, size, 0, 0, &mh) :
					       gdr_pin_buffer_v2(g, addr, size, 0, &mh);
				EXPECT(!ret, "gdrdrv %#x: pin of %#llx+%llu: %s", drivers[d].version,
				       (unsigned long long)addr, (unsigned long long)size,
				       strerror(ret));
				EXPECT(fake.pins[0].addr == want_addr &&
				       fake.pins[0].size == want_size,
				       "gdrdrv %#x, %s: pin of %#llx+%llu reached the driver as "
				       "%#llx+%llu, not %#llx+%llu", drivers[d].version,
				       legacy ? "gdr_pin_buffer" : "gdr_pin_buffer_v2",
				       (unsigned long long)addr, (unsigned long long)size,
				       (unsigned long long)fake.pins[0].addr,
				       (unsigned long long)fake.pins[0].size,
				       (unsigned long long)want_addr,
				       (unsigned long long)want_size);
				EXPECT(!ret && !gdr_get_info(g, mh, &info) && info.va == GVA &&
				       info.mapped_size == ranges[r].pages * 65536,
				       "gdrdrv %#x: info of %#llx+%llu: va %#llx, mapped size %llu",
				       drivers[d].version, (unsigned long long)addr,
				       (unsigned long long)size, (unsigned long long)info.va,
				       (unsigned long long)info.mapped_size);
				EXPECT_ERR(gdr_close(g), 0);
			}
		}
	}
	return TEST_PASS;
}

/*
 * gdr_unpin_buffer of a mapped pin: below 2.5 (NVIDIA's gdrdrv before 2.4.4 reports 2.4 too) the
 * mapping goes before the UNPIN, which would otherwise free what the munmap's close writes to
 * (GDRCopy #314); a refused UNPIN then leaves the pin unmapped, usable and mappable again. From
 * 2.5 the UNPIN goes first, so that a refusal leaves the mapping as it was.
 */
static int case_unpin_of_a_mapped_pin(void)
{
	static const uint32_t versions[] = { 0x20003, 0x20004, 0x20005, 0x20006 };
	uint64_t word = 7;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		int old = versions[i] < 0x20005;
		void *va = NULL;
		gdr_mh_t mh;
		gdr_t g = open_driver(versions[i]);

		if (!g)
			return 0;
		EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh) && !gdr_map(g, mh, &va, 65536),
		       "pin and map on %#x", versions[i]);
		EXPECT(!gdr_unpin_buffer(g, mh) && !fake_maps(), "unpin of a mapped pin on %#x",
		       versions[i]);
		EXPECT(fake.unpinned_mapped == !old, "%#x: %d UNPINs of a mapped pin, want %d",
		       versions[i], fake.unpinned_mapped, !old);

		EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh) && !gdr_map(g, mh, &va, 65536),
		       "pin and map again on %#x", versions[i]);
		fake.fail_unpin = 1;
		EXPECT(gdr_unpin_buffer(g, mh) == EIO, "a refused unpin on %#x", versions[i]);
		if (old) {
			EXPECT(!fake_maps() && gdr_copy_to_mapping(mh, va, &word, 8) == EINVAL &&
			       gdr_unmap(g, mh, va, 65536) == EINVAL,
			       "%#x: a refused unpin left the pin mapped", versions[i]);
			EXPECT(!gdr_map(g, mh, &va, 65536) && !gdr_copy_to_mapping(mh, va, &word, 8),
			       "%#x: the pin cannot be mapped again", versions[i]);
		} else {
			EXPECT(fake_maps() == 1 && !gdr_copy_to_mapping(mh, va, &word, 8),
			       "%#x: a refused unpin took the mapping away", versions[i]);
		}
		EXPECT(!gdr_close(g), "close on %#x", versions[i]);
	}
	return TEST_PASS;
}

/*
 * A driver that answers an ioctl with neither 0 nor -1, or a GET_INFO that does not hold the
 * pin: the call fails with EPROTO, saying so, and the driver is left holding no pin (a pin that
 * answered 1 having pinned is given back; one that wrote no handle is not unpinned at random).
 */
static int case_odd_answers(void)
{
	static const unsigned long pins[] = { GDRDRV_IOC_PIN_BUFFER_V2, GDRDRV_IOC_PIN_BUFFER };
	char log[GDR_EXT_ERRORS_MAX] = "";
	gdr_mh_t mh;
	gdr_t g = open_driver(0x20006);

	if (!g)
		return 0;
	for (int i = 0; i < 2; i++) {
		for (int runs = 0; runs < 2; runs++) {
			fake.positive_cmd = pins[i];
			fake.positive_runs = runs;
			fake.ncmds = 0;
			gdr_ext_take_errors(NULL, 0);
			EXPECT((i ? gdr_pin_buffer(g, GVA, 65536, 0, 0, &mh) :
				    gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh)) == EPROTO,
			       "a pin answered 1 (%s) is not EPROTO", runs ? "having pinned" : "");
			gdr_ext_take_errors(log, sizeof(log));
			EXPECT(strstr(log, "returned 1, where a gdrdrv returns 0 or -1"),
			       "the log does not say the answer was odd: %s", log);
			EXPECT(!fake_pins() && fake_count(GDRDRV_IOC_UNPIN_BUFFER) == runs,
			       "%ld pins left, %d UNPINs after a pin answered 1 (%s)", fake_pins(),
			       fake_count(GDRDRV_IOC_UNPIN_BUFFER), runs ? "pinned" : "no handle");
		}
	}
	fake.info_va_shift = 65536;
	gdr_ext_take_errors(NULL, 0);
	EXPECT(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh) == EPROTO && !fake_pins(),
	       "a GET_INFO whose va is past the pin");
	gdr_ext_take_errors(log, sizeof(log));
	EXPECT(strstr(log, "which do not hold it"), "the log does not say why: %s", log);
	fake.info_va_shift = 0;
	fake.info_size_zero = 1;
	EXPECT(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh) == EPROTO && !fake_pins(),
	       "a GET_INFO of mapped size 0");
	fake.info_size_zero = 0;
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh) && fake_pins() == 1,
	       "a pin after the odd answers");
	EXPECT(!gdr_close(g), "close");
	return TEST_PASS;
}

/* 2.3 has only GET_INFO: the mapping type comes from mapped and wc_mapping. */
static int case_driver_2_3(void)
{
	gdr_info_t info;
	void *va = NULL;
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20003);
	if (!g)
		return 0;
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 2 * 65536, 0, &mh), "pin");
	EXPECT(!gdr_get_info(g, mh, &info) && !info.mapped &&
	      info.mapping_type == GDR_MAPPING_TYPE_NONE, "info unmapped");
	EXPECT(!gdr_map(g, mh, &va, 2 * 65536), "map");
	EXPECT(!gdr_get_info(g, mh, &info) && info.mapped && info.wc_mapping &&
	      info.mapping_type == GDR_MAPPING_TYPE_WC, "info mapped");
	EXPECT(fake_count(GDRDRV_IOC_GET_INFO) >= 3 && !fake_count(GDRDRV_IOC_GET_INFO_V2),
	      "2.3 must get GET_INFO only");
	EXPECT(!gdr_close(g), "close");
	return TEST_PASS;
}

/* Failures after mmap unmap again; a failed unpin keeps the handle; a failed pin unpins. */
static int case_error_paths(void)
{
	void *va = NULL;
	gdr_mh_t mh, mh2;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), "pin");
	fake.unmap_at_info = 1;
	EXPECT(gdr_map(g, mh, &va, 65536) == EAGAIN && !fake_maps(),
	      "torn down at once: EAGAIN and unmapped");
	fake.wrong_type = 1;
	EXPECT(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_WC_MAPPING) == EINVAL &&
	      !fake_maps(), "other type than asked: EINVAL and unmapped");
	fake.wrong_type = 0;
	fake.fail_info = 1;
	EXPECT(gdr_map(g, mh, &va, 65536) == EIO && !fake_maps(), "GET_INFO failing after mmap");
	fake.fail_unpin = 1;
	EXPECT(gdr_unpin_buffer(g, mh) == EIO, "unpin failure reported");
	EXPECT(!gdr_unpin_buffer(g, mh), "the handle survives a failed unpin");
	fake.fail_info = 1;
	EXPECT(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh2) == EIO, "GET_INFO failing after pin");
	EXPECT(!fake.pins[0].used && !fake.pins[1].used, "the failed pin was not undone");
	EXPECT(gdr_pin_buffer_v2(g, GVA + 8, 65536, 0, &mh2) == 0 &&
	      gdr_map(g, mh2, &va, 65536) == EINVAL, "map of an unaligned pin");
	EXPECT(!gdr_close(g), "close");
	return TEST_PASS;
}

/*
 * What the core refuses never reaches the driver: a pin at address 0, of 0 bytes or wrapping
 * the address space, a pin flag that does not exist (PIN_BUFFER_V2 would carry only the bits it
 * knows, so the driver could not refuse it), a map of 0 bytes. The library checks these itself
 * rather than count on what a driver of some version does with them.
 */
static int case_core_refusals(void)
{
	gdr_mh_t mh = { 0x5a5a }, pinned;
	void *va = (void *)0x1;
	int ncmds;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	EXPECT_ERR(gdr_pin_buffer_v2(g, 0, 65536, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, 0, 65536, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, ~0UL - 65535, 2 * 65536, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 2, &mh), EINVAL);
	EXPECT(!fake_count(GDRDRV_IOC_PIN_BUFFER) && !fake_count(GDRDRV_IOC_PIN_BUFFER_V2),
	       "a refused pin reached the driver (%d PIN_BUFFER, %d PIN_BUFFER_V2)",
	       fake_count(GDRDRV_IOC_PIN_BUFFER), fake_count(GDRDRV_IOC_PIN_BUFFER_V2));
	EXPECT(mh.h == 0x5a5a, "a refused pin wrote its handle");
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &pinned), 0);
	ncmds = fake.ncmds;
	EXPECT_ERR(gdr_map(g, pinned, &va, 0), EINVAL);
	EXPECT(fake.ncmds == ncmds && !fake_maps() && va == (void *)0x1,
	       "a map of 0 bytes reached the driver");
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/* A command interrupted by a signal (EINTR) is sent again, not failed. */
static int case_eintr(void)
{
	void *va = NULL;
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	fake.eintr = 2;
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), 0);
	fake.eintr = 1;
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), 0);
	EXPECT(!fake.eintr, "EINTR was not met");
	EXPECT_ERR(gdr_unmap(g, mh, va, 65536), 0);
	/* A driver that is interrupted for ever: the call gives up, with EINTR, and can go on. */
	fake.eintr = 1 << 30;
	EXPECT_ERR(gdr_unpin_buffer(g, mh), EINTR);
	fake.eintr = 0;
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/*
 * A kernel handle whose mmap offset (the handle in pages) does not fit off_t: gdr_map refuses
 * it before any mmap, where the shifted offset would wrap to another pin's.
 */
static int case_huge_handle(void)
{
	void *va = (void *)0x1;
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	fake.next_handle = 1ULL << 62;
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), 0);
	fake.last_offset = -1;
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), EINVAL);
	EXPECT(fake.last_offset == -1 && !fake_maps() && va == (void *)0x1,
	       "the device was mmapped at offset %#llx", (unsigned long long)fake.last_offset);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/*
 * A driver that grants a device mapping (GDR_MAP_FLAG_REQ_DEVICE_MAPPING, gdrdrv 2.5 on
 * platforms that have it): the library knows the type, so it maps, says so, and copies.
 */
static int case_device_mapping(void)
{
	uint64_t word = 0x0102030405060708ULL, back = 0;
	gdr_info_t info;
	void *va = NULL;
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	fake.device_ok = 1;
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), 0);
	EXPECT_ERR(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_DEVICE_MAPPING), 0);
	EXPECT(va && fake_maps() == 1, "no mapping");
	EXPECT(!gdr_get_info(g, mh, &info) && info.mapped && !info.wc_mapping &&
	       info.mapping_type == GDR_MAPPING_TYPE_DEVICE, "info: mapped %d, type %d",
	       (int)info.mapped, (int)info.mapping_type);
	if (va) {
		EXPECT(!gdr_copy_to_mapping(mh, va, &word, sizeof(word)) &&
		       !gdr_copy_from_mapping(mh, &back, va, sizeof(back)) && back == word,
		       "copies through the device mapping");
		EXPECT_ERR(gdr_unmap(g, mh, va, 65536), 0);
	}
	EXPECT(!fake_maps(), "unmap left the mapping");
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/*
 * A driver that reports mapping types this library does not know (a newer gdrdrv, or any node
 * given through GDRCOPY_GDRDRV_PATH): gdr_map refuses and undoes the mapping (nothing of it is
 * left for the unpin), gdr_get_info refuses, and the pin stays usable.
 */
static int case_unknown_mapping_types(void)
{
	static const uint32_t types[] = { 4, 8, 0x40000000 };
	gdr_info_t info;
	uint64_t word = 0x1122334455667788ULL, back = 0;
	void *va = (void *)0x1;
	char errors[512];
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	/* A refused mapping leaves nothing for the unpin to undo: it reports no failure. */
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), "pin");
	fake.report_type = types[0];
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), EPROTO);
	fake.report_type = 0;
	gdr_ext_take_errors(NULL, 0);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT(!gdr_ext_take_errors(errors, sizeof(errors)),
	       "the unpin after a refused mapping failed at something: '%s'", errors);
	EXPECT(!gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), "pin");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		fake.report_type = types[i];
		EXPECT(gdr_map(g, mh, &va, 65536) == EPROTO, "map reporting type %#x", types[i]);
		EXPECT(va == (void *)0x1 && !fake_maps(), "type %#x: the mapping was not undone",
		      types[i]);
		EXPECT(!gdr_get_info(g, mh, &info) && !info.mapped &&
		      info.mapping_type == GDR_MAPPING_TYPE_NONE, "info after type %#x", types[i]);
	}
	/* Mapped as WC, then the driver changes its story: get_info refuses, the rest works. */
	fake.report_type = 0;
	EXPECT(!gdr_map(g, mh, &va, 65536), "map after the refusals");
	EXPECT(!gdr_copy_to_mapping(mh, va, &word, sizeof(word)) &&
	      !gdr_copy_from_mapping(mh, &back, va, sizeof(back)) && back == word, "copies");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		fake.report_type = types[i];
		memset(&info, 0x5a, sizeof(info));
		EXPECT(gdr_get_info(g, mh, &info) == EPROTO && info.va == 0x5a5a5a5a5a5a5a5aULL,
		      "get_info reporting type %#x", types[i]);
	}
	fake.report_type = 0;
	EXPECT(!gdr_unmap(g, mh, va, 65536) && !fake_maps(), "unmap");
	EXPECT(!gdr_unpin_buffer(g, mh), "unpin");
	EXPECT(!gdr_close(g), "close");
	return TEST_PASS;
}

/*
 * gdr_close of pins still mapped: GDRCopy's leaves the gdrdrv mappings in place, revoked (a
 * touch raises SIGBUS); this library unmaps them first (gdr_close(3): a touch raises SIGSEGV).
 */
static int case_close_unmaps(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *va[2] = { NULL, NULL };
	gdr_mh_t mh[2];
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	for (int i = 0; i < 2; i++) {
		EXPECT(!gdr_pin_buffer_v2(g, GVA + (uint64_t)i * 0x100000, 2 * 65536, 0, &mh[i]) &&
		      !gdr_map(g, mh[i], &va[i], 2 * 65536), "pin and map %d", i);
	}
	EXPECT(fake_maps() == 2, "%d mappings before gdr_close", fake_maps());
	EXPECT(!gdr_close(g), "close");
	EXPECT(!fake_maps() && !fake.pins[0].used && !fake.pins[1].used,
	      "gdr_close left %d mappings", fake_maps());
	/* msync of a range with nothing mapped in it fails with ENOMEM. */
	for (int i = 0; i < 2; i++)
		EXPECT(va[i] && msync(va[i], (size_t)page, MS_ASYNC) == -1 && errno == ENOMEM,
		      "mapping %d (%p) is still in the address space after gdr_close", i, va[i]);
	return TEST_PASS;
}

static int child_checks_device(void *arg)
{
	int fd = *(const int *)arg;

	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
	      "the fork child still holds the parent's /dev/gdrdrv descriptor %d", fd);
	return TEST_PASS;
}

/*
 * A fork child does not keep the parent's device file (src/fork_fds.c): its pins would stay
 * with the child's copy of it until the child exits.
 */
static int case_fork_closes_device(void)
{
	const struct test_child child = { .timeout_s = 30, .quick_exit = true };
	gdr_mh_t mh;
	int fd;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	fd = fake.fd;
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), 0);
	EXPECT(test_child_run(&child, child_checks_device, &fd) == TEST_PASS, "fork child: %s",
	       test_reason());
	EXPECT(fcntl(fd, F_GETFD) != -1, "the parent lost its device descriptor");
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

/* The library blocks a gdr_close freed, in the child (child) and in the parent (parent). */
struct close_frees {
	gdr_t g;
	int *child;
};

static int child_closes_inherited(void *arg)
{
	const struct close_frees *c = arg;
	int before = failing_library_blocks();

	CHECK_ERR(gdr_close(c->g), 0);
	*c->child = before - failing_library_blocks();
	return TEST_PASS;
}

/*
 * A fork child's gdr_close of its parent's gdr_t calls no driver, but frees the child's copy of
 * every block of the library's for it, the backend's included (forget, forget_pin): as many as
 * the parent's gdr_close of the same gdr_t frees. The child writes its count into a shared
 * page. (Under ASan the blocks go uncounted, and both counts are 0.)
 */
static int case_fork_child_close_frees_what_the_parents_frees(void)
{
	const struct test_child child = { .timeout_s = 30, .quick_exit = true };
	int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct close_frees c = { .child = shared };
	int before, parent;
	gdr_mh_t mh[2];
	void *va;

	CHECK(shared != MAP_FAILED, "mmap of a shared page: %s", strerror(errno));
	*shared = -1;
	c.g = open_driver(0x20006);
	if (!c.g) {
		munmap(shared, 4096);
		return TEST_FAIL;
	}
	EXPECT_ERR(gdr_pin_buffer_v2(c.g, GVA, 65536, 0, &mh[0]), 0);
	EXPECT_ERR(gdr_pin_buffer_v2(c.g, GVA + 65536, 65536, 0, &mh[1]), 0);
	EXPECT_ERR(gdr_map(c.g, mh[1], &va, 65536), 0);
	EXPECT(test_child_run(&child, child_closes_inherited, &c) == TEST_PASS, "fork child: %s",
	       test_reason());
	before = failing_library_blocks();
	EXPECT_ERR(gdr_close(c.g), 0);
	parent = before - failing_library_blocks();
	EXPECT(*shared == parent, "the child's gdr_close freed %d of the library's blocks, the "
	       "parent's %d", *shared, parent);
	munmap(shared, 4096);
	return TEST_PASS;
}

/* ---- the failing-calls loop ---- */

#define FAILING_GPU_VA (GVA + 128 * 1024)	/* on a GPU page, not the first */

static int failing_setup(uint64_t *dptr)
{
	fake_reset(0x20006);
	*dptr = FAILING_GPU_VA;
	return TEST_PASS;
}

static void failing_cleanup(void)
{
}

/* The GPU memory is the fake's mapping: where it holds the pinned byte at addr. */
static uint8_t *fake_bytes(uint64_t addr)
{
	for (int i = 0; i < FAKE_PINS; i++) {
		struct fake_pin *p = &fake.pins[i];
		uint64_t va = p->addr & ~0xffffULL;

		if (p->used && p->map && addr >= va && addr - va < p->map_len)
			return (uint8_t *)p->map + (addr - va);
	}
	return NULL;
}

static long fake_pins(void)
{
	long n = 0;

	for (int i = 0; i < FAKE_PINS; i++)
		n += fake.pins[i].used;
	return n;
}

static long fake_mappings(void)
{
	return fake_maps();
}

/* A failed close(2) of /dev/gdrdrv is gdr_close's return, as GDRCopy's; g is freed all the same. */
static int case_close_fails(void)
{
	char errors[512];
	gdr_mh_t mh;
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	EXPECT_ERR(gdr_pin_buffer_v2(g, GVA, 65536, 0, &mh), 0);
	fake.fail_close = EIO;
	gdr_ext_take_errors(NULL, 0);
	EXPECT_ERR(gdr_close(g), EIO);
	EXPECT(gdr_ext_take_errors(errors, sizeof(errors)) > 0 &&
	       strstr(errors, "gdr_close: closing /dev/null failed") != NULL,
	       "no error told of the failed close: '%s'", errors);
	EXPECT(!fake_pins(), "gdr_close left %ld pins", fake_pins());
	return TEST_PASS;
}

/*
 * gdr_close goes on past a failed unpin and returns the first error met: here each UNPIN_BUFFER
 * fails with its own errno, so whichever pin it releases first, that one's error is the answer.
 */
static int case_close_first_error(void)
{
	static const int errs[] = { EIO, EBUSY, 0 };
	gdr_mh_t mh[2];
	gdr_t g;

	g = open_driver(0x20006);
	if (!g)
		return 0;
	for (int i = 0; i < 2; i++)
		EXPECT_ERR(gdr_pin_buffer_v2(g, GVA + (uint64_t)i * 0x100000, 65536, 0, &mh[i]), 0);
	fake.unpin_errs = errs;
	EXPECT_ERR(gdr_close(g), EIO);
	EXPECT(fake.unpin_errs == errs + 2, "gdr_close tried %d of the 2 unpins",
	       (int)(fake.unpin_errs - errs));
	/* The device file's release unpinned what the failed unpins left. */
	EXPECT(!fake_pins(), "gdr_close left %ld pins", fake_pins());
	return TEST_PASS;
}

static int case_failing_calls(void)
{
	static const struct failing_counter counters[] = {
		{ "gdrdrv pins", fake_pins, false },
		{ "gdrdrv mappings", fake_mappings, false },
		{ NULL, NULL, false },
	};
	const struct failing_backend b = {
		.child = { .timeout_s = 60 },
		.setup = failing_setup,
		.cleanup = failing_cleanup,
		.gpu_bytes = fake_bytes,
		.counters = counters,
	};

	return failing_calls_run(&b);
}

static const struct test_case cases[] = {
	{ "open_refusals", case_open_refusals },
	{ "driver_2_6", case_driver_2_6 },
	{ "driver_2_5", case_driver_2_5 },
	{ "driver_2_4", case_driver_2_4 },
	{ "pins_in_whole_pages_below_2_5", case_pins_in_whole_pages_below_2_5 },
	{ "unpin_of_a_mapped_pin", case_unpin_of_a_mapped_pin },
	{ "odd_answers", case_odd_answers },
	{ "driver_2_3", case_driver_2_3 },
	{ "error_paths", case_error_paths },
	{ "core_refusals", case_core_refusals },
	{ "eintr", case_eintr },
	{ "huge_handle", case_huge_handle },
	{ "device_mapping", case_device_mapping },
	{ "unknown_mapping_types", case_unknown_mapping_types },
	{ "close_unmaps", case_close_unmaps },
	{ "close_fails", case_close_fails },
	{ "close_first_error", case_close_first_error },
	{ "fork_closes_device", case_fork_closes_device },
	{ "fork_child_close_frees_what_the_parents_frees",
	  case_fork_child_close_frees_what_the_parents_frees },
	{ "failing_calls", case_failing_calls },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	failing_calls_init();
	failing_set_device(&fake_device);
	setenv("GDRCOPY_BACKEND", "gdrdrv", 1);
	setenv("GDRCOPY_GDRDRV_PATH", "/dev/null", 1);
	return test_run(cases, argc, argv);
}

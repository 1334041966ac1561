/* SPDX-License-Identifier: MIT */
/*
 * gdrdrv's answers: the errors a provider reports (BAR1 exhaustion, GeForce's EINVAL) and
 * refused pins, attributes, the raw ioctl ABI's answers (also to 32-bit callers), refused pins
 * that leave the file as it was, and the bound on pins per file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrapi_ext.h"
#include "vmtest.h"

static int case_pin_errors(void)
{
	struct nvp2p_sim_alloc a, gone;
	gdr_mh_t mh, bad = { 0 };
	void *map;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &gone));
	CHECK_OK(vm_free(gone.va));

	CHECK_ERR(gdr_pin_buffer(g, 0, GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_ERR(gdr_pin_buffer(g, a.va, 0, 0, 0, &mh), EINVAL);
	/* Not GPU memory of this process, past the allocation's end, freed. */
	CHECK_ERR(gdr_pin_buffer(g, NVP2P_SIM_VA_BASE - GPU_PAGE, GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_ERR(gdr_pin_buffer(g, a.va, 3 * GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_ERR(gdr_pin_buffer(g, gone.va, GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_ERR(gdr_pin_buffer(g, ~0UL - 8, 64, 0, 0, &mh), EINVAL);
	CHECK(vm_pins() == 0, "refused pins left %llu pins", (unsigned long long)vm_pins());

	CHECK_OK(gdr_pin_buffer(g, a.va, 2 * GPU_PAGE, 0, 0, &mh));
	CHECK_ERR(gdr_map(g, mh, &map, 3 * GPU_PAGE), EINVAL);
	CHECK_ERR(gdr_unmap(g, mh, (void *)0x1000, GPU_PAGE), EINVAL);
	CHECK_OK(gdr_map(g, mh, &map, 2 * GPU_PAGE));
	CHECK_ERR(gdr_map(g, mh, &map, 2 * GPU_PAGE), EAGAIN);
	CHECK_OK(gdr_unmap(g, mh, map, 2 * GPU_PAGE));
	CHECK_ERR(gdr_unmap(g, mh, map, 2 * GPU_PAGE), EINVAL);
	CHECK_OK(gdr_unpin_buffer(g, mh));
	CHECK_ERR(gdr_unpin_buffer(g, mh), EINVAL);
	CHECK_ERR(gdr_unpin_buffer(g, bad), EINVAL);
	return TEST_PASS;
}

/* The provider's errors reach the caller unchanged and leave nothing pinned. */
static int case_provider_errors(void)
{
	static const struct { uint32_t err; const char *as; } errs[] = {
		{ ENOMEM, "BAR1 exhaustion" }, { EINVAL, "a GeForce board" },
		{ EIO, "an RM failure" }, { EBUSY, "a busy GPU" }, { ENODEV, "a lost GPU" },
	};
	struct nvp2p_sim_alloc a;
	unsigned int i;
	uint64_t h;
	gdr_mh_t mh;
	gdr_t g = vm_gdr_open();
	int fd = vm_gdrdrv_open();

	CHECK(g && fd >= 0, "gdr_open or open");
	CHECK_OK(vm_alloc(4 * GPU_PAGE, 0, &a));
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		CHECK_OK(vm_inject(1, errs[i].err));
		CHECK(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh) == (int)errs[i].err,
		      "the pin did not report %s as %s", errs[i].as, test_strerror(errs[i].err));
		CHECK_OK(vm_inject(1, errs[i].err));
		CHECK_ERR(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h), (int)errs[i].err);
		CHECK(vm_pins() == 0, "a failed pin left a pin");
	}
	/* Exhaustion ends: the next pin works. */
	CHECK_OK(vm_inject(2, ENOMEM));
	CHECK_ERR(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh), ENOMEM);
	CHECK_ERR(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh), ENOMEM);
	CHECK_OK(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh));
	CHECK_OK(gdr_unpin_buffer(g, mh));
	return TEST_PASS;
}

#define PARAMS_DIR "/sys/module/gdrdrv/parameters/"

/* The permission bits of path, or -1 (errno set) if there is no such file. */
static int file_mode(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

/* The "NAME: VALUE" line of /proc/driver/gdrdrv/params says value. */
static int params_line_is(const char *name, const char *value)
{
	char line[128], want[128];
	int found = 0;
	FILE *f = fopen("/proc/driver/gdrdrv/params", "r");

	CHECK(f, "no /proc/driver/gdrdrv/params");
	snprintf(want, sizeof(want), "%s: %s\n", name, value);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':')
			found = strcmp(line, want) == 0 ? 1 : -1;
	fclose(f);
	CHECK(found == 1, "/proc/driver/gdrdrv/params %s \"%s: %s\"",
	      found ? "says otherwise than" : "lacks", name, value);
	return TEST_PASS;
}

/*
 * What the module shows outside ioctls: the device with its default mode (dev_mode, 0666:
 * GDRCopy's scripts' mode, which users' programs rely on), the parameters fixed at load
 * read-only, the procfs files read-only, and params' log switches as they are now (a switch
 * turned on after the load is shown on).
 */
static int module_files_check(void)
{
	static const struct { const char *path; int mode; } modes[] = {
		{ "/dev/gdrdrv", 0666 },
		{ "/proc/driver/gdrdrv/params", 0444 },
		{ "/proc/driver/gdrdrv/nv_get_pages_refcount", 0444 },
		{ PARAMS_DIR "use_persistent_mapping", 0444 },
		{ PARAMS_DIR "dev_mode", 0444 },
		{ PARAMS_DIR "max_pins_per_file", 0644 },
		{ PARAMS_DIR "dbg_enabled", 0644 },
		{ PARAMS_DIR "info_enabled", 0644 },
	};
	long long dbg, info;
	char v[24];
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		CHECK(file_mode(modes[i].path) == modes[i].mode, "%s has mode %#o, not %#o",
		      modes[i].path, file_mode(modes[i].path), modes[i].mode);
	CHECK_OK(params_line_is("Version", GDRDRV_VERSION_STRING));
	CHECK_OK(vm_read_number(PARAMS_DIR "dbg_enabled", &dbg));
	CHECK_OK(vm_read_number(PARAMS_DIR "info_enabled", &info));
	snprintf(v, sizeof(v), "%lld", dbg);
	CHECK_OK(params_line_is("dbg_enabled", v));
	snprintf(v, sizeof(v), "%lld", info);
	CHECK_OK(params_line_is("info_enabled", v));
	/* Switched on and off again: each line follows its own switch. */
	CHECK_OK(vm_write_number(PARAMS_DIR "info_enabled", !info));
	snprintf(v, sizeof(v), "%d", !info);
	ret = params_line_is("info_enabled", v);
	if (ret == TEST_PASS) {
		snprintf(v, sizeof(v), "%lld", dbg);
		ret = params_line_is("dbg_enabled", v);
	}
	CHECK_OK(vm_write_number(PARAMS_DIR "info_enabled", info));
	return ret;
}

static int case_attributes_sanity(void)
{
	char line[128];
	int v, major, minor, seen = 0;
	gdr_t g = vm_gdr_open();
	FILE *f;

	CHECK(g, "gdr_open");
	CHECK_OK(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v));
	CHECK(v == vm_persistent(), "USE_PERSISTENT_MAPPING is %d in the %s phase", v,
	      vm_persistent() ? "persistent" : "non-persistent");
	CHECK_OK(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v));
	CHECK(v == vm_persistent(), "SUPPORT_PIN_FLAG_FORCE_PCIE is %d", v);
	CHECK_OK(gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v));
	CHECK(v == 0, "USING_DMA_BUF_MMAP is %d with gdrdrv", v);
	CHECK_OK(gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v));
	CHECK(v == GDR_BACKEND_GDRDRV, "backend %d", v);
	CHECK_ERR(gdr_get_attribute(g, (gdr_attr_t)0, &v), EINVAL);
	CHECK_ERR(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	CHECK_OK(gdr_driver_get_version(g, &major, &minor));
	CHECK(major == GDRDRV_MAJOR_VERSION && minor == GDRDRV_MINOR_VERSION, "driver %d.%d",
	      major, minor);

	f = fopen("/proc/driver/gdrdrv/params", "r");
	CHECK(f, "no /proc/driver/gdrdrv/params");
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Use persistent mapping: ", 24) == 0) {
			seen = 1;
			CHECK(strncmp(line + 24, vm_persistent() ? "yes" : "no", 2) == 0,
			      "params says %s", line);
		}
	}
	fclose(f);
	CHECK(seen, "params has no \"Use persistent mapping\" line");
	return module_files_check();
}

/* The VmFlags line of the mapping that starts at p, from /proc/self/smaps: 0 or an errno. */
static int vma_flags(const void *p, char *flags, size_t len)
{
	unsigned long start, end;
	char line[256];
	int in = 0, ret = ENOENT;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start == (unsigned long)p;
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(flags, len, "%s", line + 8);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Whether the VmFlags line flags has the two-letter flag name. */
static int has_vm_flag(const char *flags, const char *name)
{
	char word[8];

	snprintf(word, sizeof(word), " %s", name);
	for (const char *q = strstr(flags, word); q; q = strstr(q + 1, word))
		if (q[3] == ' ' || q[3] == '\n' || q[3] == '\0')
			return 1;
	return 0;
}

/*
 * What gdrdrv's mmap makes of a VMA: I/O memory of raw PFNs (io, pf: no get_user_pages, no
 * struct pages to take), not copied into fork children (dc), never grown by mremap (de: the
 * pin ends where the mapping does), left out of core dumps (dd: a dump reading BAR memory).
 */
static int check_vma_flags(void *map, size_t len)
{
	static const char *const want[] = { "io", "pf", "dc", "de", "dd" };
	char flags[256];
	unsigned int i;
	void *q;

	CHECK_OK(vma_flags(map, flags, sizeof(flags)));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(has_vm_flag(flags, want[i]), "the mapping's VmFlags lack %s:%s", want[i],
		      flags);
	q = mremap(map, len, len + GPU_PAGE, MREMAP_MAYMOVE);
	CHECK(q == MAP_FAILED, "mremap grew the mapping of a pin past its end");
	return TEST_PASS;
}

static int case_raw_ioctls(void)
{
	struct gdrdrv_get_version_params ver;
	struct gdrdrv_get_info_params info1 = { 0 };
	struct gdrdrv_get_info_v2_params info;
	struct gdrdrv_get_attr_params attr = { .attr = 99 };
	struct gdrdrv_pin_buffer_v2_params pin2 = { 0 };
	struct gdrdrv_req_mapping_type_params req = { 0 };
	struct nvp2p_sim_alloc a;
	uint32_t flag = 7, word[2] = { 0x5b1170, 0x5b1171 };
	uint64_t h;
	void *map, *p;
	int fd = vm_gdrdrv_open(), err;

	CHECK(fd >= 0, "open");
	CHECK_OK(vm_ioctl(fd, GDRDRV_IOC_GET_VERSION, &ver));
	CHECK(ver.gdrdrv_version == GDRDRV_VERSION &&
	      ver.minimum_gdr_api_version == MINIMUM_GDR_API_VERSION, "version %#x, minimum %#x",
	      ver.gdrdrv_version, ver.minimum_gdr_api_version);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_GET_ATTR, &attr), EINVAL);
	CHECK_ERR(vm_ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 9, 8), &attr), ENOTTY);
	err = vm_ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 'x', 1, 40), &pin2);
	CHECK(err == ENOTTY || err == EINVAL, "a foreign ioctl type gave %s", strerror(err));

	CHECK_OK(vm_alloc(4 * GPU_PAGE, 0, &a));
	pin2 = (struct gdrdrv_pin_buffer_v2_params){ .addr = a.va, .size = GPU_PAGE, .pad = 1 };
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &pin2), EINVAL);
	CHECK_ERR(vm_raw_pin(fd, a.va, GPU_PAGE, 0x2, &h), EINVAL);
	CHECK_OK(vm_raw_pin(fd, a.va + 100, 100000, 0, &h));
	CHECK_OK(vm_raw_info(fd, h, &info));
	CHECK(info.va == a.va && info.mapped_size == 2 * GPU_PAGE && info.page_size == GPU_PAGE &&
	      info.mapping_type == GDR_MR_NONE, "GET_INFO_V2: va %#llx size %llu type %u",
	      (unsigned long long)info.va, (unsigned long long)info.mapped_size, info.mapping_type);
	info1.handle = h;
	CHECK_OK(vm_ioctl(fd, GDRDRV_IOC_GET_INFO, &info1));
	CHECK(info1.handle == h && info1.va == a.va && !info1.mapped && !info1.wc_mapping,
	      "GET_INFO: handle %#llx (asked %#llx) va %#llx mapped %u wc_mapping %u",
	      (unsigned long long)info1.handle, (unsigned long long)h,
	      (unsigned long long)info1.va, info1.mapped, info1.wc_mapping);
	/*
	 * gdr_info_t's cycles_per_ms and tm_cycles (deprecated, still reported): both versions
	 * give the pin's own, and on x86 get_pages took some TSC cycles (arm64 counts none).
	 */
	vm_log("tsc_khz %u, tm_cycles %llu", info.tsc_khz, (unsigned long long)info.tm_cycles);
	CHECK(info1.tsc_khz == info.tsc_khz && info1.tm_cycles == info.tm_cycles,
	      "GET_INFO says tsc_khz %u tm_cycles %llu, GET_INFO_V2 %u and %llu", info1.tsc_khz,
	      (unsigned long long)info1.tm_cycles, info.tsc_khz,
	      (unsigned long long)info.tm_cycles);
#if defined(__x86_64__)
	CHECK(info.tm_cycles != 0, "GET_INFO_V2: get_pages took 0 TSC cycles");
#endif
	CHECK_OK(vm_raw_cb_flag(fd, h, &flag));
	CHECK(flag == 0, "callback flag %u on a live pin", flag);
	/* The pin is at offset 100: not mappable. */
	CHECK(!vm_raw_map(fd, h, GPU_PAGE, &err) && err == EINVAL, "mmap of an unaligned pin: %s",
	      strerror(err));
	CHECK_OK(vm_raw_unpin(fd, h));
	CHECK_ERR(vm_raw_info(fd, h, &info), EINVAL);
	CHECK_ERR(vm_raw_unpin(fd, h), EINVAL);

	CHECK_OK(vm_raw_pin(fd, a.va, 2 * GPU_PAGE, 0, &h));
	req = (struct gdrdrv_req_mapping_type_params){ .handle = h, .mapping_type = 7 };
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req), EINVAL);
	req = (struct gdrdrv_req_mapping_type_params){ .handle = h + 1000, .mapping_type = 1 };
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req), EINVAL);
	/* Device mappings are BlueField-3's alone (a root port of its, which no VM here has). */
	req = (struct gdrdrv_req_mapping_type_params){ .handle = h, .mapping_type = GDR_MR_DEVICE };
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req), EOPNOTSUPP);
	req = (struct gdrdrv_req_mapping_type_params){ .handle = h, .mapping_type = GDR_MR_WC };
	CHECK_OK(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req));
	CHECK(!vm_raw_map(fd, h, 3 * GPU_PAGE, &err) && err == EINVAL,
	      "mmap larger than the pin: %s", strerror(err));
	CHECK(!vm_raw_map(fd, h + 1, GPU_PAGE, &err) && err == EINVAL,
	      "mmap at an offset inside the handle's range: %s", strerror(err));
	p = mmap(NULL, GPU_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 (off_t)(h * CPU_PAGE));
	CHECK(p == MAP_FAILED, "a MAP_PRIVATE mapping succeeded");
	map = vm_raw_map(fd, h, 2 * GPU_PAGE, &err);
	CHECK(map, "mmap: %s", strerror(err));
	CHECK_OK(check_vma_flags(map, 2 * GPU_PAGE));
	CHECK_OK(vm_raw_info(fd, h, &info));
	CHECK(info.mapping_type == GDR_MR_WC, "mapping type %u after asking for WC",
	      info.mapping_type);
	/* GET_INFO (v1, what libgdrapi before 2.4 asks) says the same with its two flags. */
	info1 = (struct gdrdrv_get_info_params){ .handle = h };
	CHECK_OK(vm_ioctl(fd, GDRDRV_IOC_GET_INFO, &info1));
	CHECK(info1.handle == h && info1.mapped && info1.wc_mapping,
	      "GET_INFO of the WC mapping: handle %#llx (asked %#llx) mapped %u wc_mapping %u",
	      (unsigned long long)info1.handle, (unsigned long long)h, info1.mapped,
	      info1.wc_mapping);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req), EBUSY);
	CHECK(!vm_raw_map(fd, h, GPU_PAGE, &err) && err == EINVAL, "a second mmap: %s",
	      strerror(err));
	CHECK(munmap(map, 2 * GPU_PAGE) == 0, "munmap");
	CHECK_OK(vm_raw_info(fd, h, &info));
	CHECK(info.mapping_type == GDR_MR_NONE, "mapping type %u after munmap", info.mapping_type);
	map = vm_raw_map(fd, h, 2 * GPU_PAGE, &err);
	CHECK(map, "mmap after munmap: %s", strerror(err));

	/* Bad argument pointers. */
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER, NULL), EFAULT);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, (void *)8), EFAULT);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_GET_INFO_V2, NULL), EFAULT);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_GET_VERSION, (void *)-4096L), EFAULT);
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, NULL), EFAULT);

	/*
	 * A munmap of its first CPU page splits the mapping: what is left is still the pin's one
	 * mapping (no second mmap, no new type), and the unpin zaps it too. Its page is touched
	 * first, so that a page table entry is there to zap (a fault after the unpin fails anyway).
	 * That first touch is the piece's first fault, one CPU page into GPU page 0 (with 4 KiB
	 * pages): it maps the memory there, not the GPU page's start.
	 */
	CHECK_OK(vm_sim_write(a.va, &word[0], sizeof(word[0])));
	CHECK_OK(vm_sim_write(a.va + CPU_PAGE, &word[1], sizeof(word[1])));
	CHECK(munmap(map, CPU_PAGE) == 0, "munmap of the first page");
	map = (char *)map + CPU_PAGE;
	CHECK(vm_try_read32(map, &flag) == 0, "the rest of a split mapping faulted");
	CHECK(flag == word[1], "the rest of a split mapping reads %#x, the memory there holds %#x",
	      flag, word[1]);
	CHECK(!vm_raw_map(fd, h, GPU_PAGE, &err) && err == EINVAL,
	      "a second mmap while a piece of the first is left: %s", strerror(err));
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &req), EBUSY);
	CHECK_OK(vm_raw_info(fd, h, &info));
	CHECK(info.mapping_type == GDR_MR_WC, "mapping type %u with a piece of the mapping left",
	      info.mapping_type);

	/* Unpin with the mapping still there: it is zapped, not left on freed pages. */
	CHECK_OK(vm_raw_unpin(fd, h));
	CHECK(vm_try_read32(map, &flag) != 0, "the mapping survived its unpin");
	CHECK(munmap(map, 2 * GPU_PAGE - CPU_PAGE) == 0, "munmap");
	return TEST_PASS;
}

/*
 * A refused pin leaves the file as it was. A pin as large as the mmap offsets allow, which the
 * provider refuses, used them up: every later pin of the file failed with ENOMEM.
 */
static int case_failed_pin_keeps_offsets(void)
{
	const uint64_t huge = 0x7fffffffffff0000ULL;
	struct gdrdrv_pin_buffer_v2_params *ro;
	struct nvp2p_sim_alloc a;
	uint64_t h;
	gdr_mh_t mh;
	gdr_t g = vm_gdr_open();
	int fd = vm_gdrdrv_open(), i, ret;

	CHECK(g && fd >= 0, "gdr_open or open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_ERR(gdr_pin_buffer(g, 0x10000, huge, 0, 0, &mh), EINVAL);
	CHECK_OK(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh));
	ret = vm_map_write_check(g, mh, a.va, GPU_PAGE, 11);
	if (ret)
		return ret;
	CHECK_OK(gdr_unpin_buffer(g, mh));

	for (i = 0; i < 3; i++)
		CHECK_ERR(vm_raw_pin(fd, 0x10000, huge, 0, &h), EINVAL);
	/* Parameters in read-only memory: the handle cannot be written back, so no pin is made. */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	*ro = (struct gdrdrv_pin_buffer_v2_params){ .addr = a.va, .size = GPU_PAGE };
	CHECK(mprotect(ro, 4096, PROT_READ) == 0, "mprotect");
	CHECK_ERR(vm_ioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, ro), EFAULT);
	munmap(ro, 4096);
	CHECK_OK(vm_inject(1, ENOMEM));
	CHECK_ERR(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h), ENOMEM);
	CHECK_OK(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h));
	CHECK(h == 0, "the file's first pin after refused ones has handle %#llx, not 0",
	      (unsigned long long)h);
	CHECK_OK(vm_raw_unpin(fd, h));
	return TEST_PASS;
}

/* With max_pins_per_file at 3: the fourth pin of a file is refused, and only that. */
static int max_pins_check(uint64_t va)
{
	gdr_mh_t mh[3], extra;
	uint64_t h[3], other;
	gdr_t g = vm_gdr_open();
	int fd = vm_gdrdrv_open(), fd2 = vm_gdrdrv_open(), i;

	CHECK(g && fd >= 0 && fd2 >= 0, "gdr_open or open");
	for (i = 0; i < 3; i++)
		CHECK_OK(vm_raw_pin(fd, va, GPU_PAGE, 0, &h[i]));
	CHECK_ERR(vm_raw_pin(fd, va, GPU_PAGE, 0, &other), ENOSPC);
	CHECK(vm_pins() == 3, "%llu pins after a refused fourth", (unsigned long long)vm_pins());
	CHECK(vm_kmsg_contains("max_pins_per_file") == 1,
	      "no kernel log line names max_pins_per_file");
	/* Another file counts its own. */
	CHECK_OK(vm_raw_pin(fd2, va, GPU_PAGE, 0, &other));
	CHECK_OK(vm_raw_unpin(fd2, other));
	/* An unpin gives its place back; a pin the provider refuses takes none. */
	CHECK_OK(vm_raw_unpin(fd, h[1]));
	CHECK_OK(vm_inject(1, ENOMEM));
	CHECK_ERR(vm_raw_pin(fd, va, GPU_PAGE, 0, &h[1]), ENOMEM);
	CHECK_OK(vm_raw_pin(fd, va, GPU_PAGE, 0, &h[1]));
	CHECK_ERR(vm_raw_pin(fd, va, GPU_PAGE, 0, &other), ENOSPC);
	for (i = 0; i < 3; i++)
		CHECK_OK(vm_raw_unpin(fd, h[i]));

	/* The library passes the error on as it is. */
	for (i = 0; i < 3; i++)
		CHECK_OK(gdr_pin_buffer(g, va, GPU_PAGE, 0, 0, &mh[i]));
	CHECK_ERR(gdr_pin_buffer(g, va, GPU_PAGE, 0, 0, &extra), ENOSPC);
	for (i = 0; i < 3; i++)
		CHECK_OK(gdr_unpin_buffer(g, mh[i]));
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

static int case_max_pins_per_file(void)
{
	struct nvp2p_sim_alloc a;
	long long saved;
	int ret;

	CHECK_OK(vm_read_number(PARAMS_DIR "max_pins_per_file", &saved));
	CHECK(saved == 65536, "max_pins_per_file is %lld by default, not 65536", saved);
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_write_number(PARAMS_DIR "max_pins_per_file", 3));
	ret = max_pins_check(a.va);
	CHECK_OK(vm_write_number(PARAMS_DIR "max_pins_per_file", saved));
	return ret;
}

#if defined(__x86_64__)
/* ioctl(2) as a 32-bit program makes it: the i386 system call (int $0x80, number 54). */
static long ioctl32(int fd, uint32_t cmd, uint32_t arg)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54L), "b"((long)fd), "c"((long)cmd), "d"((long)arg)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/* A 32-bit caller gets the same answers: the structs have one layout for both. */
static int compat_check(int fd, void *low)
{
	struct gdrdrv_get_version_params *ver = low;
	struct gdrdrv_pin_buffer_v2_params *pin = low;
	struct gdrdrv_get_info_v2_params *info = low;
	struct gdrdrv_unpin_buffer_params *unpin = low;
	uint32_t arg = (uint32_t)(uintptr_t)low, v;
	struct nvp2p_sim_alloc a;
	struct gdrdrv_get_info_v2_params info64;
	uint64_t h;
	void *map;
	long ret;
	int err;

	memset(low, 0, 4096);
	ret = ioctl32(fd, GDRDRV_IOC_GET_VERSION, arg);
	if (ret == -ENOSYS)
		return test_skip("this kernel runs no 32-bit system calls (IA32 emulation is off)");
	CHECK(ret == 0, "GET_VERSION from a 32-bit caller: %s", test_strerror((int)-ret));
	CHECK(ver->gdrdrv_version == GDRDRV_VERSION, "version %#x", ver->gdrdrv_version);

	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	*pin = (struct gdrdrv_pin_buffer_v2_params){ .addr = a.va, .size = 2 * GPU_PAGE };
	ret = ioctl32(fd, GDRDRV_IOC_PIN_BUFFER_V2, arg);
	CHECK(ret == 0, "PIN_BUFFER_V2 from a 32-bit caller: %s", test_strerror((int)-ret));
	h = pin->handle;
	*info = (struct gdrdrv_get_info_v2_params){ .handle = h };
	ret = ioctl32(fd, GDRDRV_IOC_GET_INFO_V2, arg);
	CHECK(ret == 0, "GET_INFO_V2 from a 32-bit caller: %s", test_strerror((int)-ret));
	CHECK(info->va == a.va && info->mapped_size == 2 * GPU_PAGE && info->page_size == GPU_PAGE,
	      "GET_INFO_V2 (32-bit): va %#llx size %llu", (unsigned long long)info->va,
	      (unsigned long long)info->mapped_size);
	CHECK_OK(vm_raw_info(fd, h, &info64));
	CHECK(info64.va == a.va, "the 32-bit pin is not the 64-bit view's");
	map = vm_raw_map(fd, h, 2 * GPU_PAGE, &err);
	CHECK(map, "mmap of the 32-bit pin: %s", strerror(err));
	CHECK(vm_try_write32((char *)map + GPU_PAGE, 0x32b17) == 0, "store through the mapping");
	CHECK_OK(vm_sim_read(a.va + GPU_PAGE, &v, sizeof(v)));
	CHECK(v == 0x32b17, "memory holds %#x after a store of 0x32b17", v);
	CHECK(munmap(map, 2 * GPU_PAGE) == 0, "munmap");
	*unpin = (struct gdrdrv_unpin_buffer_params){ .handle = h };
	ret = ioctl32(fd, GDRDRV_IOC_UNPIN_BUFFER, arg);
	CHECK(ret == 0, "UNPIN_BUFFER from a 32-bit caller: %s", test_strerror((int)-ret));
	CHECK_ERR(vm_raw_info(fd, h, &info64), EINVAL);
	ret = ioctl32(fd, _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 9, 8), arg);
	CHECK(ret == -ENOTTY, "an unknown command from a 32-bit caller: %ld", ret);
	return TEST_PASS;
}

static int case_compat_ioctls(void)
{
	int fd = vm_gdrdrv_open();
	void *low;

	CHECK(fd >= 0, "open");
	/* A 32-bit caller's pointers lie below 4 GiB. */
	low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		   -1, 0);
	CHECK(low != MAP_FAILED, "mmap(MAP_32BIT): %s", strerror(errno));
	return compat_check(fd, low);
}
#else
static int case_compat_ioctls(void)
{
	return test_skip("the 32-bit system call is tested on x86_64 only");
}
#endif

const struct vm_case vm_cases[] = {
	{ "pin_errors", case_pin_errors, "pn" },
	{ "provider_errors", case_provider_errors, "pn" },
	{ "attributes_sanity", case_attributes_sanity, "pn" },
	{ "raw_ioctls", case_raw_ioctls, "pn" },
	{ "failed_pin_keeps_offsets", case_failed_pin_keeps_offsets, "pn" },
	{ "max_pins_per_file", case_max_pins_per_file, "pn" },
	{ "compat_ioctls", case_compat_ioctls, "pn" },
	{ NULL, NULL, NULL },
};

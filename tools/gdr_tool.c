/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy for the tools: open and close, what the library says about itself, a mapped buffer,
 * the check of the data a timed copy moved.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/*
 * The library's reasons (gdr_ext_take_errors) on one line, "; " between them, leaving out those
 * that start with skip (NULL: none); "" when it gave none, or has no such call: it is looked
 * up, not linked, since NVIDIA's libgdrapi, which the tools also run on, has none.
 */
static void take_reasons(char *out, size_t len, const char *skip)
{
	size_t (*take)(char *, size_t) = (size_t (*)(char *, size_t))dlsym(RTLD_DEFAULT,
									    "gdr_ext_take_errors");
	char text[GDR_EXT_ERRORS_MAX], *line, *save;
	size_t used = 0;

	out[0] = '\0';
	if (!take || !take(text, sizeof(text)))
		return;
	for (line = strtok_r(text, "\n", &save); line && used < len;
	     line = strtok_r(NULL, "\n", &save)) {
		if (skip && !strncmp(line, skip, strlen(skip)))
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "; " : "", line);
	}
}

const char *tool_gdr_open_failure(void)
{
	static char msg[2 * GDR_EXT_ERRORS_MAX];
	const char *forced = getenv("GDRCOPY_BACKEND");
	char why[sizeof(msg) - 64];

	/* The library's last line only points at its others, which are all here. */
	take_reasons(why, sizeof(why), "gdr_open: no backend can map GPU memory here");
	if (why[0])
		snprintf(msg, sizeof(msg), "gdr_open failed: %s; run gdrcopy_info", why);
	else if (forced && *forced)
		snprintf(msg, sizeof(msg), "gdr_open failed: backend %.64s cannot map GPU memory "
			 "here; run gdrcopy_info", forced);
	else
		snprintf(msg, sizeof(msg), "gdr_open failed: no backend can map GPU memory here; "
			 "run gdrcopy_info");
	return msg;
}

const char *tool_impl_forced;

const char *tool_impl_refused(void)
{
	static const char kept[] = "; keeping the automatic choice";
	static char msg[2 * GDR_EXT_ERRORS_MAX];
	char why[sizeof(msg) - 128];
	size_t n;

	/*
	 * After a gdr_open that worked, the library's only reasons are its copy selection's: taken
	 * either way, so that no later failure's message repeats them.
	 */
	take_reasons(why, sizeof(why), NULL);
	if (!tool_impl_forced || !strstr(why, "GDRCOPY_COPY_IMPL="))
		return NULL;
	/* The library goes on with its own choice; the tool stops instead. */
	n = strlen(why);
	if (n >= sizeof(kept) && !strcmp(why + n - (sizeof(kept) - 1), kept))
		why[n - (sizeof(kept) - 1)] = '\0';
	snprintf(msg, sizeof(msg), "--impl %.64s: the library does not take it: %s",
		 tool_impl_forced, why);
	return msg;
}

gdr_t tool_gdr_open(void)
{
	const char *refused;
	gdr_t g;

	tool_library_reason();	/* forget what earlier calls left */
	g = gdr_open();
	if (!g)
		tool_die("%s", tool_gdr_open_failure());
	refused = tool_impl_refused();
	if (refused)
		tool_usage_error("%s", refused);
	return g;
}

gdr_t tool_start(struct tool_cuda *cu, int dev_id, enum tool_alloc_kind *kind, double *open_us)
{
	double t0;
	gdr_t g;

	tool_cuda_init(cu, dev_id);
	t0 = tool_now_us();
	g = tool_gdr_open();
	if (open_us)
		*open_us = tool_now_us() - t0;
	tool_print_devices(cu);
	*kind = tool_alloc_resolve(*kind, g);
	return g;
}

void tool_gdr_close(gdr_t g)
{
	/* GDRCopy's tools say "closing gdrdrv", the only backend they know: name the one in use. */
	tool_say("closing %s\n", tool_backend_name(tool_backend(g)));
	if (gdr_close(g))
		tool_die("gdr_close failed");
}

int tool_backend(gdr_t g)
{
	int v = 0;

	if (gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &v) != 0)
		return GDR_BACKEND_GDRDRV;
	return v;
}

const char *tool_backend_name(int backend)
{
	const char *name = gdr_ext_backend_name(backend);

	return name ? name : "unknown";
}

int tool_copy_impl(gdr_t g, int to_device)
{
	int v = -1;

	if (gdr_get_attribute(g, (gdr_attr_t)(to_device ? GDR_ATTR_EXT_COPY_TO_IMPL :
							  GDR_ATTR_EXT_COPY_FROM_IMPL), &v))
		return -1;
	return v;
}

int tool_copy_impls(gdr_t g)
{
	int v = 0;

	if (gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_IMPLS, &v))
		return 0;
	return v;
}

const char *tool_impl_name(int impl)
{
	const char *name = gdr_ext_copy_impl_name(impl);

	return name ? name : "unknown";
}

const char *tool_pin_hint(gdr_t g, enum tool_alloc_kind kind)
{
	if (tool_backend(g) == GDR_BACKEND_VULKAN && kind != TOOL_ALLOC_CUMEMCREATE)
		return " (the vulkan backend pins only cuMemCreate memory with a POSIX-fd handle: "
		       "use -a cuMemCreate)";
	return "";
}

const char *tool_mapping_name(gdr_mapping_type_t type)
{
	const char *s = "unknown";

	gdr_get_mapping_type_string(type, &s);
	return s;
}

const char *tool_library_reason(void)
{
	static __thread char reason[2 * GDR_EXT_ERRORS_MAX];

	reason[0] = ':';
	reason[1] = ' ';
	take_reasons(reason + 2, sizeof(reason) - 2, NULL);
	return reason[2] ? reason : "";
}

void tool_map_gpu(struct tool_mapping *m, gdr_t g, const struct tool_cuda *cu, size_t size,
		  enum tool_alloc_kind kind, int map_flags, int quiet)
{
	size_t rounded = TOOL_ROUND_UP(size, GPU_PAGE_SIZE);
	int saved_csv = tool_csv;
	int r;

	memset(m, 0, sizeof(*m));
	m->g = g;
	if (quiet)
		tool_csv = 1;
	tool_say("rounded size: %zu\n", rounded);
	tool_say("gpu alloc fn: %s\n", tool_alloc_name(kind));
	gpu_alloc_or_die(&m->buf, rounded, kind, cu->dev);
	tool_say("device ptr: %llx\n", (unsigned long long)m->buf.ptr);
	tool_library_reason();	/* forget what earlier calls left */
	r = gdr_pin_buffer(g, m->buf.ptr, rounded, 0, 0, &m->mh);
	if (r)
		tool_die("gdr_pin_buffer of %zu bytes of %s memory failed: %s%s", rounded,
			 tool_alloc_name(kind), strerror(r), tool_pin_hint(g, kind));
	r = gdr_map_v2(g, m->mh, &m->map, rounded, map_flags);
	if (r)
		tool_die("gdr_map_v2 with -M %s failed: %s%s (-M default lets the backend choose; "
			 "gdrcopy_info names the backend)", tool_map_flag_name(map_flags),
			 strerror(r), tool_library_reason());
	tool_say("map_d_ptr: %p\n", m->map);
	r = gdr_get_info(g, m->mh, &m->info);
	if (r)
		tool_die("gdr_get_info failed: %s", strerror(r));
	tool_say("info.va: %llx\n", (unsigned long long)m->info.va);
	tool_say("info.mapped_size: %llu\n", (unsigned long long)m->info.mapped_size);
	tool_say("info.page_size: %u\n", m->info.page_size);
	tool_say("info.mapped: %u\n", m->info.mapped);
	tool_say("info.wc_mapping: %u\n", m->info.wc_mapping);
	tool_say("info.mapping_type: %s\n", tool_mapping_name(m->info.mapping_type));
	if (m->buf.ptr < m->info.va || m->buf.ptr - m->info.va >= m->info.mapped_size)
		tool_die("gdr_get_info: va 0x%llx does not cover the pinned address 0x%llx",
			 (unsigned long long)m->info.va, (unsigned long long)m->buf.ptr);
	tool_say("page offset: %llu\n", (unsigned long long)(m->buf.ptr - m->info.va));
	m->ptr = (char *)m->map + (m->buf.ptr - m->info.va);
	m->size = rounded;
	tool_say("user-space pointer:%p\n", m->ptr);
	tool_csv = saved_csv;
}

void tool_unmap_gpu(struct tool_mapping *m, int quiet)
{
	int r;

	if (!quiet)
		tool_say("unmapping buffer\n");
	r = gdr_unmap(m->g, m->mh, m->map, m->size);
	if (r)
		tool_die("gdr_unmap failed: %s", strerror(r));
	if (!quiet)
		tool_say("unpinning buffer\n");
	r = gdr_unpin_buffer(m->g, m->mh);
	if (r)
		tool_die("gdr_unpin_buffer failed: %s", strerror(r));
	if (gpu_free(&m->buf) != CUDA_SUCCESS)
		tool_die("freeing the GPU buffer failed");
}

void tool_report_impl(gdr_t g, const char *forced)
{
	int to = tool_copy_impl(g, 1), from = tool_copy_impl(g, 0);

	if (tool_sweep_fd >= 0) {
		tool_sweep_line("impl %s %s %d", to < 0 ? "?" : tool_impl_name(to),
				from < 0 ? "?" : tool_impl_name(from), tool_copy_impls(g));
		return;
	}
	if (to < 0) {
		if (forced)
			tool_warn("this libgdrapi does not report its copy routines; --impl %s may "
				  "have been ignored", forced);
		return;
	}
	/* A forced routine is in use here: tool_gdr_open stopped if the library refused it. */
	tool_say("copy routines for 4 KiB: to GPU %s, from GPU %s\n", tool_impl_name(to),
		 tool_impl_name(from));
}

void tool_copy_check_begin(const struct tool_mapping *m, size_t offset, void *host, size_t size,
			   int to_gpu)
{
	if (to_gpu) {
		CU_CHECK(cuMemsetD8(m->buf.ptr + offset, 0xA5, size));
		CU_CHECK(cuCtxSynchronize());
	} else {
		memset(host, 0xA5, size);
	}
}

void tool_copy_check_end(const struct tool_mapping *m, size_t offset, const void *host,
			 size_t size, int to_gpu)
{
	void *gpu = malloc(size);
	size_t bad;

	if (!gpu)
		tool_die("cannot allocate %zu bytes to check the copies", size);
	CU_CHECK(cuMemcpyDtoH(gpu, m->buf.ptr + offset, size));
	bad = tool_compare(gpu, host, size);
	free(gpu);
	if (bad)
		tool_die("%s of %zu bytes at offset %zu moved the wrong data: %zu words differ "
			 "between the GPU (read with cuMemcpyDtoH) and the host; its timing means "
			 "nothing (try another routine with --impl, and report it)",
			 to_gpu ? "gdr_copy_to_mapping" : "gdr_copy_from_mapping", size, offset, bad);
}

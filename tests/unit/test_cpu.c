/* SPDX-License-Identifier: MIT */
/*
 * CPU feature detection: the x86 decoding rules on made-up CPUs (the max-leaf guard, OSXSAVE,
 * the XCR0 masks), then the running CPU against the kernel's view in /proc/cpuinfo. Then the
 * features' description, which error messages quote: "none" for no feature, and as much as
 * fits, never past its buffer, when it does not all fit.
 */
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "harness.h"

static void expect_flags(const char *name, unsigned int got, unsigned int want)
{
	char g[128], w[128];

	if (got == want) {
		test_report("pass", name, NULL);
		return;
	}
	gdr_cpu_describe(got, g, sizeof(g));
	gdr_cpu_describe(want, w, sizeof(w));
	test_report("fail", name, "detected \"%s\", expected \"%s\"", g, w);
}

#if defined(__x86_64__)
#define L1C_SSE41   (1u << 19)
#define L1C_OSXSAVE (1u << 27)
#define L1C_AVX     (1u << 28)
#define L1D_SSE2    (1u << 26)
#define L7B_AVX2    (1u << 5)
#define L7B_ERMS    (1u << 9)
#define L7B_AVX512F (1u << 16)
#define L7C_MOVDIR64B (1u << 28)

static void test_decode(void)
{
	const unsigned int all = GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX | GDR_CPU_AVX2 |
				 GDR_CPU_AVX512F | GDR_CPU_MOVDIR64B | GDR_CPU_ERMS;
	const struct gdr_cpuid_x86 full = {
		.max_leaf = 0x20,
		.leaf1_ecx = L1C_SSE41 | L1C_OSXSAVE | L1C_AVX,
		.leaf1_edx = L1D_SSE2,
		.leaf7_ebx = L7B_AVX2 | L7B_ERMS | L7B_AVX512F,
		.leaf7_ecx = L7C_MOVDIR64B,
		.xcr0 = 0xe7,
	};
	struct gdr_cpuid_x86 r;

	expect_flags("decode_all", gdr_cpu_decode_x86(&full), all);

	r = full;
	r.max_leaf = 6;
	expect_flags("decode_max_leaf_6", gdr_cpu_decode_x86(&r),
		     GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX);
	r.max_leaf = 0;
	expect_flags("decode_max_leaf_0", gdr_cpu_decode_x86(&r), 0);

	r = full;
	r.leaf1_ecx &= ~L1C_OSXSAVE;
	expect_flags("decode_no_osxsave", gdr_cpu_decode_x86(&r),
		     all & ~(GDR_CPU_AVX | GDR_CPU_AVX2 | GDR_CPU_AVX512F));

	r = full;
	r.xcr0 = 0x3;
	expect_flags("decode_xcr0_sse_only", gdr_cpu_decode_x86(&r),
		     all & ~(GDR_CPU_AVX | GDR_CPU_AVX2 | GDR_CPU_AVX512F));
	r.xcr0 = 0x7;
	expect_flags("decode_xcr0_ymm", gdr_cpu_decode_x86(&r), all & ~GDR_CPU_AVX512F);
	r.xcr0 = 0x67;
	expect_flags("decode_xcr0_no_zmm_hi16", gdr_cpu_decode_x86(&r), all & ~GDR_CPU_AVX512F);
	r.xcr0 = 0xe3;
	expect_flags("decode_xcr0_no_ymm", gdr_cpu_decode_x86(&r),
		     all & ~(GDR_CPU_AVX | GDR_CPU_AVX2 | GDR_CPU_AVX512F));

	r = full;
	r.leaf1_ecx &= ~L1C_AVX;
	expect_flags("decode_avx2_without_avx", gdr_cpu_decode_x86(&r),
		     all & ~(GDR_CPU_AVX | GDR_CPU_AVX2));
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* The value of the first line of /proc/cpuinfo whose key is key, or NULL. */
static const char *cpuinfo_line(const char *key, char *line, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	size_t klen = strlen(key);
	const char *ret = NULL;

	if (!f)
		return NULL;
	while (fgets(line, len, f)) {
		if (!strncmp(line, key, klen) && strchr(" \t:", line[klen])) {
			ret = strchr(line, ':');
			if (ret)
				ret++;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int has_word(const char *list, const char *word)
{
	size_t wlen = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += wlen)
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[wlen] == ' ' || p[wlen] == '\n' || p[wlen] == '\0'))
			return 1;
	return 0;
}

static void test_cpuinfo(void)
{
	static const struct {
		const char *flag;
		unsigned int bit;
	} flags[] = {
#if defined(__x86_64__)
		{ "sse2", GDR_CPU_SSE2 },
		{ "sse4_1", GDR_CPU_SSE41 },
		{ "avx", GDR_CPU_AVX },
		{ "avx2", GDR_CPU_AVX2 },
		{ "avx512f", GDR_CPU_AVX512F },
		{ "movdir64b", GDR_CPU_MOVDIR64B },
		{ "erms", GDR_CPU_ERMS },
#else
		{ "asimd", GDR_CPU_ASIMD },
#endif
	};
#if defined(__x86_64__)
	const char *key = "flags";
#else
	const char *key = "Features";
#endif
	unsigned int cpu = gdr_cpu_features();
	static char line[8192];
	const char *list = cpuinfo_line(key, line, sizeof(line));

	if (!list) {
		/* qemu-user shows the host's /proc/cpuinfo. */
		test_report("skip", "cpuinfo", "/proc/cpuinfo has no \"%s\" line for this architecture",
			    key);
		return;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		char name[64];
		int kernel = has_word(list, flags[i].flag), ours = !!(cpu & flags[i].bit);

		snprintf(name, sizeof(name), "cpuinfo_%s", flags[i].flag);
		if (kernel == ours)
			test_report("pass", name, NULL);
		else
			test_report("fail", name, "/proc/cpuinfo %s %s, detection says %s",
				    kernel ? "lists" : "lacks", flags[i].flag, ours ? "yes" : "no");
	}
}
#else
static void test_cpuinfo(void)
{
	test_report("skip", "cpuinfo", "/proc/cpuinfo lists no feature flags on this architecture");
}
#endif

static void test_describe(void)
{
	char buf[32];

	gdr_cpu_describe(0, buf, sizeof(buf));
	if (strcmp(buf, "none")) {
		test_report("fail", "describe", "no feature described as \"%s\", not \"none\"",
			    buf);
		return;
	}
	/* "SSE2 SSE4.1 AVX2 ERMS" in 8 bytes: its first 7, and nothing written past the 8. */
	memset(buf, 'x', sizeof(buf));
	gdr_cpu_describe(GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX2 | GDR_CPU_ERMS, buf, 8);
	for (size_t i = 8; i < sizeof(buf); i++) {
		if (buf[i] != 'x') {
			test_report("fail", "describe", "a description in 8 bytes wrote byte %zu", i);
			return;
		}
	}
	if (strcmp(buf, "SSE2 SS"))
		test_report("fail", "describe", "a description cut to 8 bytes is \"%.8s\", not "
			    "\"SSE2 SS\"", buf);
	else
		test_report("pass", "describe", NULL);
}

int main(void)
{
	char desc[128];

#if defined(__x86_64__)
	test_decode();
#endif
	test_cpuinfo();
	test_describe();
	expect_flags("detect_cached", gdr_cpu_features(), gdr_cpu_detect());
	gdr_cpu_describe(gdr_cpu_features(), desc, sizeof(desc));
	printf("detected: %s\n", desc);
	return test_status();
}

/* SPDX-License-Identifier: MIT */
/* CPU feature detection. Built for the baseline ISA: it runs before anything is known. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#if defined(__AVX__) || defined(__ARM_FEATURE_SVE)
#error "src/cpu.c runs before the CPU is known and must be built for the baseline ISA: drop -march/-mavx from CFLAGS"
#endif

static const struct {
	unsigned int bit;
	const char *name;
} feature_names[] = {
	{ GDR_CPU_SSE2, "SSE2" },
	{ GDR_CPU_SSE41, "SSE4.1" },
	{ GDR_CPU_AVX, "AVX" },
	{ GDR_CPU_AVX2, "AVX2" },
	{ GDR_CPU_AVX512F, "AVX-512" },
	{ GDR_CPU_MOVDIR64B, "MOVDIR64B" },
	{ GDR_CPU_ERMS, "ERMS" },
	{ GDR_CPU_ASIMD, "ASIMD" },
};

void gdr_cpu_describe(unsigned int mask, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++) {
		int n;

		if (!(mask & feature_names[i].bit))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? " " : "",
			     feature_names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += n;
	}
	if (!used)
		snprintf(buf, len, "none");
}

#if defined(__x86_64__)

/* XCR0 state: SSE (XMM), AVX (upper YMM halves), AVX-512 (opmask, upper ZMM halves, ZMM16-31). */
#define XCR0_AVX_STATE    0x06u
#define XCR0_AVX512_STATE 0xe6u

#define CPUID1_ECX_SSE41     (1u << 19)
#define CPUID1_ECX_OSXSAVE   (1u << 27)
#define CPUID1_ECX_AVX       (1u << 28)
#define CPUID1_EDX_SSE2      (1u << 26)
#define CPUID7_EBX_AVX2      (1u << 5)
#define CPUID7_EBX_ERMS      (1u << 9)
#define CPUID7_EBX_AVX512F   (1u << 16)
#define CPUID7_ECX_MOVDIR64B (1u << 28)

void gdr_cpu_read_x86(struct gdr_cpuid_x86 *r)
{
	unsigned int a, b, c, d;

	memset(r, 0, sizeof(*r));
	/* A leaf above the maximum returns another leaf's data on Intel, zeros under some VMMs. */
	r->max_leaf = __get_cpuid_max(0, NULL);
	if (r->max_leaf >= 1) {
		__cpuid(1, a, b, c, d);
		r->leaf1_ecx = c;
		r->leaf1_edx = d;
	}
	if (r->max_leaf >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		r->leaf7_ebx = b;
		r->leaf7_ecx = c;
	}
	/* XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID reports as OSXSAVE. */
	if (r->leaf1_ecx & CPUID1_ECX_OSXSAVE) {
		uint32_t lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		r->xcr0 = ((uint64_t)hi << 32) | lo;
	}
}

unsigned int gdr_cpu_decode_x86(const struct gdr_cpuid_x86 *r)
{
	unsigned int f = 0;
	uint32_t l1c = 0, l1d = 0, l7b = 0, l7c = 0;
	uint64_t xcr0 = 0;

	if (r->max_leaf >= 1) {
		l1c = r->leaf1_ecx;
		l1d = r->leaf1_edx;
	}
	if (r->max_leaf >= 7) {
		l7b = r->leaf7_ebx;
		l7c = r->leaf7_ecx;
	}
	if (l1c & CPUID1_ECX_OSXSAVE)
		xcr0 = r->xcr0;

	if (l1d & CPUID1_EDX_SSE2)
		f |= GDR_CPU_SSE2;
	if (l1c & CPUID1_ECX_SSE41)
		f |= GDR_CPU_SSE41;
	/* The CPU bit alone is not enough: without the OS saving YMM/ZMM state, AVX code faults. */
	if ((l1c & CPUID1_ECX_AVX) && (xcr0 & XCR0_AVX_STATE) == XCR0_AVX_STATE) {
		f |= GDR_CPU_AVX;
		if (l7b & CPUID7_EBX_AVX2)
			f |= GDR_CPU_AVX2;
	}
	if ((l7b & CPUID7_EBX_AVX512F) && (xcr0 & XCR0_AVX512_STATE) == XCR0_AVX512_STATE)
		f |= GDR_CPU_AVX512F;
	if (l7c & CPUID7_ECX_MOVDIR64B)
		f |= GDR_CPU_MOVDIR64B;
	if (l7b & CPUID7_EBX_ERMS)
		f |= GDR_CPU_ERMS;
	return f;
}

unsigned int gdr_cpu_detect(void)
{
	struct gdr_cpuid_x86 r;

	gdr_cpu_read_x86(&r);
	return gdr_cpu_decode_x86(&r);
}

#elif defined(__aarch64__)

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1ul << 1)
#endif

unsigned int gdr_cpu_detect(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_ASIMD) ? GDR_CPU_ASIMD : 0;
}

#else

unsigned int gdr_cpu_detect(void)
{
	return 0;
}

#endif

/* Written once under cpu_once, read-only afterwards. */
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static unsigned int cpu_flags;

static void cpu_detect_once(void)
{
	cpu_flags = gdr_cpu_detect();
}

unsigned int gdr_cpu_features(void)
{
	pthread_once(&cpu_once, cpu_detect_once);
	return cpu_flags;
}

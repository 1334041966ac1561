/* SPDX-License-Identifier: MIT */
/*
 * CPU features the copy routines depend on. A feature counts only when both the CPU and the
 * kernel support it (for AVX and AVX-512: the OS saves the register state, per XCR0).
 */
#ifndef GDR_CPU_H
#define GDR_CPU_H

#include <stddef.h>
#include <stdint.h>

enum gdr_cpu_feature {
	GDR_CPU_SSE2 = 1u << 0,
	GDR_CPU_SSE41 = 1u << 1,
	GDR_CPU_AVX = 1u << 2,
	GDR_CPU_AVX2 = 1u << 3,
	GDR_CPU_AVX512F = 1u << 4,
	GDR_CPU_MOVDIR64B = 1u << 5,
	GDR_CPU_ERMS = 1u << 6,		/* rep movsb is fast */
	GDR_CPU_ASIMD = 1u << 7,	/* arm64 NEON */
};

/* The features of the running CPU (a mask of enum gdr_cpu_feature); detected once, thread-safe. */
unsigned int gdr_cpu_features(void);

/* Detect now, without caching: what gdr_cpu_features() caches. */
unsigned int gdr_cpu_detect(void);

/* Space-separated names of the features in mask ("SSE2 SSE4.1 AVX AVX2"), or "none". */
void gdr_cpu_describe(unsigned int mask, char *buf, size_t len);

#if defined(__x86_64__)
/* Raw CPUID/XGETBV words, so the decoding rules can be tested with made-up CPUs. */
struct gdr_cpuid_x86 {
	uint32_t max_leaf;		/* CPUID.0:EAX */
	uint32_t leaf1_ecx, leaf1_edx;
	uint32_t leaf7_ebx, leaf7_ecx;	/* CPUID.(7,0); meaningless when max_leaf < 7 */
	uint64_t xcr0;			/* XGETBV(0); meaningless without OSXSAVE */
};

void gdr_cpu_read_x86(struct gdr_cpuid_x86 *r);
unsigned int gdr_cpu_decode_x86(const struct gdr_cpuid_x86 *r);
#endif

#endif

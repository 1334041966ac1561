/* SPDX-License-Identifier: MIT */
/*
 * The public copy calls' variants (bench_paths.h). Built like the library (baseline ISA, the
 * same CFLAGS) from the library's own inline parts, so that each differs from
 * gdr_copy_to/from_mapping only in the step it names.
 */
#include <errno.h>
#include <stdbool.h>

#include "bench_paths.h"
#include "copy.h"
#include "cpu.h"
#include "handle.h"
#include "inflight.h"

/* The lookup out of line, as it was before the public calls inlined it. */
static __attribute__((noinline)) gdr_mapping_type_t lookup_call(unsigned long h, const void *p,
								 size_t n, int *mixed)
{
	return gdr_handle_mapping(h, p, n, mixed);
}

/*
 * The public calls as they were: the announcement kept across the call, the lookup and the
 * dispatcher out of line (each with its own frame), and one exit for every case.
 */
static int before_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);
	gdr_mapping_type_t type;
	int mixed = 0, ret = 0;

	if (!r)
		return ENOMEM;
	type = lookup_call(handle.h, map_d_ptr, size, &mixed);
	if (type == GDR_MAPPING_TYPE_NONE || (size && !h_ptr))
		ret = EINVAL;
	else if (size)
		gdr_copy_to_mapping_type(type, mixed, map_d_ptr, h_ptr, size);
	gdr_inflight_leave(r, leave);
	return ret;
}

static int before_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);
	gdr_mapping_type_t type;
	int mixed = 0, ret = 0;

	if (!r)
		return ENOMEM;
	type = lookup_call(handle.h, map_d_ptr, size, &mixed);
	if (type == GDR_MAPPING_TYPE_NONE || (size && !h_ptr))
		ret = EINVAL;
	else if (size)
		gdr_copy_from_mapping_type(type, mixed, h_ptr, map_d_ptr, size);
	gdr_inflight_leave(r, leave);
	return ret;
}

/* The announcement and the dispatcher: what the lookup adds is the rest. */
static int announced_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);

	(void)handle;
	if (!r)
		return ENOMEM;
	gdr_copy_to_mapping_type(GDR_MAPPING_TYPE_WC, 0, map_d_ptr, h_ptr, size);
	gdr_inflight_leave(r, leave);
	return 0;
}

static int announced_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);

	(void)handle;
	if (!r)
		return ENOMEM;
	gdr_copy_from_mapping_type(GDR_MAPPING_TYPE_WC, 0, h_ptr, map_d_ptr, size);
	gdr_inflight_leave(r, leave);
	return 0;
}

/* The lookup (out of line) and the dispatcher: what the announcement adds is the rest. */
static int looked_up_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	int mixed = 0;
	gdr_mapping_type_t type = lookup_call(handle.h, map_d_ptr, size, &mixed);

	if (type == GDR_MAPPING_TYPE_NONE || !h_ptr)
		return EINVAL;
	gdr_copy_to_mapping_type(type, mixed, map_d_ptr, h_ptr, size);
	return 0;
}

static int looked_up_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	int mixed = 0;
	gdr_mapping_type_t type = lookup_call(handle.h, map_d_ptr, size, &mixed);

	if (type == GDR_MAPPING_TYPE_NONE || !h_ptr)
		return EINVAL;
	gdr_copy_from_mapping_type(type, mixed, h_ptr, map_d_ptr, size);
	return 0;
}

/*
 * 88 instructions that do nothing, then the dispatcher: as many instructions as the call before
 * added to the dispatcher on a 16-byte read (115 against 27, counted on x86-64 with gcc -O2),
 * without their memory accesses. Equal to path_before: the count of instructions is the cost;
 * equal to the dispatcher: it is what those instructions do.
 */
#define NOPS ".rept 88\n\tnop\n\t.endr"

static int nops_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	(void)handle;
	__asm__ volatile(NOPS);
	gdr_copy_to_mapping_type(GDR_MAPPING_TYPE_WC, 0, map_d_ptr, h_ptr, size);
	return 0;
}

static int nops_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	(void)handle;
	__asm__ volatile(NOPS);
	gdr_copy_from_mapping_type(GDR_MAPPING_TYPE_WC, 0, h_ptr, map_d_ptr, size);
	return 0;
}

/* Whether the flat path's common case holds: else the variants hand the copy to the library. */
static inline int common_case(gdr_mh_t handle, const void *map_d_ptr, size_t size,
			      const void *h_ptr)
{
	return gdr_handle_maps_fast(handle.h, map_d_ptr, size) && size && h_ptr;
}

/*
 * The flat read's start: the copy announced and its common case holding. False, with nothing
 * announced, when the variant must hand the copy to the library.
 */
static inline __attribute__((always_inline)) bool flat_read_begins(gdr_mh_t handle,
								    const void *h_ptr,
								    const void *map_d_ptr,
								    size_t size)
{
	if (!gdr_inflight_enter_outer())
		return false;
	if (__builtin_expect(common_case(handle, map_d_ptr, size, h_ptr), 1))
		return true;
	gdr_inflight_leave_outer();
	return false;
}

/* The flat path without the announcement: what announcing costs in it is the rest. */
static int flat_unannounced_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
			       size_t size)
{
	if (!common_case(handle, map_d_ptr, size, h_ptr))
		return gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
	gdr_copy_to_wc(map_d_ptr, h_ptr, size);
	return 0;
}

static int flat_unannounced_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
				 size_t size)
{
	if (!common_case(handle, map_d_ptr, size, h_ptr))
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	gdr_copy_from_wc(h_ptr, map_d_ptr, size);
	return 0;
}

/* The flat path without the lookup: what looking the handle up costs in it is the rest. */
static int flat_unlooked_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	if (!gdr_inflight_enter_outer())
		return gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
	gdr_copy_to_wc(map_d_ptr, h_ptr, size);
	gdr_inflight_leave_outer();
	return 0;
}

static int flat_unlooked_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	if (!gdr_inflight_enter_outer())
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	gdr_copy_from_wc(h_ptr, map_d_ptr, size);
	gdr_inflight_leave_outer();
	return 0;
}

/*
 * Reads only: the flat path with the copy's announcement ended before the store fence, so that
 * nothing but the return follows it. (Its loads have completed when the end of the announcement
 * retires; writes must fence first, or the end could be seen before their data.)
 */
static int flat_fence_last_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
				size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;

	if (!flat_read_begins(handle, h_ptr, map_d_ptr, size))
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	d->fn[gdr_copy_class_of(d, size)](h_ptr, map_d_ptr, size);
	gdr_inflight_leave_outer();
	gdr_copy_fence(gdr_copy_active.from_wc_fence);
	return 0;
}

/*
 * The flat call as it was before it was made leaner (commit 2f83a1c), on today's table: its
 * lookup tested for position 0 and a missing chunk (it also subtracted one, which today's table
 * does not need) and ranges in three comparisons, it read the mixing flag apart from the type
 * and tested the fence for NONE and FULL before STORE. Its announcement and size-class search
 * were today's, and the routines are today's in both.
 */
static inline __attribute__((always_inline)) gdr_mapping_type_t
prev_lookup(unsigned long h, const void *ptr, size_t size, int *mixed)
{
	uint32_t low = (uint32_t)(h & ((1UL << GDR_HANDLE_INDEX_BITS) - 1));
	struct gdr_handle_slot *chunk, *s;
	uintptr_t base, p = (uintptr_t)ptr;
	size_t len;
	int type;

	if (!low)
		return GDR_MAPPING_TYPE_NONE;
	chunk = atomic_load_explicit(&gdr_handle_chunks[low / GDR_HANDLE_SLOTS_PER_CHUNK],
				     memory_order_acquire);
	if (!chunk)
		return GDR_MAPPING_TYPE_NONE;
	s = &chunk[low % GDR_HANDLE_SLOTS_PER_CHUNK];
	if (atomic_load_explicit(&s->tag, memory_order_acquire) != h)
		return GDR_MAPPING_TYPE_NONE;
	type = atomic_load_explicit(&s->map_type, memory_order_acquire);
	base = atomic_load_explicit(&s->map_base, memory_order_relaxed);
	len = atomic_load_explicit(&s->map_size, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->tag, memory_order_relaxed) != h)
		return GDR_MAPPING_TYPE_NONE;
	if (p < base || size > len || p - base > len - size)
		return GDR_MAPPING_TYPE_NONE;
	*mixed = atomic_load_explicit(&gdr_handle_fast_type, memory_order_relaxed) ==
		 GDR_MAPPING_TYPE_MAX;
	return (gdr_mapping_type_t)type;
}

static inline __attribute__((always_inline)) void prev_fence(enum gdr_copy_fence f)
{
	if (f == GDR_COPY_FENCE_NONE)
		return;
	if (f == GDR_COPY_FENCE_FULL)
		atomic_thread_fence(memory_order_seq_cst);
	else
		gdr_copy_fence(GDR_COPY_FENCE_STORE);
}

static int flat_prev_to(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.to;
	gdr_mapping_type_t type;
	int mixed = 0;

	if (!gdr_inflight_enter_outer())
		return gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
	type = prev_lookup(handle.h, map_d_ptr, size, &mixed);
	if (type != GDR_MAPPING_TYPE_WC || mixed || !size || !h_ptr) {
		gdr_inflight_leave_outer();
		return gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
	}
	if (size <= gdr_copy_active.tiny_to_max)
		gdr_copy_tiny_store(map_d_ptr, h_ptr, size);
	else
		d->fn[gdr_copy_class_of(d, size)](map_d_ptr, h_ptr, size);
	prev_fence(GDR_COPY_FENCE_STORE);
	gdr_inflight_leave_outer();
	return 0;
}

static int flat_prev_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;
	gdr_mapping_type_t type;
	int mixed = 0;

	if (!gdr_inflight_enter_outer())
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	type = prev_lookup(handle.h, map_d_ptr, size, &mixed);
	if (type != GDR_MAPPING_TYPE_WC || mixed || !size || !h_ptr) {
		gdr_inflight_leave_outer();
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	}
	d->fn[gdr_copy_class_of(d, size)](h_ptr, map_d_ptr, size);
	prev_fence(gdr_copy_active.from_wc_fence);
	gdr_inflight_leave_outer();
	return 0;
}

/*
 * Reads only: the announcement taken apart. Each variant is the flat path with an announcement
 * in a record of its own (probe_record, reached like the library's through a thread-local
 * pointer), which keeps only some of the real one's accesses: both stores (as the library), the
 * store before the lookup alone, the store after the fence alone, or neither (the loads alone).
 * Where a variant leaves a store out, the other adds 2, so the record stays even. Two more
 * have no store either: one reaches the record through a global pointer instead of the
 * thread-local one, the other reads the thread-local pointer but not the record.
 */
enum probe_stores { PROBE_BOTH, PROBE_ENTER, PROBE_LEAVE, PROBE_NONE, PROBE_GLOBAL, PROBE_TLS };

static struct gdr_inflight probe_record;
static __thread struct gdr_inflight *probe_self __attribute__((tls_model("initial-exec")));
static struct gdr_inflight *volatile probe_global = &probe_record;

static inline __attribute__((always_inline)) int
probe_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size,
	   enum probe_stores stores)
{
	struct gdr_inflight *r = stores == PROBE_GLOBAL ? probe_global : probe_self;
	unsigned long s;

	if (__builtin_expect(!r, 0))
		r = probe_self = &probe_record;
	if (stores == PROBE_TLS) {
		atomic_signal_fence(memory_order_seq_cst);
		if (!common_case(handle, map_d_ptr, size, h_ptr))
			return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
		gdr_copy_from_wc(h_ptr, map_d_ptr, size);
		r = probe_self;
		return r == NULL;
	}
	s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	if (__builtin_expect(s & 1, 0))
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	if (stores == PROBE_BOTH)
		atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
	else if (stores == PROBE_ENTER)
		atomic_store_explicit(&r->seq, s + 2, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (!common_case(handle, map_d_ptr, size, h_ptr)) {
		if (stores == PROBE_BOTH)
			atomic_store_explicit(&r->seq, s + 2, memory_order_relaxed);
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	}
	gdr_copy_from_wc(h_ptr, map_d_ptr, size);
	r = stores == PROBE_GLOBAL ? probe_global : probe_self;
	s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	if (stores == PROBE_BOTH)
		atomic_store_explicit(&r->seq, s + 1, memory_order_release);
	else if (stores == PROBE_LEAVE)
		atomic_store_explicit(&r->seq, s + 2, memory_order_release);
	return 0;
}

static int probe_both_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_BOTH);
}

static int probe_enter_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_ENTER);
}

static int probe_leave_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_LEAVE);
}

static int probe_none_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_NONE);
}

static int probe_global_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_GLOBAL);
}

static int probe_tls_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return probe_from(handle, h_ptr, map_d_ptr, size, PROBE_TLS);
}

#if defined(__x86_64__)
/*
 * The flat read with aligned reads of up to 64 bytes made in the call itself: streaming loads
 * (inline asm: this file has the baseline ISA) straight into the caller's buffer, no routine
 * call and no size class; every other read takes the library's routine. lines16 loads 16 bytes
 * at a time (SSE4.1), lines32 32 where the device side allows it (AVX2). The bench asks the CPU
 * once; without the instructions a variant is the flat call.
 */
static int lines_cpu = -1;

static inline __attribute__((always_inline)) int lines_have(unsigned int feature)
{
	if (__builtin_expect(lines_cpu < 0, 0))
		lines_cpu = (int)gdr_cpu_features();
	return (unsigned int)lines_cpu & feature;
}

static inline __attribute__((always_inline)) void lines16(void *dst, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i += 16)
		__asm__ volatile("movntdqa %1, %%xmm0\n\tmovdqu %%xmm0, %0"
				 : "=m"(*(uint8_t(*)[16])((uint8_t *)dst + i))
				 : "m"(*(const uint8_t(*)[16])((const uint8_t *)src + i))
				 : "xmm0");
}

static inline __attribute__((always_inline)) void lines32(void *dst, const void *src, size_t n)
{
	size_t i = 0;

	if (!((uintptr_t)src & 31)) {
		for (; i + 32 <= n; i += 32)
			__asm__ volatile("vmovntdqa %1, %%ymm0\n\tvmovdqu %%ymm0, %0"
					 : "=m"(*(uint8_t(*)[32])((uint8_t *)dst + i))
					 : "m"(*(const uint8_t(*)[32])((const uint8_t *)src + i))
					 : "xmm0");
		__asm__ volatile("vzeroupper" ::: "xmm0");
	}
	lines16((uint8_t *)dst + i, (const uint8_t *)src + i, n - i);
}

static inline __attribute__((always_inline)) int
flat_lines_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size, int wide)
{
	if (!flat_read_begins(handle, h_ptr, map_d_ptr, size))
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	if (size <= 64 && !(((uintptr_t)map_d_ptr | size) & 15) &&
	    lines_have(wide ? GDR_CPU_AVX2 : GDR_CPU_SSE41)) {
		if (wide)
			lines32(h_ptr, map_d_ptr, size);
		else
			lines16(h_ptr, map_d_ptr, size);
		gdr_copy_fence(gdr_copy_active.from_wc_fence);
	} else {
		gdr_copy_from_wc(h_ptr, map_d_ptr, size);
	}
	gdr_inflight_leave_outer();
	return 0;
}

static int flat_lines16_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return flat_lines_from(handle, h_ptr, map_d_ptr, size, 0);
}

static int flat_lines32_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return flat_lines_from(handle, h_ptr, map_d_ptr, size, 1);
}
#endif

/*
 * The flat read reshaped (one exit for the common case, the routine's call in the middle) with
 * fillers at one place: before the routine's call (a), between the routine and the store fence
 * (b), after the fence (c). Does it matter where the instructions around a read's loads sit, or
 * only how many there are, and are loads dearer than nops? spaced_0 is the reshaped read with
 * none.
 */
#define NO_FILL ((void)0)
#define NOPS_N(k) __asm__ volatile(".rept " #k "\n\tnop\n\t.endr")
#define FLAT_FILLED(name, a, b, c)                                                         \
	static int name(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)  \
	{                                                                                  \
		const struct gdr_copy_dir *d = &gdr_copy_active.from;                     \
                                                                                           \
		if (!flat_read_begins(handle, h_ptr, map_d_ptr, size))                     \
			return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);      \
		a;                                                                         \
		d->fn[gdr_copy_class_of(d, size)](h_ptr, map_d_ptr, size);                 \
		b;                                                                         \
		gdr_copy_fence(gdr_copy_active.from_wc_fence);                             \
		c;                                                                         \
		gdr_inflight_leave_outer();                                                \
		return 0;                                                                  \
	}

FLAT_FILLED(spaced_0, NO_FILL, NO_FILL, NO_FILL)
FLAT_FILLED(spaced_a12, NOPS_N(12), NO_FILL, NO_FILL)
FLAT_FILLED(spaced_a48, NOPS_N(48), NO_FILL, NO_FILL)
FLAT_FILLED(spaced_b12, NO_FILL, NOPS_N(12), NO_FILL)
FLAT_FILLED(spaced_b48, NO_FILL, NOPS_N(48), NO_FILL)
FLAT_FILLED(spaced_c12, NO_FILL, NO_FILL, NOPS_N(12))
FLAT_FILLED(spaced_c48, NO_FILL, NO_FILL, NOPS_N(48))

#if defined(__x86_64__)
/* Conditional branches, never taken, in place of the nops: one macro-fused test and jump each. */
#define BRANCHES_N(k)                                                                      \
	__asm__ volatile("xor %%eax, %%eax\n\t.rept " #k "\n\ttest %%eax, %%eax\n\tjnz 9f\n\t.endr\n9:" \
			 : : : "rax", "cc")

FLAT_FILLED(branched_a4, BRANCHES_N(4), NO_FILL, NO_FILL)
FLAT_FILLED(branched_a12, BRANCHES_N(12), NO_FILL, NO_FILL)

/* Loads of one cached word in place of the nops. */
static const unsigned long filler_word;
#define LOADS_N(k)                                                                         \
	__asm__ volatile(".rept " #k "\n\tmov %0, %%rax\n\t.endr" : : "m"(filler_word) : "rax")

FLAT_FILLED(loaded_a12, LOADS_N(12), NO_FILL, NO_FILL)
FLAT_FILLED(loaded_a48, LOADS_N(48), NO_FILL, NO_FILL)
#endif

/*
 * Reads only: what a leaner design of the same guards would execute. The announcement is a
 * counter in thread-local storage itself (0 until the thread's first copy, then even outside
 * copies), not a record reached through it; the handle table is one flat array of slots whose
 * fast_tag holds the handle only while its mapping is the common case (write-combined, one type,
 * no self-fencing readers), so one comparison tests the handle, its mapping and the case; reads
 * of up to 64 B find their size class in a byte table; the fence is the store fence outright.
 * The array, the byte table and the counter are this file's own, filled from the library's at
 * the handle's first read (nothing clears a tag: the bench never unmaps while it times), so the
 * variant runs the same routines on the same mapping.
 */
#define LEAN_SLOTS 1024u

struct lean_slot {
	_Atomic unsigned long fast_tag;
	_Atomic uintptr_t base;
	_Atomic size_t len;
} __attribute__((aligned(32)));

static struct lean_slot lean_table[LEAN_SLOTS];
static uint8_t lean_class[65];
static __thread unsigned long lean_seq __attribute__((tls_model("initial-exec")));

/* Anything but the common case: fill the variant's tables from the library's, then its call. */
static __attribute__((noinline)) int lean_other(gdr_mh_t handle, void *h_ptr,
						const void *map_d_ptr, size_t size)
{
	struct lean_slot *sl = &lean_table[handle.h % LEAN_SLOTS];
	uintptr_t base;
	size_t len;
	int type;

	if (gdr_handle_read_mapping(gdr_handle_slot_at(handle.h), handle.h, &type, &base, &len) &&
	    type == GDR_MAPPING_TYPE_WC) {
		atomic_store(&sl->base, base);
		atomic_store(&sl->len, len);
		atomic_store(&sl->fast_tag, handle.h);
	}
	for (size_t n = 1; n <= 64; n++)
		lean_class[n] = (uint8_t)gdr_copy_class_of(&gdr_copy_active.from, n);
	if (!lean_seq)
		lean_seq = 2;
	return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
}

static int lean_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;
	const struct lean_slot *sl = &lean_table[handle.h % LEAN_SLOTS];
	unsigned long s = lean_seq;
	uintptr_t base, end;
	size_t len;

	if (__builtin_expect((s & 1) || !s, 0))
		return lean_other(handle, h_ptr, map_d_ptr, size);
	lean_seq = s + 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (__builtin_expect(atomic_load_explicit(&sl->fast_tag, memory_order_acquire) !=
			     handle.h, 0))
		goto other;
	base = atomic_load_explicit(&sl->base, memory_order_relaxed);
	len = atomic_load_explicit(&sl->len, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (__builtin_expect(atomic_load_explicit(&sl->fast_tag, memory_order_relaxed) !=
			     handle.h, 0) ||
	    __builtin_add_overflow((uintptr_t)map_d_ptr - base, size, &end) || end > len ||
	    !size || !h_ptr)
		goto other;
	d->fn[size <= 64 ? lean_class[size] : gdr_copy_class_of(d, size)](h_ptr, map_d_ptr, size);
	gdr_copy_fence(GDR_COPY_FENCE_STORE);
	atomic_signal_fence(memory_order_seq_cst);
	lean_seq = lean_seq + 1;
	return 0;
other:
	lean_seq = s + 2;
	return lean_other(handle, h_ptr, map_d_ptr, size);
}

/*
 * lean with as few branches as the same checks allow: the thread's counter starts odd (1), so
 * one test finds both a thread's first copy and a copy inside a copy; the handle, its mapping,
 * the range, the size and the buffer are tested in one comparison of values computed without
 * branches; the size class comes from a byte table indexed by min(size, 256) (a conditional
 * move), valid where every read of 256 B or more is in one class; the store fence outright.
 */
static uint8_t lean2_class[257];
static __thread unsigned long lean2_seq __attribute__((tls_model("initial-exec"))) = 1;

static __attribute__((noinline)) int lean2_other(gdr_mh_t handle, void *h_ptr,
						 const void *map_d_ptr, size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;

	for (size_t n = 1; n <= 256; n++)
		lean2_class[n] = (uint8_t)gdr_copy_class_of(d, n);
	if (gdr_copy_class_of(d, 256) == gdr_copy_class_of(d, SIZE_MAX) && lean2_seq == 1)
		lean2_seq = 2;
	return lean_other(handle, h_ptr, map_d_ptr, size);
}

static int lean2_from(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;
	const struct lean_slot *sl = &lean_table[handle.h % LEAN_SLOTS];
	unsigned long s = lean2_seq, t1, t2;
	uintptr_t base, end;
	size_t len;
	int bad;

	if (__builtin_expect(s & 1, 0))
		return lean2_other(handle, h_ptr, map_d_ptr, size);
	lean2_seq = s + 1;
	atomic_signal_fence(memory_order_seq_cst);
	t1 = atomic_load_explicit(&sl->fast_tag, memory_order_acquire);
	base = atomic_load_explicit(&sl->base, memory_order_relaxed);
	len = atomic_load_explicit(&sl->len, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	t2 = atomic_load_explicit(&sl->fast_tag, memory_order_relaxed);
	bad = __builtin_add_overflow((uintptr_t)map_d_ptr - base, size, &end);
	bad |= ((t1 ^ handle.h) | (t2 ^ handle.h)) != 0;
	bad |= end > len;
	bad |= size == 0;
	bad |= h_ptr == NULL;
	if (__builtin_expect(bad, 0)) {
		lean2_seq = s + 2;
		return lean2_other(handle, h_ptr, map_d_ptr, size);
	}
	d->fn[lean2_class[size < 256 ? size : 256]](h_ptr, map_d_ptr, size);
	gdr_copy_fence(GDR_COPY_FENCE_STORE);
	atomic_signal_fence(memory_order_seq_cst);
	lean2_seq = lean2_seq + 1;
	return 0;
}

/*
 * The flat path without the lookup (flat_unlooked) plus one piece of it: what makes the lookup
 * cost a read a level? ul_slot loads the handle's slot tag through the library's table and
 * branches on it; ul_slotnb loads it and only keeps the value; ul_global loads a global and
 * branches on it; ul_arg branches on the handle itself. None of the branches is ever taken.
 */
enum ul_piece { UL_SLOT, UL_SLOTNB, UL_GLOBAL, UL_ARG };

static inline __attribute__((always_inline)) int
unlooked_plus(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size,
	      enum ul_piece piece)
{
	unsigned long v;

	if (!gdr_inflight_enter_outer())
		return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
	switch (piece) {
	case UL_SLOT:
		v = atomic_load_explicit(&gdr_handle_slot_at(handle.h)->tag, memory_order_acquire);
		if (__builtin_expect(v == 12345, 0))
			goto other;
		break;
	case UL_SLOTNB:
		v = atomic_load_explicit(&gdr_handle_slot_at(handle.h)->tag, memory_order_acquire);
		__asm__ volatile("" : : "r"(v));
		break;
	case UL_GLOBAL:
		v = (unsigned long)atomic_load_explicit(&gdr_handle_fast_type, memory_order_relaxed);
		if (__builtin_expect(v == 12345, 0))
			goto other;
		break;
	case UL_ARG:
		if (__builtin_expect(handle.h == 12345, 0))
			goto other;
		break;
	}
	gdr_copy_from_wc(h_ptr, map_d_ptr, size);
	gdr_inflight_leave_outer();
	return 0;
other:
	gdr_inflight_leave_outer();
	return gdr_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
}

#define UNLOOKED_PLUS(name, piece)                                                          \
	static int name(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)   \
	{                                                                                   \
		return unlooked_plus(handle, h_ptr, map_d_ptr, size, piece);                \
	}

UNLOOKED_PLUS(ul_slot, UL_SLOT)
UNLOOKED_PLUS(ul_slotnb, UL_SLOTNB)
UNLOOKED_PLUS(ul_global, UL_GLOBAL)
UNLOOKED_PLUS(ul_arg, UL_ARG)

static const struct bench_path paths[] = {
	{ "path_before", "public call before", before_to, before_from },
	{ "path_announced", "announce + dispatcher", announced_to, announced_from },
	{ "path_looked_up", "lookup + dispatcher", looked_up_to, looked_up_from },
	{ "path_nops", "88 nops + dispatcher", nops_to, nops_from },
	{ "path_unannounced", "flat, not announced", flat_unannounced_to, flat_unannounced_from },
	{ "path_unlooked", "flat, not looked up", flat_unlooked_to, flat_unlooked_from },
	{ "path_fence_last", "flat, fence last", NULL, flat_fence_last_from },
	{ "path_flat_before", "flat call before", flat_prev_to, flat_prev_from },
	{ "path_probe_both", "announced: both stores", NULL, probe_both_from },
	{ "path_probe_enter", "announced: store before", NULL, probe_enter_from },
	{ "path_probe_leave", "announced: store after", NULL, probe_leave_from },
	{ "path_probe_none", "announced: loads only", NULL, probe_none_from },
	{ "path_probe_global", "announced: loads, global record", NULL, probe_global_from },
	{ "path_probe_tls", "announced: thread pointer only", NULL, probe_tls_from },
	{ "path_lean", "leaner guards", NULL, lean_from },
	{ "path_lean2", "leaner guards, fewer branches", NULL, lean2_from },
	{ "path_ul_slot", "not looked up, + slot tag + branch", NULL, ul_slot },
	{ "path_ul_slotnb", "not looked up, + slot tag", NULL, ul_slotnb },
	{ "path_ul_global", "not looked up, + global + branch", NULL, ul_global },
	{ "path_ul_arg", "not looked up, + branch on handle", NULL, ul_arg },
	{ "path_spaced_0", "flat, reshaped", NULL, spaced_0 },
	{ "path_spaced_a12", "12 nops before the routine", NULL, spaced_a12 },
	{ "path_spaced_a48", "48 nops before the routine", NULL, spaced_a48 },
	{ "path_spaced_b12", "12 nops before the fence", NULL, spaced_b12 },
	{ "path_spaced_b48", "48 nops before the fence", NULL, spaced_b48 },
	{ "path_spaced_c12", "12 nops after the fence", NULL, spaced_c12 },
	{ "path_spaced_c48", "48 nops after the fence", NULL, spaced_c48 },
#if defined(__x86_64__)
	{ "path_branched_a4", "4 branches before the routine", NULL, branched_a4 },
	{ "path_branched_a12", "12 branches before the routine", NULL, branched_a12 },
	{ "path_loaded_a12", "12 loads before the routine", NULL, loaded_a12 },
	{ "path_loaded_a48", "48 loads before the routine", NULL, loaded_a48 },
	{ "path_lines16", "flat, inline 16 B loads to 64 B", NULL, flat_lines16_from },
	{ "path_lines32", "flat, inline 32 B loads to 64 B", NULL, flat_lines32_from },
#endif
};

const struct bench_path *bench_paths(size_t *count)
{
	*count = sizeof(paths) / sizeof(paths[0]);
	return paths;
}

/* SPDX-License-Identifier: MIT */
/*
 * rep movsb: one instruction for the whole range, which the CPU's microcode splits into the
 * widest stores it can (ERMS/FSRM). Any x86-64 runs it; copy.c picks it only with ERMS. It
 * writes exactly n bytes. There is no load routine: WC memory reads fast only through streaming
 * loads, which rep movsb does not use.
 */
#include "copy_impl.h"

void gdr_copy_store_rep_movsb(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

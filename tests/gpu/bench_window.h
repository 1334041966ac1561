/* SPDX-License-Identifier: MIT */
/*
 * bench_window's two halves: bench_window.c (the program, the BAR and the filler table) and
 * bench_window_calls.c (copy calls as the reads). x86-64 only.
 */
#ifndef GDR_TESTS_BENCH_WINDOW_H
#define GDR_TESTS_BENCH_WINDOW_H

#include <stdint.h>

#include "gdrapi.h"

#define WINDOW_LINES 4096	/* the reads walk 256 KiB of the BAR, 64-byte lines */
#define WINDOW_BYTES (WINDOW_LINES * 64)
#define WINDOW_MAX_ROUNDS 101

/* The mapped BAR and what it holds, for the data checks. */
struct window_bar {
	gdr_t g;
	gdr_mh_t mh;
	char *va;		/* WINDOW_BYTES mapped */
	const uint8_t *expect;	/* the WINDOW_BYTES the GPU holds there */
};

/*
 * The copy calls' tables, after the filler table: rounds and reads as the fillers', rtt_us the
 * round trip measured there. Returns the number of data checks that failed (each printed).
 */
int window_calls_tables(const struct window_bar *bar, int rounds, long reads, double rtt_us);

#endif

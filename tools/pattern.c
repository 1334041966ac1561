/* SPDX-License-Identifier: MIT */
/* GDRCopy's test pattern, and the comparison that reports the first words that differ. */
#include <string.h>

#include "common.h"

static uint32_t pattern_word(size_t w, unsigned seed)
{
	return 0x3F4C5E6Au ^ (1u << ((w + seed) % 32));
}

void tool_fill_pattern(void *buf, size_t bytes, unsigned seed)
{
	unsigned char *p = buf;
	size_t w = 0;

	for (; bytes >= 4; bytes -= 4, p += 4, w++) {
		uint32_t v = pattern_word(w, seed);

		memcpy(p, &v, 4);
	}
	if (bytes) {
		uint32_t v = pattern_word(w, seed);

		memcpy(p, &v, bytes);
	}
}

size_t tool_compare(const void *got, const void *want, size_t bytes)
{
	const unsigned char *g = got, *w = want;
	size_t bad = 0;

	for (size_t off = 0; off < bytes; off += 4) {
		uint32_t a = 0, b = 0;
		size_t n = bytes - off < 4 ? bytes - off : 4;

		memcpy(&a, g + off, n);
		memcpy(&b, w + off, n);
		if (a == b)
			continue;
		if (bad < 10)
			printf("word %zu content 0x%08x expected 0x%08x\n", off / 4, a, b);
		bad++;
	}
	return bad;
}

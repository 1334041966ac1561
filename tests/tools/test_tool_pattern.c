/* SPDX-License-Identifier: MIT */
/*
 * The data the tools copy and check (tools/pattern.c): GDRCopy's pattern fills every byte it is
 * given, a size that is no multiple of 4 included, and differs from seed to seed; the comparison
 * counts each 4-byte word that differs, the last, shorter one too, and nothing else.
 */
#include <string.h>

#include "common.h"
#include "harness.h"

#define SIZE 4099	/* 1024 words and 3 bytes */

int main(void)
{
	unsigned char a[SIZE + 8], b[SIZE];
	size_t i;

	memset(a, 0xaa, sizeof(a));
	tool_fill_pattern(a, SIZE, 3);
	/* No byte of the pattern is 0xaa: each is one of 0x6a 0x5e 0x4c 0x3f with one bit flipped. */
	for (i = 0; i < SIZE && a[i] != 0xaa; i++)
		;
	if (i < SIZE)
		test_report("fail", "fills_every_byte", "byte %zu of %d was left as it was", i, SIZE);
	else if (a[SIZE] != 0xaa)
		test_report("fail", "fills_every_byte", "a byte past the %d was written", SIZE);
	else
		test_report("pass", "fills_every_byte", NULL);

	tool_fill_pattern(b, SIZE, 4);
	if (!memcmp(a, b, SIZE))
		test_report("fail", "seeds_differ", "seeds 3 and 4 gave the same pattern");
	else
		test_report("pass", "seeds_differ", NULL);

	memcpy(b, a, SIZE);
	if (tool_compare(b, a, SIZE)) {
		test_report("fail", "compare", "equal buffers compared unequal");
		return test_status();
	}
	b[0] ^= 1;		/* the first word */
	b[5] ^= 1;		/* word 1 */
	b[6] ^= 1;		/* word 1 again */
	b[SIZE - 1] ^= 1;	/* the short last word */
	i = tool_compare(b, a, SIZE);
	if (i != 3)
		test_report("fail", "compare", "%zu words differ, %zu counted", (size_t)3, i);
	else
		test_report("pass", "compare", NULL);
	return test_status();
}

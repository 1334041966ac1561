/* SPDX-License-Identifier: MIT */
/*
 * src/backends/vulkan_api.h, the library's own declarations of the Vulkan API it uses, against
 * Khronos' headers: every constant's value, every type's size and alignment, every field's offset
 * and size, every string (vulkan_api_facts.h), compiled once against each header; and every
 * typedef, which vulkan_api_khronos.c repeats after Khronos' own. Built only where the Khronos
 * headers are installed (libvulkan-dev); elsewhere a script says so and skips.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "vulkan_api.h"
#include "vulkan_api_facts.h"

extern const struct vulkan_api_fact vulkan_api_khronos_facts[];
static VULKAN_API_FACT_TABLE(own_facts);

int main(void)
{
	int n = 0;

	for (; own_facts[n].name; n++) {
		const struct vulkan_api_fact *o = &own_facts[n], *k = &vulkan_api_khronos_facts[n];

		EXPECT(k->name && !strcmp(o->name, k->name));
		if (o->value != k->value)
			fprintf(stderr, "%s: vulkan_api.h has %lld, Khronos %lld\n", o->name,
				o->value, k->value);
		EXPECT(o->value == k->value);
		if (o->text || k->text)
			EXPECT(o->text && k->text && !strcmp(o->text, k->text));
	}
	EXPECT(!vulkan_api_khronos_facts[n].name);
	printf("%d facts compared\n", n);
	return test_status();
}

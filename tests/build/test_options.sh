#!/bin/bash
# The build's options, each built into a scratch directory: VULKAN=0 leaves the vulkan backend
# out and gdrcopy_info says so; without CUDA's headers (CUDA_INCLUDE= naming none) the library
# builds with gdrdrv alone, gdr_open says why dmabuf and vulkan are not there, no tool is built,
# and make test, and GDRCopy's make exes and exes_install, refuse in one line; TOOLS=0 leaves the tools out;
# SANITIZE= takes 1, thread or 0 and refuses the rest. Each build's summary says what it has.
#   test_options.sh SRCDIR
set -u
src=$1
. "$src/tests/harness/harness.sh"
test_own_make
test_scratch options
mk() { make -C "$src" --no-print-directory -j"$(nproc)" "$@"; }
# summary LOG: the build's CONFIG lines, on one line.
summary() { grep '^  CONFIG  ' "$1" | sed 's/^  CONFIG  //' | tr '\n' '|'; }

# VULKAN=0
if mk BUILD="$tmp/novulkan" VULKAN=0 lib "$tmp/novulkan/bin/gdrcopy_info" >"$tmp/novulkan.log" 2>&1; then
	info=$("$tmp/novulkan/bin/gdrcopy_info" 2>&1)
	if ! summary "$tmp/novulkan.log" | grep -q 'library: backends gdrdrv dmabuf;'; then
		result fail vulkan_0 "the summary does not say so: $(summary "$tmp/novulkan.log")"
	elif ! printf '%s\n' "$info" | grep -q '^vulkan .*built without it (make VULKAN=0)'; then
		result fail vulkan_0 "gdrcopy_info does not say so: $(printf '%s\n' "$info" | grep '^vulkan')"
	else
		result pass vulkan_0
	fi
else
	result fail vulkan_0 "make VULKAN=0 failed: $(grep -m 1 -E 'error|Error' "$tmp/novulkan.log")"
fi

# No CUDA headers: the library alone, with the gdrdrv backend.
nocuda="BUILD=$tmp/nocuda CUDA_INCLUDE=$tmp/no-cuda-here"
if mk $nocuda all KDIR= >"$tmp/nocuda.log" 2>&1; then
	s=$(summary "$tmp/nocuda.log")
	cat >"$tmp/client.c" <<'CLIENT'
#include <stdio.h>
#include <gdrapi.h>
int main(void)
{
	gdr_t g = gdr_open();

	return g ? !gdr_close(g) : 0;
}
CLIENT
	if ! cc -I"$src/include" -o "$tmp/client" "$tmp/client.c" -L"$tmp/nocuda/lib" -lgdrapi \
		-Wl,-rpath,"$tmp/nocuda/lib" 2>"$tmp/client.log"; then
		result fail no_cuda_headers "a client does not build: $(head -n 1 "$tmp/client.log")"
	elif ! case $s in *"library: backends gdrdrv;"*"CUDA headers: none"*"tools: no (no CUDA headers)"*) ;; *) false ;; esac; then
		result fail no_cuda_headers "the summary does not say so: $s"
	elif ls "$tmp/nocuda/bin/"* >/dev/null 2>&1; then
		result fail no_cuda_headers "tools were built: $(ls "$tmp/nocuda/bin")"
	else
		bad=
		for b in dmabuf vulkan; do
			log=$(GDRCOPY_BACKEND=$b GDRCOPY_ENABLE_LOGGING=1 "$tmp/client" 2>&1) ||
				bad="$bad gdr_open with $b did not fail;"
			printf '%s\n' "$log" | grep -q "$b.*built without it (no CUDA headers" ||
				bad="$bad no reason for $b: $(printf '%s' "$log" | tail -n 1);"
		done
		if [ -z "$bad" ]; then result pass no_cuda_headers; else result fail no_cuda_headers "$bad"; fi
	fi
	bad=
	for goal in test exes exes_install; do
		if mk $nocuda prefix="$tmp/nocuda-prefix" $goal >"$tmp/nocuda-$goal.log" 2>&1; then
			bad="$bad make $goal went on without CUDA's headers;"
		elif ! grep -q "no cuda.h in $tmp/no-cuda-here, which make $goal needs (the tools and tests are built with it): install the CUDA toolkit headers" "$tmp/nocuda-$goal.log"; then
			bad="$bad make $goal: not the one-line refusal: $(grep -m 1 -E 'error|\*\*\*' "$tmp/nocuda-$goal.log");"
		fi
	done
	if [ -z "$bad" ]; then result pass no_cuda_headers_test; else result fail no_cuda_headers_test "$bad"; fi
else
	result fail no_cuda_headers "make without CUDA's headers failed: $(grep -m 1 -E 'error|Error' "$tmp/nocuda.log")"
fi

# TOOLS=0: nothing of tools/ in what "make all" would do.
mk -n BUILD="$tmp/notools" TOOLS=0 all KDIR= >"$tmp/notools.log" 2>&1
tools_re='(^| )tools/[a-z_]+\.c|/bin/gdrcopy_'
if grep -qE "$tools_re" "$tmp/notools.log"; then
	result fail tools_0 "make -n all builds tools: $(grep -m 1 -E "$tools_re" "$tmp/notools.log")"
elif ! summary "$tmp/notools.log" | grep -q 'tools: no (TOOLS=0)'; then
	result fail tools_0 "the summary does not say so: $(summary "$tmp/notools.log")"
else
	result pass tools_0
fi

# SANITIZE=: 1 (ASan + UBSan), thread (TSan) or 0; anything else stops make before it builds.
if mk BUILD="$tmp/sanitize-bad" SANITIZE=yes lib >"$tmp/sanitize-bad.log" 2>&1; then
	result fail sanitize-value "make SANITIZE=yes went on"
elif ! grep -q 'SANITIZE=yes: give 1 (ASan + UBSan), thread (TSan) or 0' "$tmp/sanitize-bad.log"; then
	result fail sanitize-value "make SANITIZE=yes: $(grep -m 1 -E 'error|\*\*\*' "$tmp/sanitize-bad.log")"
elif [ -e "$tmp/sanitize-bad/lib" ]; then
	result fail sanitize-value "make SANITIZE=yes wrote $tmp/sanitize-bad/lib"
elif ! mk -n BUILD="$tmp/tsan" SANITIZE=thread lib 2>&1 | grep -q -- '-fsanitize=thread'; then
	result fail sanitize-value "make -n SANITIZE=thread lib compiles without -fsanitize=thread"
else
	result pass sanitize-value
fi
test_exit

# SPDX-License-Identifier: MIT
"""A CPU loop updating a value that a running GPU kernel polls, through gdrcopy.

The kernel (CuPy's RawKernel) spins on an 8-byte value in GPU memory until it reads `last`,
counting the changes it sees; the CPU writes 1, 2, ..., last into that memory through the
mapping, each write an 8-byte store that costs well under a microsecond, while the kernel runs.
Needs a GPU, CuPy and libgdrapi (GDRCOPY_LIBRARY=/path/to/libgdrapi.so.2 for a build tree).

    python3 gpu_polls_cpu_value.py [updates]
"""

import struct
import sys
import time

import cupy

import gdrcopy

FOLLOW = cupy.RawKernel(r"""
extern "C" __global__ void follow(const volatile unsigned long long *value,
                                  unsigned long long last, unsigned long long *changes)
{
    unsigned long long seen = 0, n = 0, start, now;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (seen != last) {
        unsigned long long v = *value;
        if (v != seen) {
            seen = v;
            n++;
        }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > 10000000000ull) {   /* 10 s: give up rather than hang */
            n = ~0ull;
            break;
        }
    }
    *changes = n;
}
""", "follow")


def main(last=1000):
    value = gdrcopy.alloc(8)                       # the polled value, in GPU memory
    changes = cupy.zeros(1, dtype=cupy.uint64)
    with gdrcopy.open() as g, g.pin(value) as pin, pin.map() as m:
        backend = g.backend
        m.write(struct.pack("<Q", 0))
        polled = cupy.asarray(value).view(cupy.uint64)   # the same memory, no copy
        FOLLOW((1,), (1,), (polled, cupy.uint64(last), changes))   # runs until it reads `last`
        start = time.perf_counter()
        for step in range(1, last + 1):
            m.write(struct.pack("<Q", step))       # a CPU store into GPU memory
            time.sleep(0.0002)                     # the control loop's other work
        cupy.cuda.Stream.null.synchronize()        # the kernel has read `last` and ended
        elapsed = time.perf_counter() - start
    seen = int(changes[0])
    if seen == 2**64 - 1:
        sys.exit("the kernel never read the last value (10 s)")
    print(f"the kernel saw {seen} of {last} updates in {elapsed * 1e3:.1f} ms "
          f"on the {backend} backend")
    return seen


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)

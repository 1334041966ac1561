# SPDX-License-Identifier: MIT
"""Benchmark (not a test): what a pin and unpin of 4 KiB cost from Python, side by side in one
run, in a thread with no CUDA context current and in one with the device's primary context
current. The dmabuf and vulkan backends call CUDA in the device's context: without one of the
caller's, the library's gdr_t keeps the primary context it had to retain, so that NVIDIA's
driver does not make it again for every call (0.18 s each on the H200 before it did). Prints
the median and the slowest of N rounds, in milliseconds, as a markdown table; exit 77 with the
reason where there is no GPU or no backend.

    python3 python/tests/gpu/bench_pin.py [--rounds N]
"""

import argparse
import ctypes
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_torch import use_environment  # noqa: E402


def rounds_of(g, buf, rounds, with_context):
    """Times in ms of rounds pin + unpin of 4 KiB, in a new thread (its context as asked)."""
    from gdrcopy import _cuda
    times, failure = [], []

    def run():
        try:
            cu = _cuda.cuda()
            scope = _cuda.ContextScope(cu, buf.device) if with_context else None
            if scope:
                scope.__enter__()
            try:
                for _ in range(rounds):
                    start = time.perf_counter()
                    g.pin(buf.ptr, 4096).close()
                    times.append((time.perf_counter() - start) * 1e3)
            finally:
                if scope:
                    scope.__exit__(None, None, None)
        except OSError as e:
            failure.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if failure:
        raise failure[0]
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    use_environment()
    import gdrcopy
    try:
        if hasattr(ctypes.CDLL("libcuda.so.1"), "simcuda_get_counters"):
            print("libcuda.so.1 is the simulated driver, whose contexts cost nothing to make")
            return 77
        buf = gdrcopy.alloc(2 << 20)
        g = gdrcopy.open()
    except OSError as e:
        print(f"no GPU memory or no gdrcopy backend here: {e}")
        return 77
    with g:
        print(f"backend {g.backend}; {args.rounds} rounds of pin + unpin of 4 KiB each")
        print()
        print("| thread | median ms | slowest ms |")
        print("| --- | --- | --- |")
        for name, with_context in (("no CUDA context current", False),
                                   ("the primary context current", True)):
            times = rounds_of(g, buf, args.rounds, with_context)
            print(f"| {name} | {statistics.median(times):.3f} | {max(times):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

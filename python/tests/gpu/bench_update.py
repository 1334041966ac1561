# SPDX-License-Identifier: MIT
"""Benchmark (not a test): a small update of GPU memory from Python, four ways, in one run.

For 8 B, 64 B and 4 KiB:
  - Mapping.write(bytes): this package, through gdr_copy_to_mapping;
  - gdr_copy_to_mapping called straight through ctypes: the floor under the Python API;
  - tensor.copy_(pinned host tensor): PyTorch's synchronous host-to-device copy;
  - cudaMemcpy from pinned host memory (CuPy's cupy.cuda.runtime.memcpy), where CuPy is there;
  - cuMemcpyHtoD (the driver call under cudaMemcpy) through ctypes.
Each figure is the median over batches of the mean time per update, in microseconds. Prints a
markdown table for docs/python.md, preceded by the machine's description.

    python3 python/tests/gpu/bench_update.py [--batches N] [--per-batch N]
"""

import argparse
import ctypes
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_torch import use_environment  # noqa: E402

SIZES = (8, 64, 4096)


def timed(op, batches, per_batch):
    for _ in range(per_batch):
        op()
    means = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(per_batch):
            op()
        means.append((time.perf_counter_ns() - start) / per_batch / 1000)
    return statistics.median(means)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=31)
    parser.add_argument("--per-batch", type=int, default=200)
    args = parser.parse_args()
    use_environment()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed")
        return 77
    if not torch.cuda.is_available():
        print("no CUDA GPU for PyTorch")
        return 77
    import gdrcopy
    from gdrcopy import _library
    try:
        cupy = __import__("cupy")
    except ImportError:
        cupy = None

    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
    cuda.cuMemcpyHtoD_v2.restype = ctypes.c_int
    lib = _library.library()

    size = max(SIZES)
    buf = gdrcopy.alloc(size)
    dst = torch.empty(size, dtype=torch.uint8, device="cuda")
    host = torch.empty(size, dtype=torch.uint8).pin_memory()
    torch.cuda.synchronize()
    rows = {}
    with gdrcopy.open() as g, g.pin(buf) as p, p.map() as m:
        backend = g.backend
        state = m._state  # the mapping's handle and address, for the ctypes floor
        for n in SIZES:
            data = os.urandom(n)
            src, dst_n, host_n = host[:n], dst[:n], host.data_ptr()
            row = {
                "Mapping.write": timed(lambda: m.write(data), args.batches, args.per_batch),
                "gdr_copy_to_mapping (ctypes)": timed(
                    lambda: lib.gdr_copy_to_mapping(state.mh, state.base, data, n),
                    args.batches, args.per_batch),
                "tensor.copy_(pinned)": timed(lambda: dst_n.copy_(src), args.batches,
                                              args.per_batch),
            }
            if cupy is not None:
                kind = cupy.cuda.runtime.memcpyHostToDevice
                row["cudaMemcpy (pinned)"] = timed(
                    lambda: cupy.cuda.runtime.memcpy(dst.data_ptr(), host_n, n, kind),
                    args.batches, args.per_batch)
            # torch made the device's primary context current in this thread.
            assert cuda.cuMemcpyHtoD_v2(dst.data_ptr(), host_n, n) == 0, "cuMemcpyHtoD failed"
            row["cuMemcpyHtoD (pinned)"] = timed(
                lambda: cuda.cuMemcpyHtoD_v2(dst.data_ptr(), host_n, n), args.batches,
                args.per_batch)
            assert m.read(n) == data, "Mapping.write did not land"
            rows[n] = row

    columns = list(rows[SIZES[0]])
    name = torch.cuda.get_device_name(0)
    print(f"# {name}, torch {torch.__version__}, "
          f"{'CuPy ' + cupy.__version__ if cupy else 'no CuPy'}, Python {sys.version.split()[0]}, "
          f"gdrcopy backend {backend}, {args.batches} batches of {args.per_batch}")
    print()
    print("| update | " + " | ".join(columns) + " | copy_ / Mapping.write |")
    print("| --- |" + " ---: |" * (len(columns) + 1))
    for n in SIZES:
        row = rows[n]
        cells = " | ".join(f"{row[c]:.2f} us" for c in columns)
        ratio = row["tensor.copy_(pinned)"] / row["Mapping.write"]
        label = f"{n} B" if n < 1024 else f"{n // 1024} KiB"
        print(f"| {label} | {cells} | {ratio:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""The Python package on a real GPU with PyTorch (and CuPy where installed); tier 3.

Checks, each writing from Python through a mapping and checking with torch, and the reverse:
  - a torch tensor from the expandable-segments allocator (a CUDA VMM allocation with a POSIX-fd
    handle), pinned through __cuda_array_interface__ and through DLPack;
  - a gdrcopy.alloc buffer used by torch (torch.as_tensor, torch.from_dlpack) and by CuPy;
  - a tensor from the default allocator (cudaMalloc): refused by the vulkan backend, with the
    library's reason and what to do;
  - docs/python.md's example: a CUDA kernel polling a value the CPU updates;
  - docs/nccl.md's claims, with torch.distributed on one GPU (a one-rank NCCL communicator still
    puts its work FIFO in GDRCopy-mapped memory): NCCL_GDRCOPY_ENABLE=1 works on the vulkan
    backend with NCCL's default cuMem allocations, and with NCCL_CUMEM_ENABLE=0 (cudaMalloc)
    the pin is refused and NCCL fails its init.
The allocator is chosen when torch starts, so each group runs in a child process with its own
PYTORCH_CUDA_ALLOC_CONF; each NCCL case runs in a process of its own. Plain Python (no pytest, which the GPU machine may lack):

    python3 python/tests/gpu/check_torch.py

prints one line per check and exits 0 (all passed), 1 (a failure) or 77 (nothing could run:
no torch, no GPU, no working backend; the reason is printed). With GDR_TEST_RESULTS set, the
lines also go there for tests/run-tests.sh (make check-gpu).
"""

import errno
import os
import socket
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
NVIDIA_ICDS = ("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json",
               "/usr/share/vulkan/icd.d/nvidia_icd.json", "/etc/vulkan/icd.d/nvidia_icd.json")
GROUPS = {"expandable": "expandable_segments:True", "default": "", "nccl": ""}


class Skip(Exception):
    pass


def environment():
    """The package from this tree, the library from its build, NVIDIA's Vulkan driver."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + env.get("PYTHONPATH", "")
    built = os.path.join(REPO, "build", "lib", "libgdrapi.so.2")
    if "GDRCOPY_LIBRARY" not in env and os.path.exists(built):
        env["GDRCOPY_LIBRARY"] = built
    if "VK_DRIVER_FILES" not in env and "VK_ICD_FILENAMES" not in env:
        for icd in NVIDIA_ICDS:
            if os.access(icd, os.R_OK):
                env["VK_DRIVER_FILES"] = icd
                break
    return env


def use_environment():
    """environment() in this process, for a script that imports gdrcopy itself after it."""
    env = environment()
    for key in ("GDRCOPY_LIBRARY", "VK_DRIVER_FILES", "PYTHONPATH"):
        if key in env:
            os.environ[key] = env[key]
    sys.path.insert(0, env["PYTHONPATH"].split(os.pathsep)[0])


# ---- the checks (run in a child, with the allocator of their group) --------------------------

def setup():
    try:
        import torch
    except ImportError:
        raise Skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        raise Skip("no CUDA GPU for PyTorch")
    import gdrcopy
    try:
        gdrcopy.open().close()
    except OSError as e:
        raise Skip(f"no gdrcopy backend works here: {e}")
    return torch, gdrcopy


def both_ways(torch, gdrcopy, tensor, view):
    """CPU writes through the mapping, torch checks; torch writes, the CPU reads and checks.
    tensor is what gets pinned, view the int32 tensor torch uses on the same memory."""
    n = view.numel()
    with gdrcopy.open() as g, g.pin(tensor) as p, p.map() as m:
        expected = torch.arange(n, dtype=torch.int32)
        m.write(expected.numpy())
        torch.cuda.synchronize()
        assert torch.equal(view.cpu(), expected), "torch does not see the CPU's writes"
        view.mul_(-3)
        torch.cuda.synchronize()
        got = torch.frombuffer(m.read(4 * n), dtype=torch.int32)
        assert torch.equal(got, expected * -3), "the CPU does not read torch's writes"
        return g.backend


def check_expandable_tensor(torch, gdrcopy):
    t = torch.zeros(4096, dtype=torch.int32, device="cuda")
    return f"backend {both_ways(torch, gdrcopy, t, t)}"


class DLPackOnly:
    def __init__(self, obj):
        self.obj = obj

    def __dlpack__(self, **kwargs):
        return self.obj.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()


def check_expandable_tensor_through_dlpack(torch, gdrcopy):
    t = torch.zeros(1024, dtype=torch.int32, device="cuda")
    both_ways(torch, gdrcopy, DLPackOnly(t), t)


def check_alloc_as_tensor(torch, gdrcopy):
    buf = gdrcopy.alloc(16384)
    u8 = torch.as_tensor(buf, device="cuda")
    assert u8.data_ptr() == buf.ptr and u8.numel() == buf.nbytes, "torch.as_tensor copied"
    both_ways(torch, gdrcopy, buf, u8.view(torch.int32))


def check_alloc_from_dlpack(torch, gdrcopy):
    buf = gdrcopy.alloc(8192)
    u8 = torch.from_dlpack(buf)
    assert u8.data_ptr() == buf.ptr and u8.device.type == "cuda", "torch.from_dlpack copied"
    both_ways(torch, gdrcopy, buf, u8.view(torch.int32))
    del u8
    import gc
    gc.collect()
    from gdrcopy import _dlpack
    assert _dlpack.live_exports() == 0, "torch never called the DLPack deleter"


def check_alloc_in_cupy(torch, gdrcopy):
    try:
        import cupy
    except ImportError:
        raise Skip("CuPy is not installed")
    buf = gdrcopy.alloc(4096)
    a = cupy.asarray(buf).view(cupy.int32)
    assert a.data.ptr == buf.ptr, "cupy.asarray copied"
    with gdrcopy.open() as g, g.pin(buf) as p, p.map() as m:
        m.write(bytes(range(256)) * 16)
        cupy.cuda.Stream.null.synchronize()
        assert bytes(cupy.asnumpy(a.view(cupy.uint8))) == bytes(range(256)) * 16
        a[:] = 7
        cupy.cuda.Stream.null.synchronize()
        assert m.read(8) == (7).to_bytes(4, "little") * 2


def check_kernel_polls_cpu_value(torch, gdrcopy):
    try:
        import cupy  # noqa: F401
    except ImportError:
        raise Skip("CuPy is not installed (the example's kernel is a CuPy RawKernel)")
    sys.path.insert(0, os.path.join(REPO, "python", "examples"))
    import gpu_polls_cpu_value
    seen = gpu_polls_cpu_value.main(1000)
    assert 1 <= seen <= 1000, f"the kernel saw {seen} changes"
    return f"the kernel saw {seen} of 1000 updates"


def check_default_allocator_refused(torch, gdrcopy):
    t = torch.zeros(4096, dtype=torch.int32, device="cuda")
    with gdrcopy.open() as g:
        if g.backend != "vulkan":
            raise Skip(f"the {g.backend} backend maps cudaMalloc memory")
        try:
            g.pin(t)
        except gdrcopy.GdrError as e:
            assert e.errno == errno.ENOTSUP, f"errno {e.errno}: {e}"
            assert "not a CUDA VMM allocation" in e.reason, e.reason
            assert "expandable_segments:True" in str(e) and "gdrcopy.alloc()" in str(e), str(e)
            return str(e)
        raise AssertionError("a cudaMalloc tensor was pinned on the vulkan backend")


def check_alloc_without_expandable_segments(torch, gdrcopy):
    buf = gdrcopy.alloc(4096)
    both_ways(torch, gdrcopy, buf, torch.as_tensor(buf, device="cuda").view(torch.int32))


NCCL_ALL_REDUCE = """
import os, torch, torch.distributed as dist
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:" + os.environ["CHECK_PORT"],
                        rank=0, world_size=1)
t = torch.ones(1024, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
assert t.sum().item() == 1024
dist.destroy_process_group()
print("all_reduce done")
"""


def nccl_all_reduce(**env):
    """A one-rank all_reduce with NCCL's and the library's logs: (exit status, output)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # One rank on one machine: NCCL's bootstrap needs no interface but loopback.
    env = {"NCCL_SOCKET_IFNAME": "lo", **environment(), "NCCL_GDRCOPY_ENABLE": "1",
           "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT", "GDRCOPY_ENABLE_LOGGING": "1",
           "GDRCOPY_LOG_LEVEL": "4", "CHECK_PORT": str(port), **env}
    # NCCL dlopens the unversioned libgdrapi.so: the build's lib directory has the link.
    lib_dir = os.path.dirname(env.get("GDRCOPY_LIBRARY", ""))
    if lib_dir:
        env["LD_LIBRARY_PATH"] = lib_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    r = subprocess.run([sys.executable, "-c", NCCL_ALL_REDUCE], env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return r.returncode, r.stdout


def check_nccl_uses_gdrcopy_with_cumem(torch, gdrcopy):
    if not torch.distributed.is_nccl_available():
        raise Skip("this torch has no NCCL")
    rc, out = nccl_all_reduce()
    assert rc == 0 and "all_reduce done" in out, f"exit {rc}: {out[-2000:]}"
    enabled = [l for l in out.splitlines() if "GDRCOPY enabled" in l]
    assert enabled, f"NCCL did not enable GDRCopy: {out[-2000:]}"
    return enabled[0].split("NCCL INFO ", 1)[-1]


def check_nccl_without_cumem_fails_its_init(torch, gdrcopy):
    if not torch.distributed.is_nccl_available():
        raise Skip("this torch has no NCCL")
    with gdrcopy.open() as g:
        if g.backend != "vulkan":
            raise Skip(f"the {g.backend} backend maps NCCL's cudaMalloc FIFO")
    rc, out = nccl_all_reduce(NCCL_CUMEM_ENABLE="0")
    assert "not a CUDA VMM allocation" in out, f"the library refused nothing: {out[-2000:]}"
    assert rc != 0, f"NCCL ran on after the refused pin: {out[-2000:]}"
    warn = [l for l in out.splitlines() if "NCCL WARN" in l]
    return warn[0].strip() if warn else f"exit {rc}"


CHECKS = {
    "expandable": [check_expandable_tensor, check_expandable_tensor_through_dlpack,
                   check_alloc_as_tensor, check_alloc_from_dlpack, check_alloc_in_cupy,
                   check_kernel_polls_cpu_value],
    "default": [check_default_allocator_refused, check_alloc_without_expandable_segments],
    "nccl": [check_nccl_uses_gdrcopy_with_cumem, check_nccl_without_cumem_fails_its_init],
}


def run_group(group):
    """In the child: each check of the group, one result line each on stdout."""
    names = [c.__name__[len("check_"):] for c in CHECKS[group]]
    try:
        torch, gdrcopy = setup()
    except Skip as e:
        for name in names:
            print(f"skip {group}.{name} {e}", flush=True)
        return
    for name, check in zip(names, CHECKS[group]):
        try:
            note = check(torch, gdrcopy)
            print(f"pass {group}.{name}{' ' + note if note else ''}", flush=True)
        except Skip as e:
            print(f"skip {group}.{name} {e}", flush=True)
        except Exception as e:
            detail = " ".join(f"{type(e).__name__}: {e}".split())
            print(f"fail {group}.{name} {detail}", flush=True)
            traceback.print_exc()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--group":
        run_group(sys.argv[2])
        return 0
    results_path = os.environ.get("GDR_TEST_RESULTS")
    verdicts = []
    for group, alloc_conf in GROUPS.items():
        env = environment()
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--group", group],
                               env=env, stdout=subprocess.PIPE, text=True, timeout=600)
        lines = [l for l in child.stdout.splitlines() if l.split(" ", 1)[0] in
                 ("pass", "fail", "skip")]
        if child.returncode != 0 or len(lines) != len(CHECKS[group]):
            lines.append(f"fail {group} the child exited {child.returncode} after "
                         f"{len(lines)} of {len(CHECKS[group])} checks")
        for line in lines:
            verdict, rest = line.split(" ", 1)
            print(f"{verdict.upper():5} {rest}")
            verdicts.append(verdict)
            if results_path:
                with open(results_path, "a") as f:
                    f.write(line + "\n")
    if "fail" in verdicts:
        return 1
    return 77 if set(verdicts) == {"skip"} else 0


if __name__ == "__main__":
    sys.exit(main())

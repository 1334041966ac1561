# SPDX-License-Identifier: MIT
"""Threads: pins and copies from many threads on one Gdr, and closes racing copies, which must
end in a clean InvalidArgument, never in a crash or a copy into unmapped memory."""

import os
import threading

import pytest

import gdrcopy

SLICE = 64 << 10


def run_threads(n, target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_pins_and_copies_from_many_threads(gdr, cuda):
    b = gdrcopy.alloc(8 * SLICE)

    def work(i):
        ptr = b.ptr + i * SLICE
        with gdr.pin(ptr, SLICE) as p, p.map() as m:
            for round_ in range(100):
                data = os.urandom(64 + i * 8 + round_)
                m.write(data, round_ * 8)
                assert m.read(len(data), round_ * 8) == data
        # Pin, map and close again while the others copy.
        for _ in range(20):
            with gdr.pin(ptr, 4096) as p, p.map() as m:
                m.write(bytes([i]) * 16)
        assert cuda.dtoh(ptr, 16) == bytes([i]) * 16

    run_threads(8, work)


@pytest.mark.parametrize("closer", ["mapping", "pin", "gdr"])
def test_close_racing_copies(cuda, closer):
    b = gdrcopy.alloc(SLICE)
    g = gdrcopy.open()
    p = g.pin(b)
    m = p.map()
    wrote = [threading.Event() for _ in range(4)]
    last = {}

    def writer(i):
        n = 0
        while True:
            n += 1
            try:
                m.write(n.to_bytes(8, "little"), i * 64)
            except gdrcopy.InvalidArgument:
                last[i] = n - 1
                return
            wrote[i].set()

    def close_once_all_wrote():
        for event in wrote:
            event.wait(60)
        {"mapping": m, "pin": p, "gdr": g}[closer].close()

    closing = threading.Thread(target=close_once_all_wrote)
    closing.start()
    run_threads(4, writer)
    closing.join()
    assert sorted(last) == [0, 1, 2, 3] and min(last.values()) >= 1
    for i, n in last.items():
        assert int.from_bytes(cuda.dtoh(b.ptr + i * 64, 8), "little") == n
    g.close()

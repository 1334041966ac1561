# SPDX-License-Identifier: MIT
"""Pin: what can be pinned, what is refused and why, info, and the pin's life."""

import errno
import gc
import weakref

import numpy as np
import pytest

import gdrcopy
from gdrcopy import _dlpack

GPU_PAGE = 1 << 16


def test_pin_buffer_info(gdr, buf):
    with gdr.pin(buf) as p:
        assert (p.ptr, p.size) == (buf.ptr, buf.nbytes)
        info = p.info
        assert info.va == buf.ptr & ~(GPU_PAGE - 1)
        assert info.va + info.mapped_size >= buf.ptr + buf.nbytes
        assert info.mapped_size % GPU_PAGE == 0 and info.page_size == GPU_PAGE
        assert not info.mapped and info.mapping_type == gdrcopy.MappingType.NONE
        with p.map() as m:
            info = p.info
            assert info.mapped and info.wc_mapping
            assert info.mapping_type == gdrcopy.MappingType.WC == m.mapping_type
        assert not p.info.mapped
    assert p.closed


def test_pin_pointer_and_size_inside_an_allocation(gdr, buf, cuda):
    ptr = buf.ptr + 3 * GPU_PAGE // 2 - 100
    cuda.htod(ptr - 16, b"\x11" * 332)
    with gdr.pin(ptr, 300) as p, p.map() as m:
        assert p.info.va == (ptr & ~(GPU_PAGE - 1))
        m.write(b"\xab" * 300)
    assert cuda.dtoh(ptr - 16, 332) == b"\x11" * 16 + b"\xab" * 300 + b"\x11" * 16


def test_pin_keeps_its_object_alive(gdr):
    b = gdrcopy.alloc(4096)
    alive = weakref.ref(b)
    p = gdr.pin(b)
    del b
    gc.collect()
    assert alive() is not None
    p.close()
    gc.collect()
    assert alive() is None


def test_cudamalloc_memory_is_refused_with_the_reason(gdr, cuda):
    if gdr.backend != "vulkan":
        pytest.skip(f"the {gdr.backend} backend maps cudaMalloc memory")
    ptr = cuda.malloc(1 << 20)
    try:
        with pytest.raises(gdrcopy.GdrError) as e:
            gdr.pin(ptr, 4096)
    finally:
        cuda.free(ptr)
    assert e.value.errno == errno.ENOTSUP
    assert "not a CUDA VMM allocation" in e.value.reason
    assert "gdrcopy.alloc()" in str(e.value) and "expandable_segments:True" in str(e.value)


def test_vmm_memory_without_a_posix_fd_is_refused(gdr, cuda):
    if gdr.backend != "vulkan":
        pytest.skip(f"the {gdr.backend} backend does not need a POSIX-fd handle")
    ptr, size, handle = cuda.vmm_without_fd(1 << 20)
    try:
        with pytest.raises(gdrcopy.GdrError) as e:
            gdr.pin(ptr, 4096)
    finally:
        cuda.vmm_free(ptr, size, handle)
    assert e.value.errno == errno.ENOTSUP
    assert "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR" in e.value.reason


def test_range_past_the_allocation_is_refused(gdr, buf):
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        gdr.pin(buf.ptr, buf.allocation_size + 1)
    assert e.value.hint == ""  # the vulkan backend's hint is for ENOTSUP only


@pytest.mark.parametrize("args, kind", [
    ((12345,), TypeError),
    (("memory",), TypeError),
    ((0, 4096), gdrcopy.InvalidArgument),
    ((1 << 40, 0), gdrcopy.InvalidArgument),
    ((1 << 40, -1), gdrcopy.InvalidArgument),
    ((1 << 40, 1.5), TypeError),
])
def test_bad_arguments(gdr, args, kind):
    with pytest.raises(kind):
        gdr.pin(*args)


@pytest.mark.parametrize("args, match", [
    ((0, 4096), "nothing to pin: address 0x0, 4096 bytes"),
    ((1 << 40, 0), "nothing to pin: address 0x10000000000, 0 bytes"),
    ((1 << 40, -1), "nothing to pin: address 0x10000000000, -1 bytes"),
])
def test_empty_ranges_are_refused_before_the_library(gdr, recorded, args, match):
    called = recorded(gdr._state.lib, "gdr_pin_buffer_v2")
    with pytest.raises(gdrcopy.InvalidArgument, match=match):
        gdr.pin(*args)
    assert called == []


def test_a_pointer_without_a_size_says_so(gdr, buf):
    with pytest.raises(TypeError, match=r"pin\(device_ptr, size\): give the size"):
        gdr.pin(buf.ptr)


def test_object_and_size_is_a_type_error(gdr, buf):
    with pytest.raises(TypeError):
        gdr.pin(buf, 16)


def test_unpinned_pin_refuses(gdr, buf):
    p = gdr.pin(buf)
    p.close()
    p.close()
    with pytest.raises(gdrcopy.InvalidArgument, match="unpinned"):
        p.info
    with pytest.raises(gdrcopy.InvalidArgument, match="unpinned"):
        p.map()


def test_map_twice_is_eagain(gdr, buf, monkeypatch, recorded):
    with gdr.pin(buf) as p, p.map():
        called = recorded(gdr._state.lib, "gdr_map")
        with pytest.raises(gdrcopy.GdrError) as e:
            p.map()
        monkeypatch.undo()
        assert e.value.errno == errno.EAGAIN and "use its Mapping" in e.value.hint
        assert called == []  # refused before the library, which may not say EAGAIN


def test_a_failed_unmap_leaves_the_mapping_usable(gdr, buf, monkeypatch):
    with gdr.pin(buf) as p:
        m = p.map()
        monkeypatch.setattr(gdr._state.lib, "gdr_unmap", lambda *a: errno.EIO)
        with pytest.raises(gdrcopy.GdrError) as e:
            m.close()
        monkeypatch.undo()
        assert (e.value.errno, e.value.function) == (errno.EIO, "gdr_unmap")
        assert not m.closed and p.info.mapped
        m.write(b"still mapped")
        assert m.read(12) == b"still mapped"
        m.close()
        assert m.closed and not p.info.mapped


def test_a_failed_info_after_gdr_map_unmaps(gdr, buf, monkeypatch):
    lib = gdr._state.lib
    real = lib.gdr_get_info_v2
    calls = []

    def fails_after_map(g, mh, info):
        calls.append(1)
        return errno.EIO if len(calls) == 2 else real(g, mh, info)

    with gdr.pin(buf) as p:
        monkeypatch.setattr(lib, "gdr_get_info_v2", fails_after_map)
        with pytest.raises(gdrcopy.GdrError) as e:
            p.map()
        monkeypatch.undo()
        assert (e.value.errno, e.value.function) == (errno.EIO, "gdr_get_info_v2")
        assert not p.info.mapped
        with p.map() as m:
            assert m.write(b"x") == 1


def test_info_is_what_the_library_says(gdr, buf, monkeypatch):
    lib = gdr._state.lib
    real = lib.gdr_get_info_v2

    def caching(g, mh, info):
        ret = real(g, mh, info)
        info._obj.wc_mapping, info._obj.mapping_type = 0, 2
        return ret

    with gdr.pin(buf) as p, p.map():
        monkeypatch.setattr(lib, "gdr_get_info_v2", caching)
        info = p.info
        monkeypatch.undo()
        assert info.mapped and not info.wc_mapping
        assert info.mapping_type is gdrcopy.MappingType.CACHING


def test_unmap_then_map_again(gdr, buf):
    with gdr.pin(buf) as p:
        with p.map() as m:
            m.write(b"one")
        assert m.closed
        with p.map() as m2:
            assert m2.read(3) == b"one"


def test_gdr_close_ends_its_pins_and_mappings(buf):
    g = gdrcopy.open()
    p = g.pin(buf)
    m = p.map()
    g.close()
    assert p.closed and m.closed
    with pytest.raises(gdrcopy.InvalidArgument):
        m.write(b"x")
    with pytest.raises(gdrcopy.InvalidArgument):
        p.info
    p.close()
    m.close()



class Owner:
    """An owner of device memory, as a tensor is: the pin keeps it, and it may free the memory
    once it is let go."""

    def __init__(self, buf):
        self.__cuda_array_interface__ = buf.__cuda_array_interface__


@pytest.mark.parametrize("mapped", [False, True])
def test_gdr_close_lets_owners_go_only_after_unpinning(buf, monkeypatch, mapped):
    # gdr_close unpins what is left: an owner let go before it could free memory that is still
    # pinned (and mapped), which Pin.close never allows.
    g = gdrcopy.open()
    owner = Owner(buf)
    alive = weakref.ref(owner)
    p = g.pin(owner)
    m = p.map() if mapped else None
    del owner
    lib = g._state.lib
    seen = []
    real_close = lib.gdr_close

    def close(handle):
        seen.append(alive() is not None)
        return real_close(handle)

    monkeypatch.setattr(lib, "gdr_close", close)
    g.close()
    assert seen == [True]
    assert alive() is None and p.closed and (m is None or m.closed)

class DLPackOnly:
    """An owner that offers DLPack alone, as a producer other than this package does."""

    def __init__(self, buf):
        self._buf = buf

    def __dlpack__(self, **kwargs):
        return self._buf.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._buf.__dlpack_device__()


@pytest.mark.parametrize("kind", ["cuda_array_interface", "dlpack"])
def test_a_pin_whose_collected_unpin_failed_is_ended_by_gdr_close(buf, monkeypatch, kind):
    # The collector's unpin failed: the memory is still pinned, so its owner stays (and a
    # DLPack producer's deleter waits) until gdr_close unpins it, and goes then.
    g = gdrcopy.open()
    exports = _dlpack.live_exports()
    if kind == "cuda_array_interface":
        owner = Owner(buf)
        held = weakref.ref(owner)
        p = g.pin(owner)
        del owner
    else:
        p = g.pin(DLPackOnly(buf))

        def held():
            return _dlpack.live_exports() > exports
    lib = g._state.lib
    monkeypatch.setattr(lib, "gdr_unpin_buffer", lambda *a: errno.EIO)
    del p
    gc.collect()
    monkeypatch.undo()
    assert held()
    seen = []
    real_close = lib.gdr_close

    def close(handle):
        seen.append(bool(held()))
        return real_close(handle)

    monkeypatch.setattr(lib, "gdr_close", close)
    g.close()
    assert seen == [True] and not held()
    assert _dlpack.live_exports() == exports


def test_a_mapping_that_goes_is_unmapped(gdr, buf):
    with gdr.pin(buf) as p:
        m = p.map()
        del m
        gc.collect()
        assert not p.info.mapped
        p.map().close()


@pytest.mark.parametrize("drop", ["pin", "gdr", "everything"])
def test_objects_that_go_release_what_they_hold(sim, drop):
    before = sim.counters()["handle_refs"]
    b = gdrcopy.alloc(4096)
    g = gdrcopy.open()
    p = g.pin(b)
    m = p.map()
    m.write(b"x")
    # The buffer holds one reference on its allocation, the vulkan backend's pin another.
    assert sim.counters()["handle_refs"] == before + 2
    del m, p
    if drop in ("gdr", "everything"):
        del g
    if drop == "everything":
        del b
    gc.collect()
    assert sim.counters()["handle_refs"] == before + (0 if drop == "everything" else 1)


def _interrupted(*args):
    """Stands for a step of pin() or map() that a KeyboardInterrupt lands in."""
    raise KeyboardInterrupt


def test_an_exception_after_the_native_pin_unpins(sim, gdr, buf, monkeypatch):
    # A KeyboardInterrupt that lands once gdr_pin_buffer_v2 has pinned, before the Pin exists:
    # the library's pin is ended at once, not left to gdr_close.
    before = sim.counters()["handle_refs"]

    monkeypatch.setattr(gdrcopy.gdr, "PinState", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        gdr.pin(buf)
    monkeypatch.undo()
    assert sim.counters()["handle_refs"] == before
    assert not gdr._state.pins
    gdr.pin(buf).close()


def test_an_exception_after_the_pin_is_registered_ends_it(sim, gdr, monkeypatch):
    # The same, landing once the PinState is registered (here: in Pin()): the pin is ended as
    # its finalizer would end it, and the memory's owner let go once, by it.
    b = gdrcopy.alloc(4096)
    before = sim.counters()["handle_refs"]
    owner = weakref.ref(b)

    monkeypatch.setattr(gdrcopy.gdr, "Pin", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        gdr.pin(b)
    monkeypatch.undo()
    assert sim.counters()["handle_refs"] == before
    assert not gdr._state.pins
    del b
    gc.collect()
    assert owner() is None


@pytest.mark.parametrize("where", ["MappingState", "Mapping"])
def test_an_exception_inside_map_unmaps(gdr, buf, monkeypatch, where):
    # A KeyboardInterrupt that lands once gdr_map has mapped, before the Mapping is returned:
    # the mapping is undone, so the next map() works (it answered EAGAIN, "already mapped").
    import gdrcopy.pin as pin_module

    with gdr.pin(buf) as p:
        monkeypatch.setattr(pin_module, where, _interrupted)
        with pytest.raises(KeyboardInterrupt):
            p.map()
        monkeypatch.undo()
        assert not p.info.mapped
        with p.map() as m:
            m.write(b"ok")
            assert m.read(2) == b"ok"


def test_a_finalizer_whose_unpin_fails_stays_quiet(gdr, buf, monkeypatch, capsys):
    # The collector's release has nobody to tell, and gdr_close unpins what is left: a failed
    # unpin must not print a traceback into whatever the program was doing.
    p = gdr.pin(buf)
    monkeypatch.setattr(gdr._state.lib, "gdr_unpin_buffer", lambda *a: errno.EIO)
    del p
    gc.collect()
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("ptr_from_end, size", [
    (0, 4096),                       # ptr = 2**64
    (-(1 << 20), 1 << 64),           # ptr + size wraps to ptr - 1 MiB
    (-(1 << 20), (1 << 20) + 1),     # ptr + size = 2**64 + 1: one byte past the end
    (1 << 20, 65536),                # ptr = 2**64 + 1 MiB: ctypes would pin ptr = 1 MiB
    (None, (1 << 64) + 65536),       # the buffer's ptr, a size that c_size_t cuts to 64 KiB
    (None, (1 << 64) - 1),
])
def test_ranges_past_64_bits_are_refused_before_the_library(gdr, buf, recorded, ptr_from_end,
                                                           size):
    ptr = buf.ptr if ptr_from_end is None else (1 << 64) + ptr_from_end
    called = recorded(gdr._state.lib, "gdr_pin_buffer_v2")
    with pytest.raises(gdrcopy.InvalidArgument, match="64-bit address space"):
        gdr.pin(ptr, size)
    assert called == []


def test_pointer_and_size_of_numpy_integers(gdr, buf):
    with gdr.pin(np.uint64(buf.ptr), np.int64(4096)) as p:
        assert (p.ptr, p.size) == (buf.ptr, 4096)
        assert type(p.ptr) is int and type(p.size) is int


def test_a_mapping_never_covers_more_than_the_library_mapped(gdr, buf, monkeypatch):
    lib = gdr._state.lib
    real = lib.gdr_get_info_v2
    calls = []

    def smaller_after_map(g, mh, info):
        ret = real(g, mh, info)
        calls.append(ret)
        if len(calls) == 2:  # map() asks before gdr_map and after: shrink the second answer
            info._obj.mapped_size = 4096
        return ret

    with gdr.pin(buf) as p:
        monkeypatch.setattr(lib, "gdr_get_info_v2", smaller_after_map)
        with pytest.raises(gdrcopy.GdrError) as e:
            p.map()
        monkeypatch.setattr(lib, "gdr_get_info_v2", real)
        assert e.value.errno == errno.EIO and "do not hold the pin's" in e.value.reason
        assert not p.info.mapped  # unmapped again, with the size it was mapped with
        with p.map() as m:
            assert m.size == buf.nbytes

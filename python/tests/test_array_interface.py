# SPDX-License-Identifier: MIT
"""pin() of an object whose __cuda_array_interface__ lies: every field is checked, and a wrong
one is refused by name before anything is pinned, never read as some other range of memory."""

import numpy as np
import pytest

import gdrcopy


class Described:
    """An object whose __cuda_array_interface__ is whatever the test gives."""

    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


def interface(buf, **fields):
    """4096 bytes of buf as uint8, with fields replaced (... removes one)."""
    cai = {"shape": (4096,), "typestr": "|u1", "data": (buf.ptr, False), "version": 3}
    cai.update(fields)
    return {key: value for key, value in cai.items() if value is not ...}


def case(fields, error, match):
    return pytest.param(fields, error, match, id=",".join(f"{k}={v!r}" for k, v in
                                                          fields.items()))


# A pointer for the cases refused before the pointer is used. Those where the pointer is used
# (a read-only flag that is not a bool) take buf's: FROM_BUF, replaced by the test.
PTR = 0x7f0000000000
FROM_BUF = "buf.ptr"


@pytest.mark.parametrize("fields, error, match", [
    case({"shape": (-2, -2048)}, gdrcopy.InvalidArgument, r"shape \(-2, -2048\) has a "
         r"negative extent"),
    case({"shape": (True,)}, TypeError, r"shape\[0\] must be an integer, not bool"),
    case({"shape": (4096.0,)}, TypeError, r"shape\[0\] must be an integer, not float"),
    case({"shape": 4096}, TypeError, r"shape must be a tuple, not int"),
    case({"shape": "4096"}, TypeError, r"shape must be a tuple, not str"),
    case({"shape": ...}, gdrcopy.InvalidArgument, r"has no 'shape'"),
    case({"typestr": b"|u1"}, TypeError, r"typestr must be a str such as '<f4', not bytes"),
    case({"typestr": "|t8"}, gdrcopy.InvalidArgument, r"'\|t8' describes a bit field"),
    case({"typestr": "|O8", "shape": (512,)}, gdrcopy.InvalidArgument,
         r"'\|O8' describes Python objects"),
    case({"typestr": "<f 4", "shape": (1024,)}, gdrcopy.InvalidArgument,
         r"typestr '<f 4' is not of the form '<f4'"),
    case({"typestr": "<f-4", "shape": (1024,)}, gdrcopy.InvalidArgument,
         r"typestr '<f-4' is not of the form"),
    case({"typestr": ...}, gdrcopy.InvalidArgument, r"has no 'typestr'"),
    case({"typestr": "<f4", "shape": (16, 64), "strides": (4,)}, gdrcopy.InvalidArgument,
         r"strides \(4,\) do not match shape \(16, 64\)"),
    case({"typestr": "<f4", "shape": (1024,), "strides": "4"}, TypeError,
         r"strides must be a tuple, not str"),
    case({"typestr": "<f4", "shape": (1024,), "strides": (4.0,)}, TypeError,
         r"strides\[0\] must be an integer, not float"),
    case({"data": ...}, gdrcopy.InvalidArgument, r"has no 'data'"),
    case({"data": PTR}, TypeError, r"data must be a tuple, not int"),
    case({"data": (PTR,)}, gdrcopy.InvalidArgument, r"data must be \(pointer, read-only flag\)"),
    case({"data": (FROM_BUF, False, 4096)}, gdrcopy.InvalidArgument,
         r"data must be \(pointer, read-only flag\)"),
    case({"data": (str(PTR), False)}, TypeError, r"data\[0\] \(pointer\) must be an integer, "
         r"not str"),
    case({"data": (True, False)}, TypeError, r"data\[0\] \(pointer\) must be an integer, not "
         r"bool"),
    case({"data": (float(PTR), False)}, TypeError, r"data\[0\] \(pointer\) must be an integer, "
         r"not float"),
    case({"data": (FROM_BUF, "False")}, TypeError, r"data\[1\] \(read-only flag\) must be True or "
         r"False, not str \('False'\)"),
    case({"data": (FROM_BUF, None)}, TypeError, r"data\[1\] \(read-only flag\) must be True or "
         r"False, not NoneType"),
])
def test_a_lying_interface_is_refused_by_name(gdr, buf, fields, error, match):
    data = fields.get("data")
    if isinstance(data, tuple) and data[0] == FROM_BUF:
        fields = {**fields, "data": (buf.ptr, *fields["data"][1:])}
    with pytest.raises(error, match=match) as e:
        gdr.pin(Described(interface(buf, **fields)))
    assert "__cuda_array_interface__" in str(e.value)
    # Nothing was pinned: the memory can be pinned and mapped whole.
    with gdr.pin(buf) as p, p.map() as m:
        assert m.write(b"x") == 1


def test_an_interface_that_is_not_a_dict_is_refused(gdr, buf):
    with pytest.raises(TypeError, match=r"__cuda_array_interface__ must be a dict, not list"):
        gdr.pin(Described([buf.ptr, 4096]))


@pytest.mark.parametrize("fields, size", [
    ({"typestr": "<M8[ns]", "shape": (512,)}, 4096),      # a datetime's unit keeps its size
    ({"typestr": "<m8[us]", "shape": (8, 64)}, 4096),
    ({"typestr": "<U4", "shape": (64,)}, 1024),           # UCS-4: four bytes a character
    ({"typestr": "<f4", "shape": [32, 32], "strides": [128, 4]}, 4096),  # lists as tuples
    ({"typestr": "<c8", "shape": (16, 1, 8), "strides": (64, 7, 8)}, 1024),  # extent 1
], ids=lambda v: repr(v) if isinstance(v, dict) else str(v))
def test_interfaces_within_the_protocol_are_pinned(gdr, buf, cuda, fields, size):
    with gdr.pin(Described(interface(buf, **fields))) as p, p.map() as m:
        assert (p.ptr, p.size) == (buf.ptr, size)
        m.write(bytes(range(256)) * (size // 256))
        assert cuda.dtoh(buf.ptr, size) == bytes(range(256)) * (size // 256)


@pytest.mark.parametrize("flag, readonly", [(False, False), (True, True),
                                            (np.False_, False), (np.True_, True)])
def test_the_read_only_flag_may_be_numpys_bool(gdr, buf, flag, readonly):
    with gdr.pin(Described(interface(buf, data=(buf.ptr, flag)))) as p:
        assert p.readonly is readonly


def test_a_null_pointer_of_an_empty_array_is_nothing_to_pin(gdr, buf):
    with pytest.raises(gdrcopy.InvalidArgument, match="nothing to pin: address 0x0, 0 bytes"):
        gdr.pin(Described(interface(buf, shape=(0,), data=(None, False))))

# SPDX-License-Identifier: MIT
"""Copies and pickles: a DeviceBuffer, Gdr, Pin or Mapping stands for something this process
holds (CUDA memory, a gdr_t, a pin, a CPU mapping), so it is neither copied nor pickled, and the
refusal says what to do instead."""

import copy
import pickle

import pytest

import gdrcopy


@pytest.fixture
def objects(gdr, buf):
    p = gdr.pin(buf)
    m = p.map()
    yield {"DeviceBuffer": buf, "Gdr": gdr, "Pin": p, "Mapping": m}
    m.close()
    p.close()


@pytest.mark.parametrize("name", ["DeviceBuffer", "Gdr", "Pin", "Mapping"])
@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
def test_refused_with_what_to_do(objects, name, how):
    # A shallow copy of a DeviceBuffer shared its allocation without keeping it: the original's
    # finalizer freed the memory that the copy (and a tensor made from it) still pointed at.
    with pytest.raises(TypeError, match=f"gdrcopy.{name} cannot be copied or pickled.*in each "
                                        f"process"):
        how(objects[name])


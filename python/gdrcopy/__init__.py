# SPDX-License-Identifier: MIT
"""gdrcopy: low-latency CPU access to NVIDIA GPU memory, over libgdrapi.so.2.

    import gdrcopy
    buf = gdrcopy.alloc(4096)                    # device memory every backend can map
    with gdrcopy.open() as g, g.pin(buf) as p, p.map() as m:
        m.write(b"\\x01\\x00\\x00\\x00")         # a CPU store into GPU memory
        print(m.read(4))

Gdr, Pin and Mapping are context managers and also release what they hold when they go.
Every failure raises OSError (GdrError; InvalidArgument for EINVAL, also a ValueError) with the
library's errno and its reason. See docs/python.md.
"""

from ._library import LIBRARY_ENV, runtime_version
from .alloc import DeviceBuffer, alloc
from .errors import GdrError, InvalidArgument
from .gdr import Gdr, open
from .mapping import Mapping, MappingType
from .pin import Pin, PinInfo

__version__ = "2.6.0"

__all__ = [
    "DeviceBuffer", "Gdr", "GdrError", "InvalidArgument", "LIBRARY_ENV", "Mapping",
    "MappingType", "Pin", "PinInfo", "alloc", "open", "runtime_version",
]

"""The C heap's policy for compiled code's large temporaries: keep freed memory for the next call.

numba allocates every array with the C library's ``malloc``.  glibc serves a large request (tens of
MB: a (5000, 100, 8) float64 temporary is 32 MB) with fresh pages from the kernel, and gives them
back when it is freed, so each call of a compiled function that makes such a temporary pays a page
fault per 4 KB page touched, again and again: measured on k-means' objective, 29 ms of which the
arithmetic was 3 ms.  NumPy's own arrays avoid most of it (it asks for huge pages); XLA keeps a pool.
Here glibc is told (``mallopt``) to serve requests up to 256 MB from its heap and to keep up to
512 MB of freed heap for reuse, so a call's temporaries reuse the last call's pages.

The cost: a process may hold up to that much freed memory that another process could have used.
``TRANSFORMER_KEEP_FREED_MEMORY=0`` leaves glibc's defaults.  Other C libraries (macOS, musl) are
left alone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD = -1          # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
SERVED_FROM_HEAP = 256 << 20    # requests up to this size come from the heap...
KEPT_WHEN_FREED = 512 << 20     # ...and up to this much freed heap is kept for the next ones

_applied = None


def keep_freed_memory() -> bool:
    """Apply the policy once per process (unless the environment says 0); whether it is in force."""
    global _applied
    if _applied is None:
        _applied = False
        if os.environ.get("TRANSFORMER_KEEP_FREED_MEMORY", "1").strip().lower() not in ("0", "false", "no", "off"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                mallopt = libc.mallopt
            except (OSError, AttributeError):      # not glibc: its own policy stays
                return False
            _applied = bool(mallopt(_M_MMAP_THRESHOLD, SERVED_FROM_HEAP)) and \
                bool(mallopt(_M_TRIM_THRESHOLD, KEPT_WHEN_FREED))
    return _applied

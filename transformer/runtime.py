"""Helpers that generated code calls at run time.

Each is plain NumPy, so the python backend runs it as it is; the CPU backend
gives each one a numba implementation in ``backends/numba_lowering.py``.  Each
one is also a registered primitive, so transforms of generated code have
rules for it.
"""
from __future__ import annotations

import numpy as np


def astype(x, dtype):
    """``x.astype(dtype)`` for arrays and scalars alike."""
    return np.asarray(x).astype(dtype)

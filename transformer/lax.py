"""Primitives that have no NumPy spelling, used inside transformed functions."""
from __future__ import annotations


def stop_gradient(x):
    """Return ``x`` unchanged; derivatives do not flow through it."""
    return x

"""Array methods and attributes, and the primitive each one becomes.

The core form has no methods: ``x.sum(axis=1)`` becomes ``np.sum(x, axis=1)``
and ``x.T`` becomes ``np.transpose(x)``.
"""
from __future__ import annotations

# method name -> primitive name; the receiver becomes the first argument.
METHODS = {
    "sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "min": "min",
    "std": "std", "var": "var", "any": "any", "all": "all", "argmax": "argmax",
    "argmin": "argmin", "cumsum": "cumsum", "cumprod": "cumprod", "dot": "dot",
    "copy": "copy", "ravel": "ravel", "flatten": "ravel", "squeeze": "squeeze",
    "astype": "astype", "clip": "clip", "swapaxes": "swapaxes", "trace": "trace",
    "round": "round",
    # These two take their shape or axes either as one tuple or spread out.
    "reshape": "reshape", "transpose": "transpose",
}

SPREAD_ARGUMENT_METHODS = {"reshape": "shape", "transpose": "axes"}

# attribute name -> primitive name
ATTRIBUTES = {"T": "transpose", "shape": "shape", "ndim": "ndim", "size": "size"}


# JAX's functional index updates, ``x.at[index].<op>(value)``: a copy of ``x`` with the update made
# (see normalize.py).  ``add`` accumulates where an array index names a position twice, as JAX's
# does; the others read and write each position once, so they take ints and slices only.
AT_UPDATES = ("get", "set", "add", "multiply", "divide", "power", "min", "max")


def at_update(call):
    """``(x, subscript, op)`` when ``call`` is ``x.at[index].op(...)``, else None."""
    import libcst as cst
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in AT_UPDATES and isinstance(func.value, cst.Subscript):
        at = func.value.value
        if isinstance(at, cst.Attribute) and at.attr.value == "at":
            return at.value, func.value, func.attr.value
    return None

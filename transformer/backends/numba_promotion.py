"""NumPy's dtype promotion for an integer array meeting a float32 operand, in compiled code.

numba picks a ufunc's loop as NumPy does, first fitting loop first, with one difference: when
the operands mix integers and floats it lets *any* integer cast to *any* float.  That rule
stands in for NumPy's weak Python scalars (``float32_array * n`` stays float32 when ``n`` is a
Python int), and numba cannot tell a Python int from an int64.  But it applies it to integer
*arrays* too, where NumPy does not:

    NumPy:  int64 array + float32 array -> float64      (16777217 stays 16777217)
    numba:  int64 array + float32 array -> float32      (16777217 becomes 16777216)

The same holds for a float32 scalar times an int64 or int32 array.  Compiled code would then
give another dtype, and other numbers, than the python tier and NumPy.

Here, while a function of ours compiles (``COMPILER``, numba's pipeline with this rule around
it), a ufunc whose integer operands include an array picks its loop by NumPy's safe casting:
an integer array is never weak.  That holds where numba types the ufunc (``_ufunc_typing``),
where it lowers it (``_find_loop_for_lowering``) and inside the loops it fuses array
expressions into (``_array_expression``).  Integer scalars keep numba's rule, the right one for
Python ints (shapes, loop counters, ``len``).

Two more of NumPy's own rules hold there: booleans are not subtracted (numba subtracts them as
int8: ``np.diff`` of a bool array gave int8 differences), and integers are divided in float64, as
NumPy's true_divide resolves them (numba took the first loop int8 casts to, float32's).  Nothing
changes for code compiled outside ours.
"""
from __future__ import annotations

import threading

import numpy as np
from numba.core import compiler, types
from numba.core.errors import TypingError
from numba.core.typing import npydecl
from numba.core.registry import cpu_target
from numba.np import npyimpl, numpy_support
from numba.np.ufunc import array_exprs

# compiling: the depth of our compiles; strict: a loop picked by NumPy's safe casting; dividing: no
# integer cast to a float narrower than float64
_state = threading.local()


def _compiling() -> bool:
    return getattr(_state, "compiling", 0) > 0


class _Flag:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        setattr(_state, self.name, getattr(_state, self.name, 0) + 1)

    def __exit__(self, *exc):
        setattr(_state, self.name, getattr(_state, self.name) - 1)


class _Flags:
    def __init__(self, names):
        self.flags = [_Flag(name) for name in names]

    def __enter__(self):
        for flag in self.flags:
            flag.__enter__()

    def __exit__(self, *exc):
        for flag in self.flags:
            flag.__exit__()


class NumpyPromotionCompiler(compiler.Compiler):
    """numba's nopython pipeline, with NumPy's promotion of integer arrays (module docstring).
    Functions it calls compile inside it, so they follow the same rule."""

    def compile_extra(self, func):
        with _Flag("compiling"):
            return super().compile_extra(func)

    def compile_ir(self, func_ir, lifted=(), lifted_from=None):
        with _Flag("compiling"):
            return super().compile_ir(func_ir, lifted, lifted_from)


COMPILER = NumpyPromotionCompiler


_numba_can_cast = numpy_support.ufunc_can_cast
_numba_find_loop = npyimpl.ufunc_find_matching_loop
_numba_ufunc_typing = npydecl.Numpy_rules_ufunc.generic
_numba_array_expression = array_exprs._lower_array_expr


def _can_cast(from_, to, has_mixed_inputs, casting="safe"):
    from_, to = np.dtype(from_), np.dtype(to)
    if getattr(_state, "dividing", 0) and from_.kind in "biu" and to.kind == "f" and to.itemsize < 8:
        return False        # NumPy divides integers in float64 (its own type resolver for true_divide)
    if getattr(_state, "strict", 0):
        return np.can_cast(from_, to, casting)
    return _numba_can_cast(from_, to, has_mixed_inputs, casting)


def _integer_array_meets_float(args) -> bool:
    def kind(t):
        t = t.dtype if isinstance(t, types.Array) else t
        try:
            return numpy_support.as_dtype(t).kind
        except Exception:       # a type with no dtype (a tuple, a record): not this case
            return ""
    integer_array = any(isinstance(t, types.Array) and kind(t) in "iu" for t in args)
    return integer_array and any(kind(t) in "fc" for t in args)


def _booleans_only(args) -> bool:
    return all(isinstance(t.dtype if isinstance(t, types.Array) else t, types.Boolean) for t in args)


def _ufunc_typing(self, args, kws):
    if _compiling() and self.ufunc is np.subtract and _booleans_only(args[:2]):
        # numba subtracts booleans as int8; NumPy refuses to (the python tier does too)
        raise TypingError("numpy boolean subtract, the `-` operator, is not supported: use `^` "
                          "(np.logical_xor) or `!=` for booleans, or cast them to int first")
    if _compiling() and self.ufunc is np.true_divide and _integers_only(args[:2]):
        with _Flag("dividing"):
            return _numba_ufunc_typing(self, args, kws)
    if _compiling() and _integer_array_meets_float(args[:self.ufunc.nin]):
        with _Flag("strict"):
            return _numba_ufunc_typing(self, args, kws)
    return _numba_ufunc_typing(self, args, kws)


def _integers_only(args) -> bool:
    def kind(t):
        t = t.dtype if isinstance(t, types.Array) else t
        return "i" if isinstance(t, (types.Integer, types.Boolean)) else ""
    return all(kind(t) for t in args)


def _find_loop_for_lowering(ufunc, arg_types):
    """Lowering picks the loop again from the operands' element types and the typed result.
    Where numba's rule gives another result than typing chose, the pick under the rule typing
    followed (strict, or dividing) is the one typing made."""
    loop = _numba_find_loop(ufunc, arg_types)
    if not _compiling() or loop is None or len(arg_types) == ufunc.nin:
        return loop
    try:
        wanted = [numpy_support.as_dtype(t) for t in arg_types[ufunc.nin:]]
        if _outputs(loop, len(wanted)) == wanted:
            return loop
        for flags in (("strict",), ("dividing",)):
            with _Flags(flags):
                strict = _numba_find_loop(ufunc, arg_types)
            if strict is not None and _outputs(strict, len(wanted)) == wanted:
                return strict
    except Exception:       # a type with no dtype: numba's pick stands
        pass
    return loop


def _outputs(loop, count):
    return [numpy_support.as_dtype(t) for t in loop.outputs[:count]]


def _array_expression(lowerer, expr):
    """numba fuses ``np.maximum(a, b) * c`` on arrays into one loop whose body it types again on
    elements, where an int64 array's element is an int64 number.  Its operands say whether an
    integer array meets a float: then the body picks its loops strictly too."""
    if _compiling() and _integer_array_meets_float([lowerer.typeof(v.name) for v in expr.list_vars()]):
        with _Flag("strict"):
            return _numba_array_expression(lowerer, expr)
    return _numba_array_expression(lowerer, expr)


def install() -> None:
    """Put the rule in numba's ufunc typing and lowering (once; inert outside our compiles)."""
    if numpy_support.ufunc_can_cast is _can_cast:
        return
    numpy_support.ufunc_can_cast = _can_cast
    npyimpl.ufunc_find_matching_loop = _find_loop_for_lowering
    npydecl.Numpy_rules_ufunc.generic = _ufunc_typing
    array_exprs._lower_array_expr = _array_expression
    if "arrayexpr" in cpu_target.target_context.special_ops:    # put there by an earlier compile
        cpu_target.target_context.special_ops["arrayexpr"] = _array_expression

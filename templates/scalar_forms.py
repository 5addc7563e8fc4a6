"""Primitives on scalars: the ``"scalar"`` table, how code that runs one element or one example at a
time spells what it calls.

Two backends run NumPy code on scalars.  CUDA's fused kernels run a run of elementwise statements
once per element (backends/cuda_fusion.py); a vmap taken over per example runs the un-batched code
once per example, on CUDA in one thread each (cuda_vmap.py), on the CPU in a compiled loop
(cpu_vmap.py), and per_example.py decides which code can.  All three read this table.

The elementwise kinds (``np.sin(x)``, ``x + y``, ``x < y``) mean on scalars what they mean on arrays
and need no rule.  A rule here is how the others are spelled: its template's body is one
``return`` of the scalar expression, in which ``per_example.scalar_form`` puts the call's operands
for the parameters, by position.  ``machinery`` registers the primitives whose call works on one
example's values as written (``form="as_written"``), and those the per-example code must not call
(``form=None``: the ordinary batched vmap runs it).

``per_element=True``: the spelling holds for each element of operands that broadcast together, so
fused kernels run it too.  Without it the spelling holds only where each operand is one value, as in
one example's code: ``rt.zeros_like(x)`` is ``0.0`` only where ``x`` is a number.
"""
from transformer.rules import machinery, rule


@rule("scalar", "where", per_element=True)
def where(condition, x, y):
    return x if condition else y


@rule("scalar", "clip", per_element=True)
def clip(x, lo, hi):
    return min(max(x, lo), hi)


@rule("scalar", "astype", per_element=True)
def astype(x, dtype):
    return dtype(x)


@rule("scalar", "stop_gradient", "rt.copy", per_element=True)
def unchanged(x):
    # stop_gradient only stops derivatives, and a scalar is copied by naming it
    return x


# Reverse mode's cotangent helpers, on one example's scalars: no shapes to make, broadcast or sum over
@rule("scalar", "rt.zeros_like")
def zeros_like(x):
    return 0.0


@rule("scalar", "rt.scalar_seed")
def scalar_seed(out):
    return 1.0


@rule("scalar", "rt.unbroadcast")
def unbroadcast(g, x):
    return g


@rule("scalar", "rt.cast_like")
def cast_like(g, x):
    return float(g)


# Python's casts of one value, an example's entry, its length: the call is already scalar code
machinery("scalar", "float", "int", "bool", "getitem", "len", form="as_written")

# np.round: left to the batched vmap, as per_example.py has done from the first (numba's np.round and
# cuda_numpy.round both take scalars now: lifting this wants tests of round in per-example code)
machinery("scalar", "round", form=None)

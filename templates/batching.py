"""Batching rules: how each primitive runs on values that carry a batch axis.

Layout: inside generated code a batched value keeps its batch axis LAST
(per-example shape ``s`` becomes ``s + (B,)``).  With the batch axis last,
NumPy's right-aligned broadcasting lines the batch axes of two batched
operands up whatever their per-example ranks (a per-example scalar times a
per-example vector just works), and a per-example mask of shape ``(B,)``
broadcasts against any batched value, so ``np.where(mask, new, old)`` selects
per example.  The transform moves the batch axis there on entry and to
``out_axes`` on exit.

Each rule is registered for a group of primitives with a ``strategy`` the
transform (``transformer/transforms/vmap.py``) follows:

* ``elementwise`` — apply the primitive as is; an unbatched array operand
  first gets a trailing axis (``align``), so it broadcasts against the batch.
  ``display``: the same, but a display of entries (``np.array([a, 1.0])``) is
  stacked entry by entry.
* ``reduce`` — move the reduced axes to the front (or flatten them), then
  reduce the leading axis with the template registered (loops where numba
  has no ``axis=`` form).
* ``join``, ``new_shape``, ``flatten``, ``permute``, ``axis_arguments``,
  ``axis_keyword`` — shape operations: the same call, axis arguments shifted
  past the batch axis (negative axes move by one); see the shape section below.
* ``query`` — shape questions, answered for one example by the rule's template.
* ``create`` — new arrays from unbatched shapes; a batched argument is refused
  unless the rule lists it in ``may_batch`` (the call as written serves the
  batch) or in ``values_per_example`` (np.full's fill: the plain call runs once
  per example, as ``loop`` below).
* ``loop`` — no good batched form (``inv``, ``solve``; indexing with batched
  indices): run the primitive once per example in a loop, batch axis first so
  each example is a contiguous row.  A keyword that differs per example is
  refused unless the rule says ``keywords_per_example=True`` (tr.random's
  ``minval=``: each example's call takes its own).
* ``products`` — ``np.dot`` (and ``@``) and reverse mode's ``rt.dot_vjp_x`` /
  ``rt.dot_vjp_y``: with one batched factor, one product for the whole batch
  (``rt.dot_batched_x`` and friends in ``transformer/runtime.py``; an example
  may have rank 0, 1 or 2, which only the helper, at run time or when numba
  compiles it, knows); with both factors batched, the ``loop`` above (numba
  has no batched matrix product).  The rule's ``cases`` say which template
  serves which operands batched.
* ``collective`` — ``lax.psum`` and friends over this vmap's ``axis_name``: the
  rule's template for a batched x, its ``unbatched`` one for an unbatched x.
* ``batched`` — the rule's template is the batched form itself: every operand
  carries the batch axis (an unbatched one is broadcast first, or only viewed
  as broadcast where the rule reads just its shape: ``shape_only``) and the
  template computes all examples at once.
* ``tape`` — reverse mode's tape (``rt.push``/``rt.pop``) in loops that run
  the same passes for every example: one tape whose entries carry the batch
  axis.

The templates below are plain Python; ``normalize.apply_template`` inlines
them into generated code.  A strategy whose work is the transform's own (a
loop over the examples, a join) registers no template: ``rules.machinery``.
"""
import numpy as np

from transformer import primitives
from transformer import runtime as rt
from transformer.rules import RULES, machinery, rule, unsupported


# ------------------------------------------------------------- elementwise
# float(x), int(x) and bool(x) of one example's scalar: the same cast of every example's at once
# (Python's float() of the batch's array would be an error).  Each first checks that an example's
# value is one number: NumPy refuses float() of an array, and so must each example's.  So their
# result is one value per example (``one_value``), which a condition on it needs no check for.
@rule("batching", "float", strategy="batched", one_value=True, when_one_value="float_of_one_value")
def float_batched(x):
    one_each = rt.number_per_example(np.shape(x))
    return rt.astype(x, np.float64)


@rule("batching", "int", strategy="batched", one_value=True, when_one_value="int_of_one_value")
def int_batched(x):
    one_each = rt.number_per_example(np.shape(x))
    return rt.astype(x, np.int64)


@rule("batching", "bool", strategy="batched", one_value=True, when_one_value="bool_of_one_value")
def bool_batched(x):
    one_each = rt.number_per_example(np.shape(x))
    return rt.astype(x, np.bool_)


@rule("batching", "not", strategy="batched", one_value=True, when_one_value="not_of_one_value")
def not_batched(x):
    """Python's ``not`` of one example's value: of the batch's array ``not`` is an error."""
    one_each = rt.truth_value_per_example(np.shape(x))
    return x == 0


# the same, of an operand vmap knows to hold one value per example (a flag, a comparison of numbers)
def float_of_one_value(x):
    return rt.astype(x, np.float64)


def int_of_one_value(x):
    return rt.astype(x, np.int64)


def bool_of_one_value(x):
    return rt.astype(x, np.bool_)


def not_of_one_value(x):
    return x == 0


def number_per_example(x):
    """vmap's check of a range() bound that differs per example: one number each."""
    one_each = rt.number_per_example(np.shape(x))
    return x


def truth_per_example(x):
    """vmap's mask for a condition (``if``, ``while``) that differs per example."""
    one_each = rt.truth_value_per_example(np.shape(x))
    return x != 0


# every other elementwise primitive (those without a rule of their own above): the operation
# itself, on operands aligned to the batch
_ELEMENTWISE = [name for name, prim in primitives.REGISTRY.items()
                if prim.kind in (primitives.UNARY, primitives.BINARY, primitives.COMPARE, primitives.CAST)
                and name not in RULES["batching"]]


@rule("batching", *_ELEMENTWISE, "where", "clip", "stop_gradient", "copy", strategy="elementwise")
def align(x):
    """An unbatched operand, given a trailing axis of length 1 to broadcast against the batch
    (a scalar as it is: it broadcasts, and keeps promoting as a Python or NumPy scalar)."""
    return rt.align_batch(x)


# np.asarray (np.array) as the elementwise ones; a display with batched entries
# (np.array([[1.0, b], [a, 3.0]])) is stacked entry by entry, each with the batch (vmap.stacked_display)
machinery("batching", "asarray", strategy="display")


def broadcast_batch(x, batch_size):
    """An unbatched value copied for every example (a batched value of its own)."""
    return np.copy(np.broadcast_to(np.expand_dims(np.asarray(x), -1), np.shape(x) + (batch_size,)))


# -------------------------------------------------------------- reductions
# Each reduces the LEADING axis of x; the transform first puts the reduced
# per-example axes there.  ``one_axis_at_a_time``: a tuple of axes is reduced axis by axis (var
# and std cannot be: their axes are merged into one first).
@rule("batching", "sum", strategy="reduce", one_axis_at_a_time=True)
def sum_leading(x):
    return np.sum(x, axis=0)


@rule("batching", "mean", strategy="reduce", one_axis_at_a_time=True)
def mean_leading(x):
    return np.sum(x, axis=0) / np.shape(x)[0]


@rule("batching", "var", strategy="reduce")
def var_leading(x, ddof=0):
    mean = np.sum(x, axis=0) / np.shape(x)[0]
    deviation = x - mean
    return np.sum(deviation * deviation, axis=0) / (np.shape(x)[0] - ddof)


@rule("batching", "std", strategy="reduce")
def std_leading(x, ddof=0):
    mean = np.sum(x, axis=0) / np.shape(x)[0]
    deviation = x - mean
    return np.sqrt(np.sum(deviation * deviation, axis=0) / (np.shape(x)[0] - ddof))


@rule("batching", "max", strategy="reduce", one_axis_at_a_time=True)
def max_leading(x):
    out = np.copy(x[0])
    for i in range(1, np.shape(x)[0]):
        out = np.maximum(out, x[i])
    return out


@rule("batching", "min", strategy="reduce", one_axis_at_a_time=True)
def min_leading(x):
    out = np.copy(x[0])
    for i in range(1, np.shape(x)[0]):
        out = np.minimum(out, x[i])
    return out


@rule("batching", "prod", strategy="reduce", one_axis_at_a_time=True)
def prod_leading(x):
    out = np.copy(x[0])
    for i in range(1, np.shape(x)[0]):
        out = out * x[i]
    return out


@rule("batching", "any", strategy="reduce", one_axis_at_a_time=True)
def any_leading(x):
    out = x[0] != 0
    for i in range(1, np.shape(x)[0]):
        out = np.logical_or(out, x[i] != 0)
    return out


@rule("batching", "all", strategy="reduce", one_axis_at_a_time=True)
def all_leading(x):
    out = x[0] != 0
    for i in range(1, np.shape(x)[0]):
        out = np.logical_and(out, x[i] != 0)
    return out


@rule("batching", "argmax", strategy="reduce")
def argmax_leading(x):
    best = np.copy(x[0])
    index = np.zeros(np.shape(best), dtype=np.int64)
    for i in range(1, np.shape(x)[0]):
        better = x[i] > best
        best = np.where(better, x[i], best)
        index = np.where(better, i, index)
    return index


@rule("batching", "argmin", strategy="reduce")
def argmin_leading(x):
    best = np.copy(x[0])
    index = np.zeros(np.shape(best), dtype=np.int64)
    for i in range(1, np.shape(x)[0]):
        better = x[i] < best
        best = np.where(better, x[i], best)
        index = np.where(better, i, index)
    return index


@rule("batching", "cumsum", strategy="reduce", keeps_axis=True)
def cumsum_leading(x):
    out = np.copy(x)
    for i in range(1, np.shape(x)[0]):
        out[i] = out[i - 1] + x[i]
    return out


@rule("batching", "cumprod", strategy="reduce", keeps_axis=True)
def cumprod_leading(x):
    out = np.copy(x)
    for i in range(1, np.shape(x)[0]):
        out[i] = out[i - 1] * x[i]
    return out


# the 2-norm of vectors; another ord, or a matrix norm (a tuple axis), runs per example
@rule("batching", "norm", strategy="reduce", vector_2_norm_only=True)
def norm_leading(x):
    return np.sqrt(np.sum(x * x, axis=0))


# -------------------------------------------------------------------- shape
# Shape operations keep the batch axis last; each strategy (transforms/vmap.py) moves the call's
# axis arguments past it:
# - "join": a literal tuple of arrays along a literal axis (``flattens_without_axis``: axis=None
#   joins the flattened arrays, each example's a column);
# - "new_shape": the per-example shape plus the batch (``contiguous``: numba reshapes only C-ordered arrays);
# - "flatten": one example's entries as a column;
# - "permute": the axes permuted, the batch's kept last;
# - "axis_arguments": int axes given by position (literals shifted now, a name holding an int
#   by ``axis - (axis < 0)`` at run time);
# - "axis_keyword": a literal axis= keyword, and ``without_axis`` the template when there is none.
machinery("batching", "concatenate", strategy="join", flattens_without_axis=True)
machinery("batching", "stack", strategy="join")
machinery("batching", "reshape", strategy="new_shape", contiguous=True)
machinery("batching", "broadcast_to", strategy="new_shape")
machinery("batching", "ravel", strategy="flatten")
machinery("batching", "transpose", strategy="permute")
machinery("batching", "swapaxes", "moveaxis", "expand_dims", strategy="axis_arguments")
machinery("batching", "squeeze", strategy="axis_keyword", without_axis="squeeze_examples")
machinery("batching", "flip", strategy="axis_keyword", without_axis="flip_examples")


def squeeze_examples(x, batch_size):
    """np.squeeze(x) of each example: its unit axes (one example's shape is known at run time)."""
    return np.reshape(np.copy(x), rt.squeezed_shape(np.shape(x)[:-1]) + (batch_size,))


def flip_examples(x):
    """np.flip(x) of each example: every axis flipped, then the batch's flipped back."""
    return np.flip(x)[..., ::-1]


# ------------------------------------------------------------------ queries
# One example's answer, the same for every example (an unbatched result).
@rule("batching", "len", strategy="query")
def len_example(x):
    return len(x)                # the first per-example axis is the array's first axis


@rule("batching", "shape", strategy="query")
def shape_example(x):
    return np.shape(x)[:-1]


@rule("batching", "ndim", strategy="query")
def ndim_example(x):
    return len(np.shape(x)) - 1


@rule("batching", "size", strategy="query")
def size_example(x, batch_size):
    return np.size(x) // batch_size


# ----------------------------------------------------------------- creation
# New arrays, the same call for the batch; an argument that differs between examples is refused
# unless listed in ``may_batch`` (np.zeros_like of a batched x is the batch's zeros).
machinery("batching", "zeros", "ones", "empty", "arange", "eye", "rt.index_slice", strategy="create")
# a fill or ends that differ per example, the shape the same for all: the plain call once per example
machinery("batching", "full", strategy="create", values_per_example=("fill_value",))
machinery("batching", "linspace", strategy="create", values_per_example=("start", "stop"))
machinery("batching", "zeros_like", "ones_like", "empty_like", strategy="create", may_batch=("x",))
machinery("batching", "full_like", strategy="create", may_batch=("x",), values_per_example=("fill_value",))


# ------------------------------------------------------ one example at a time
machinery("batching", "outer", "inner", "vdot", "trace", "inv", "solve", "det", "hstack", "vstack", "getitem",
          "setitem", strategy="loop")


def example(x, b):
    """Example ``b`` of a batched value."""
    return x[..., b]


# ---------------------------------------------- decompositions: NumPy's own stacks
# NumPy decomposes every matrix of a stack (the leading axes): the batch goes first, then back last.
@rule("batching", "cholesky", strategy="batched")
def cholesky_batched(x):
    return np.moveaxis(np.linalg.cholesky(np.moveaxis(x, -1, 0)), 0, -1)


@rule("batching", "eigvalsh", strategy="batched")
def eigvalsh_batched(x):
    return np.moveaxis(np.linalg.eigvalsh(np.moveaxis(x, -1, 0)), 0, -1)


@rule("batching", "slogdet", strategy="batched")
def slogdet_batched(x):
    sign, logabsdet = np.linalg.slogdet(np.moveaxis(x, -1, 0))
    return np.moveaxis(sign, 0, -1), np.moveaxis(logabsdet, 0, -1)


@rule("batching", "eigh", strategy="batched")
def eigh_batched(x):
    w, v = np.linalg.eigh(np.moveaxis(x, -1, 0))
    return np.moveaxis(w, 0, -1), np.moveaxis(v, 0, -1)


# ------------------------------------------------ products with one batched factor
# ``cases``: (which operands are batched, None for either; the template; the template used instead
# where vmap still holds the "_rows" operand batch-first, or None; the comment the generated code
# gets).  A template parameter named "<operand>_example" is given one example of it (only its shape
# matters).  ``identity``: the template where y's examples are the identity's columns.  Any other
# batching (both factors) runs the product once per example.
ONE_FACTOR = "# strategy: one factor is the same for every example: one product for the whole batch"
COTANGENT_AND_X = ("# strategy: the cotangent and x are batched: elementwise for examples of rank 0 and 1 "
                   "(the helper loops over the examples only for matrices)")
machinery("batching", "dot", strategy="products", identity="dot_identity_y",
          cases=(((True, False), "dot_batched_x", "dot_rows_x", ONE_FACTOR),
                 ((False, True), "dot_batched_y", None, ONE_FACTOR)))
machinery("batching", "matmul", strategy="products", identity="dot_identity_y",     # @ past two dimensions
          cases=(((True, False), "matmul_batched_x", None, ONE_FACTOR),          # per example is not np.dot
                 ((False, True), "matmul_batched_y", None, ONE_FACTOR)))
machinery("batching", "rt.dot_vjp_x", strategy="products",
          cases=(((True, None, False), "dot_vjp_x_batched_g", None, ONE_FACTOR),))
machinery("batching", "rt.matmul_vjp_x", strategy="products",
          cases=(((True, None, False), "matmul_vjp_x_batched_g", None, ONE_FACTOR),))
machinery("batching", "rt.dot_vjp_y", strategy="products",
          cases=(((True, False, None), "dot_vjp_y_batched_g", None, ONE_FACTOR),
                 ((True, True, False), "dot_vjp_y_batched_gx", "dot_vjp_y_rows_gx", COTANGENT_AND_X)))
machinery("batching", "rt.matmul_vjp_y", strategy="products",
          cases=(((True, False, None), "matmul_vjp_y_batched_g", None, ONE_FACTOR),
                 ((True, True, False), "matmul_vjp_y_batched_gx", None, COTANGENT_AND_X)))


def dot_batched_x(x, y):
    """``np.dot(example, y)``, ``x`` batched: one product."""
    return rt.dot_batched_x(x, y)


def dot_batched_y(x, y):
    """``np.dot(x, example)``, ``y`` batched: one product."""
    return rt.dot_batched_y(x, y)


def matmul_batched_x(x, y):
    """``example @ y``, ``x`` batched: dot_batched_x's one product for examples of at most two
    dimensions (where @ is np.dot), @ per example past that."""
    return rt.matmul_batched_x(x, y)


def matmul_batched_y(x, y):
    """``x @ example``, ``y`` batched."""
    return rt.matmul_batched_y(x, y)


def dot_identity_y(x, basis):
    """``np.dot(x, example)`` where the examples are the identity's columns: ``x`` itself."""
    return rt.dot_identity_y(x, basis)


def matmul_vjp_x_batched_g(g, x_example, y):
    """``rt.matmul_vjp_x`` of a batched cotangent (dot_vjp_x_batched_g's where @ is np.dot)."""
    return rt.matmul_vjp_x_batched_g(g, x_example, y)


def matmul_vjp_y_batched_g(g, x, y_example):
    """``rt.matmul_vjp_y`` of a batched cotangent."""
    return rt.matmul_vjp_y_batched_g(g, x, y_example)


def matmul_vjp_y_batched_gx(g, x, y):
    """``rt.matmul_vjp_y`` with the cotangent and ``x`` batched."""
    return rt.matmul_vjp_y_batched_gx(g, x, y)


def dot_rows_x(x_rows, y):
    """``np.dot(example, y)`` where vmap still holds ``x`` batch-first: one product, no copy."""
    return rt.dot_rows_x(x_rows, y)


def dot_vjp_x_batched_g(g, x_example, y):
    """``rt.dot_vjp_x`` of a batched cotangent: ``x`` gives only a shape, one example's."""
    return rt.dot_vjp_x_batched_g(g, x_example, y)


def dot_vjp_y_batched_g(g, x, y_example):
    return rt.dot_vjp_y_batched_g(g, x, y_example)


def dot_vjp_y_batched_gx(g, x, y):
    """``rt.dot_vjp_y`` of a batched cotangent and a batched ``x``: elementwise for examples of
    rank 0 and 1 (the helper loops over the examples only for matrices)."""
    return rt.dot_vjp_y_batched_gx(g, x, y)


def dot_vjp_y_rows_gx(g, x_rows, y):
    """``rt.dot_vjp_y`` with a batched cotangent and ``x`` still batch-first: no copy of ``x``."""
    return rt.dot_vjp_y_rows_gx(g, x_rows, y)


# A loop over the examples runs batch-first: each example is a contiguous row.
def row(x, b):
    return x[b]


def rows_like(x, batch_size):
    """Room for every example's value, batch axis first, shaped and typed as one example's ``x``."""
    return np.copy(np.broadcast_to(np.asarray(x), (batch_size,) + np.shape(x)))


def batch_last(x):
    return np.copy(np.moveaxis(x, 0, -1))


# Runtime helpers of reverse mode (vmap of grad).
@rule("batching", "rt.unbroadcast", strategy="batched", shape_only=("x",))
def unbroadcast_batched(g, x):
    """With the batch axis last in both, NumPy's right-aligned broadcasting lines the batch axes up:
    reducing ``g`` to ``x``'s shape reduces each example's ``g`` to its ``x``'s shape."""
    return rt.unbroadcast(g, x)


def batch_view(x, batch_size):
    """An unbatched operand the rule reads only for its shape, seen as batched without a copy."""
    return np.broadcast_to(np.expand_dims(np.asarray(x), -1), np.shape(x) + (batch_size,))


@rule("batching", "rt.scalar_seed", strategy="batched")
def scalar_seed_batched(out):
    seed = rt.scalar_seed(out[..., 0])      # checks that an example's output is a scalar
    return np.full(np.shape(out), seed)


# The rest run once per example.
machinery("batching", "rt.expand_to", "rt.dot_batched_x", "rt.dot_batched_y", "rt.matmul_batched_x",
      "rt.matmul_batched_y", "rt.dot_vjp_x_batched_g", "rt.matmul_vjp_x_batched_g", "rt.matmul_vjp_y_batched_g",
      "rt.matmul_vjp_y_batched_gx",
      "rt.dot_vjp_y_batched_g", "rt.dot_vjp_y_batched_gx", "rt.dot_rows_x", "rt.dot_vjp_y_rows_gx", "rt.dot_identity_y", "rt.extremum_vjp", "rt.prod_vjp", "rt.cumsum_vjp", "rt.cumprod_vjp", "rt.inner_vjp_x", "rt.inner_vjp_y", "rt.norm_vjp", "rt.norm_ord_weights", "rt.norm_ord_curvature", "rt.transpose_vjp",
      "rt.trace_vjp", "rt.solve_columns", "rt.solve_uncolumns", "rt.add_at", "rt.take_at", "rt.kept_writes",
          strategy="loop")


@rule("batching", "rt.align_batch", strategy="batched")
def align_batch_batched(x):
    # under an outer vmap each example's trailing axis is the second-to-last
    return np.expand_dims(x, -2)


# runtime helpers that act elementwise: the same alignment as the elementwise primitives
rule("batching", "rt.zeros_like", "rt.copy", "rt.cast_like", "rt.cast_derivative", "rt.has_cotangent",
     strategy="elementwise")(align)


# reverse mode's tape (strategy "tape" in the transform): a value pushed unbatched on a tape of batched ones
machinery("batching", "rt.stack", "rt.push", "rt.pop", "rt.top", "rt.add_to_top", strategy="tape")
# a custom function's call (strategy "custom" in the transform): the marker stays, the batch in its
# operands, and names the user's rule applied to each example (custom.batched_rule)
machinery("batching", "rt.custom_vjp_call", "rt.custom_jvp_call", strategy="custom")
unsupported("batching", ["rt.number_per_example", "rt.truth_value_per_example"],
            "their operand is a shape, which vmap never batches (np.shape of a batched value is one example's)")
unsupported("batching", ["ppermute"], "lax.ppermute over an axis other than this vmap's own axis_name has no "
            "batching rule (over its own axis it is rewritten with all_gather first)")


# --------------------------------------------------------------- named axes
# A collective over this vmap's own axis_name: the template for a batched x, and ``unbatched`` the
# one for an x that is the same for every example.  The result is the same for every example
# (unbatched), but axis_index's (``batched_result``).
# Over another vmap's axis the collective is applied per example, as an elementwise primitive.
@rule("batching", "all_gather", strategy="collective", unbatched="all_gather_unbatched")
def gathered(x):
    """Every example's value stacked along a new leading axis (``all_gather``)."""
    return np.moveaxis(x, -1, 0)


def all_gather_unbatched(x, batch_size):
    return np.moveaxis(np.copy(np.broadcast_to(np.expand_dims(np.asarray(x), -1), np.shape(x) + (batch_size,))), -1, 0)


@rule("batching", "psum", strategy="collective", unbatched="psum_unbatched")
def psum_batched(x):
    return np.sum(x, axis=-1)


def psum_unbatched(x, batch_size):
    return x * batch_size


@rule("batching", "pmean", strategy="collective", unbatched="same_for_every_example")
def pmean_batched(x, batch_size):
    return np.sum(x, axis=-1) / batch_size


def same_for_every_example(x):
    return x


@rule("batching", "pmax", strategy="collective", unbatched="same_for_every_example")
def pmax_batched(x):
    return np.max(x, axis=-1)


@rule("batching", "pmin", strategy="collective", unbatched="same_for_every_example")
def pmin_batched(x):
    return np.min(x, axis=-1)


@rule("batching", "axis_index", strategy="collective", batched_result=True)
def axis_index_batched(batch_size):
    """Each example's position in the batch."""
    return np.arange(0, batch_size)

"""Every registered primitive, compiled by numba and run as plain Python, against NumPy.

The corpus functions in corpus_primitives.py each apply many primitives and
return a tuple, so one numba compile covers many of them.  The reference is
the corpus function itself, called directly: plain NumPy.  Which primitives a
corpus function exercises is read from its core form, so a primitive added
to the registry without a corpus use fails ``test_primitive_is_exercised``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst
import numpy as np
import pytest

import corpus_primitives as corpus
import transformer as tr
from transformer import core_form as cf
from transformer import primitives
from transformer.normalize import normalize

TARGETS = ("cpu", "python")
# Each (case, dtype) on cpu is one numba compile of many primitives; float32
# and integer inputs are run where dtype handling differs (literals,
# reductions, elementwise math, nn), float64 everywhere else.


def uniform(*shape, dtype=np.float64, seed=0):
    """Values in (0.1, 0.9): inside every domain the corpus uses."""
    return np.random.default_rng(seed + len(shape)).uniform(0.1, 0.9, shape).astype(dtype)


def symmetric_positive_definite(*shape, dtype=np.float64):
    """Matrices (the last two axes of ``shape``) with eigenvalues in (3, 4) or so: well apart from zero."""
    m = uniform(*shape, dtype=np.float64)
    return (0.5 * (m + np.swapaxes(m, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def small_ints(*shape, dtype=np.int32, seed=0):
    return np.random.default_rng(seed).integers(1, 6, shape).astype(dtype)


@dataclass(frozen=True)
class Case:
    name: str                 # a function in corpus_primitives
    make_args: object         # dtype -> argument tuple
    dtypes: tuple = ("float64", "float32")

    @property
    def fn(self):
        return getattr(corpus, self.name)


CASES = [
    Case("unary_math", lambda d: (uniform(3, 4, dtype=d),)),
    Case("scalar_math", lambda d: (0.3,), dtypes=("float64",)),
    Case("special_functions", lambda d: (uniform(3, 4, dtype=d),)),
    Case("binary_math", lambda d: (uniform(3, 4, dtype=d), uniform(3, 4, dtype=d, seed=1)), dtypes=("float64",)),
    Case("with_literals", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64", "float32", "int32")),
    Case("comparisons", lambda d: (uniform(3, 4, dtype=d), uniform(3, 4, dtype=d, seed=1)), dtypes=("float64",)),
    Case("integer_math", lambda d: (small_ints(3, 4, dtype=d), small_ints(3, 4, dtype=d, seed=1)),
         dtypes=("int32",)),
    Case("reductions", lambda d: (uniform(2, 3, 4, dtype=d),), dtypes=("float64",)),
    Case("reduction_dtypes", lambda d: (uniform(3, 4, dtype=d) * 4.0,), dtypes=("float32", "int32")),
    Case("reductions_as_methods", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64",)),
    Case("norms", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64",)),
    Case("products", lambda d: (uniform(3, 4, dtype=d), uniform(4, 5, dtype=d), uniform(4, dtype=d)),
         dtypes=("float64",)),
    Case("batched_matmul", lambda d: (uniform(2, 3, 4, dtype=d), uniform(2, 4, 5, dtype=d)), dtypes=("float64",)),
    Case("solves", lambda d: (uniform(3, 3, dtype=d) + 3 * np.eye(3, dtype=d), uniform(3, dtype=d)),
         dtypes=("float64",)),
    Case("decompositions", lambda d: (symmetric_positive_definite(3, 3, dtype=d),
                                      symmetric_positive_definite(2, 2, 3, 3, dtype=d))),
    Case("more_decompositions", lambda d: (uniform(4, 3, dtype=d) + np.eye(4, 3, dtype=d), uniform(4, dtype=d)),
         dtypes=("float64",)),
    Case("sorting", lambda d: (np.random.default_rng(3).permutation(12).reshape(3, 4).astype(d) / 12.0,),
         dtypes=("float64",)),
    Case("shapes", lambda d: (uniform(2, 3, 4, dtype=d),), dtypes=("float64",)),
    Case("joins", lambda d: (uniform(3, 4, dtype=d), uniform(3, 4, dtype=d, seed=1)), dtypes=("float64",)),
    Case("casts", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64",)),
    Case("creation", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64",)),
    Case("queries", lambda d: (uniform(3, 4, dtype=d),), dtypes=("float64",)),
    Case("indexing", lambda d: (uniform(4, 5, dtype=d),), dtypes=("float64",)),
    Case("selections", lambda d: (uniform(3, 4, dtype=d), uniform(3, 4, dtype=d, seed=1)), dtypes=("float64",)),
    Case("nn_functions", lambda d: (uniform(3, 4, dtype=d) * 4.0 - 2.0,)),
    Case("random_draws", lambda d: (tr.random.PRNGKey(3), uniform(3, 4, dtype=d)), dtypes=("float64",)),
    Case("scaled_dot_product", lambda d: tuple(uniform(16, 8, dtype=d, seed=s) for s in range(3)),
         dtypes=("float32",)),  # float64 at 256x64 below
]

# Primitives the corpus cannot reach through plain user code, and why.
NOT_EXERCISED = {
    **{name: "a collective: it needs a named axis from vmap/pmap, and is tested with them"
       for name in ("psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute")},
}


def not_exercised_reason(name: str) -> str | None:
    if name.startswith("rt."):
        return ("a runtime helper that only generated code calls; it is tested with the transform "
                "that emits it (its numba version lives in backends/numba_runtime.py)")
    return NOT_EXERCISED.get(name)


# ------------------------------------------------------------------ coverage
class _Primitives(cst.CSTVisitor):
    def __init__(self):
        self.found: set[str] = set()

    def visit_Assign(self, node):
        target = node.targets[0].target
        if isinstance(target, cst.Subscript):
            self.found.add("setitem")
        prim = cf.primitive_of(node.value)
        if prim is not None:
            self.found.add(prim.name)


@functools.lru_cache(maxsize=None)
def exercised() -> frozenset:
    """The primitives the corpus cases apply, read from their core forms."""
    found = set()
    for case in CASES:
        visitor = _Primitives()
        normalize(case.fn).node.visit(visitor)
        found |= visitor.found
    return frozenset(found)


@pytest.mark.parametrize("name", sorted(primitives.REGISTRY))
def test_primitive_is_exercised(name):
    assert name in exercised() or not_exercised_reason(name), \
        f"primitive {name!r} is registered but no corpus_primitives function applies it"


def test_registry_is_large_enough():
    assert len(primitives.REGISTRY) >= 80


# ------------------------------------------------------------------- results
def assert_matches(got, want, dtype, where):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, dtype, f"{where}[{i}]")
        return
    assert np.shape(got) == np.shape(want), f"{where}: shape {np.shape(got)} != {np.shape(want)}"
    if isinstance(want, np.ndarray) and want.ndim > 0:
        # arrays keep NumPy's dtype (numba boxes scalars as Python numbers, so only arrays are checked)
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    tolerance = dict(rtol=2e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                               equal_nan=True, err_msg=where, **tolerance)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case, dtype", [(c, d) for c in CASES for d in c.dtypes],
                         ids=lambda v: v.name if isinstance(v, Case) else v)
def test_corpus_matches_numpy(case, dtype, target):
    args = case.make_args(dtype)
    want = case.fn(*args)
    got = tr.jit(case.fn, target=target)(*args)
    assert_matches(got, want, dtype, f"{case.name}({dtype}) on {target}")


def test_attention_at_256_by_64_compiles_and_matches_numpy():
    q, k, v = (uniform(256, 64, seed=s) for s in range(3))
    got = tr.jit(corpus.scaled_dot_product)(q, k, v)
    np.testing.assert_allclose(got, corpus.scaled_dot_product(q, k, v), rtol=1e-10)


def test_lowered_source_says_what_it_calls():
    # numba has no np.max(x, axis=-1, keepdims=True): the lowering calls a helper
    source = tr.show(tr.jit(corpus.nn_functions))        # logsumexp, log_softmax
    assert "nl.max_axis(x, -1, True)" in source
    assert "nl.sum_axis(" in source
    # and attention's softmax (max, exp, sum, divide) is one loop over rows
    source = tr.show(tr.jit(corpus.scaled_dot_product))
    assert "nl.softmax_last_axis(" in source and "nl.max_axis" not in source


# ------------------------------------------------------------- numba limits
@pytest.mark.parametrize("fn, why", [
    (corpus.squeeze_without_axis, "axis="),
    (corpus.dot_of_3d, "more than two dimensions"),
])
def test_unlowerable_forms_name_the_user_line(fn, why):
    with pytest.raises(tr.CompileError) as info:
        tr.jit(fn)(uniform(2, 1, 2))
    message = str(info.value)
    line = fn.__code__.co_firstlineno + 1
    assert f"corpus_primitives.py:{line}" in message
    assert why in message

"""The CPU target splits an accumulating gradient loop in two (backends/numba_loops.py):
the value's sums alone, then the adjoints in a loop that vectorises, a share at
i + 1 carried in a scalar.  The gradient must be what the python target computes."""
import re

import libcst as cst
import numpy as np
import pytest

import loop_split_cases as cases
import transformer as tr
from transformer import core_form as cf
from transformer.backends import numba_loops
from transformer.naming import NameScope

SPLIT = numba_loops.COMMENTS[1]


def both_targets(fn, *args, argnums=0):
    compiled = tr.jit(tr.value_and_grad(fn, argnums=argnums))
    return compiled, compiled(*args), tr.value_and_grad(fn, argnums=argnums)(*args)


def assert_same_gradients(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    for g, w in zip(*(r[1] if isinstance(r[1], tuple) else (r[1],) for r in (got, want))):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("size", [1, 2, 3, 17, 1000])
def test_rosenbrock_splits_and_carries_the_share_at_i_plus_one(size):
    x = np.random.default_rng(size).normal(size=size)
    compiled, got, want = both_targets(cases.rosenbrock, x)
    code = tr.show(compiled, x)
    assert SPLIT in code and "x_bar_carry" in code
    # the seed, taken between the loops, also stands for sweep fusion's check after its loop
    # (size 1: no iteration)
    assert code.count("rt.scalar_seed(") == 1
    assert_same_gradients(got, want)


@pytest.mark.parametrize("size", [2, 3, 4, 50])
def test_a_loop_from_a_start_with_two_arrays(size):
    rng = np.random.default_rng(size)
    x, w = rng.normal(size=size), rng.normal(size=size)
    compiled, got, want = both_targets(cases.from_a_start, x, w, argnums=(0, 1))
    assert SPLIT in tr.show(compiled, x, w)
    assert_same_gradients(got, want)


def test_two_carried_sums_stay_in_the_first_loop():
    x = np.random.default_rng(3).normal(size=40)
    compiled, got, want = both_targets(cases.two_sums, x)
    code = tr.show(compiled, x)
    first = code[code.index(numba_loops.COMMENTS[0]):code.index(SPLIT)]
    # (the helper's sums take the caller's names, s and t: simplify.name_results)
    assert "s = s +" in first and "t = t +" in first
    assert_same_gradients(got, want)


@pytest.mark.parametrize("size", [1, 2, 3, 40])
def test_a_share_at_i_minus_one_beside_one_at_i_carries_the_share_at_i(size):
    x = np.random.default_rng(size).normal(size=size)
    compiled, got, want = both_targets(cases.at_i_minus_one, x)
    code = tr.show(compiled, x)
    assert SPLIT in code and "x_bar_carry" in code
    # the last iteration's share at i, after the loop: x_bar[stop - 1]
    assert re.search(r"(_t\d+) = _t0 - 1\n\s+(_t\d+) = x_bar\[\1\]\n\s+x_bar\[\1\] = \2 \+ x_bar_carry", code)
    assert_same_gradients(got, want)
    np.testing.assert_array_equal(got[1], want[1])          # each element's additions in their order


@pytest.mark.parametrize("size", [2, 3, 41])
def test_shares_at_three_offsets_split_and_keep_their_writes(size):
    x = np.random.default_rng(size).normal(size=size)
    compiled, got, want = both_targets(cases.at_three_offsets, x)
    code = tr.show(compiled, x)
    assert SPLIT in code and "_carry" not in code
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("fn", [cases.product_of_sums, cases.at_i_plus_two, cases.few_operations,
                                cases.a_function_again])
def test_what_it_cannot_or_should_not_split_keeps_its_loops(fn):
    # cannot: reverse mode's two loops (the adjoint needs the final sums), an index other than
    # i - 1, i, i + 1; should not (measured): too little arithmetic to win back a second pass
    # over the arrays, a sin the second loop would compute again
    x = np.random.default_rng(7).normal(size=40)
    compiled, got, want = both_targets(fn, x)
    assert SPLIT not in tr.show(compiled, x)
    assert_same_gradients(got, want)


def test_a_loop_with_nothing_at_i_plus_one_splits_without_a_carry():
    x = np.random.default_rng(4).normal(size=33)
    compiled, got, want = both_targets(cases.at_i_only, x)
    code = tr.show(compiled, x)
    assert SPLIT in code and "_carry" not in code
    assert_same_gradients(got, want)


def test_float32_keeps_its_dtype():
    x = np.random.default_rng(6).normal(size=64).astype(np.float32)
    got = tr.jit(tr.value_and_grad(cases.rosenbrock))(x)
    want = tr.value_and_grad(cases.rosenbrock)(x)
    assert got[1].dtype == np.float32
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


# A loop as reverse mode would write it, but whose adjoint reads what the seed is made
# of (``_t2``, different in every iteration) or, in the control, only the seed's input.
SEED_READ = """
def f(x, n):
    s = 0.0
    x_bar = rt.zeros_like(x)
    for i in range(n):
        _t1 = x[i]
        s = s + _t1
        _t2 = s * 2.0
        _t3 = rt.scalar_seed(_t2)
        _t4 = _t3 * {read}
        _t5 = x_bar[i]
        _t6 = _t5 + _t4
        x_bar[i] = _t6
    return s, x_bar
"""


@pytest.mark.parametrize("read, splits", [("_t2", False), ("_t1", True)])
def test_the_adjoint_may_read_the_seed_but_not_what_it_is_made_of(read, splits, monkeypatch):
    monkeypatch.setattr(numba_loops, "SPLIT_FROM_OPERATIONS", 0)    # the rule alone, whatever it would cost
    node = cst.parse_module(SEED_READ.format(read=read)).body[0]
    core = cf.CoreFunction(node=node, scope=NameScope(["x", "n", "s", "x_bar", "i"] + [f"_t{k}" for k in range(7)]))
    code = cst.Module([numba_loops.split_accumulating_loops(core).node]).code
    assert (numba_loops.COMMENTS[1] in code) == splits

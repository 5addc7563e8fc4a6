"""numba_tapes: tapes pushed together in one block and read together in another become one tape of
tuples, and nothing else does.  Each case runs the code before and after the pass (in Python, with
transformer's own runtime) and compares, then the gradients of loops whose tapes merge are checked
against the python target, which keeps a tape per value."""
from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest

import transformer as tr
from transformer import core_form as cf
from transformer import runtime as rt
from transformer.backends import numba_tapes
from transformer.naming import NameScope

# A forward loop that records a and b each step, and a backward loop that reads them back.
RECORDED = """
def f(x, n):
    a_stack = []
    b_stack = []
    for i in range(n):
        a = x * i
        a_stack.append(a)
        {between}
        b = a + 1.0
        b_stack.append(b)
    s = 0.0
    for i in range(n):
        b = rt.top(b_stack)
        a = rt.pop(a_stack)
        s = s * 0.5 + a * b
        {read_between}
        b = rt.pop(b_stack)
    {after}
    return s
"""


def _merged(source: str) -> str:
    node = cst.parse_module(textwrap.dedent(source)).body[0]
    names = ["x", "n", "a", "b", "i", "s", "a_stack", "b_stack"]
    core = cf.CoreFunction(node=node, scope=NameScope(names))
    return cst.Module([numba_tapes.merge_tapes(core).node]).code


def _run(code: str, x=1.5, n=6):
    scope = {"rt": rt}
    exec(code, scope)
    return scope["f"](x, n)


def _source(between="pass", read_between="pass", after="pass"):
    return RECORDED.format(between=between, read_between=read_between, after=after)


def test_two_tapes_pushed_and_read_together_are_one_tape_of_pairs():
    source = _source()
    code = _merged(source)
    assert "tape.append((a, b))" in code, code
    assert "tape_entry = rt.pop(tape)" in code and "a = tape_entry[0]" in code and "b = tape_entry[1]" in code, code
    assert "a_stack.append" not in code and "rt.pop(b_stack)" not in code and "rt.top(b_stack)" not in code, code
    assert _run(code) == _run(textwrap.dedent(source))


@pytest.mark.parametrize("parts, runs", [
    (dict(between="a = a * 2.0"), True),                        # a pushed, then bound again before b's push
    (dict(between="if a > 100.0:\n            break"), True),   # the loop may end between the two pushes
    (dict(between="if a > 100.0:\n            a = 0.0"), True),  # a bound again inside a branch
    (dict(between="for a in range(2):\n            pass"), True),  # ... or by a loop
    (dict(read_between="if s > 1.0:\n            break"), True),  # between the reads
    (dict(after="k = len(a_stack)"), True),                     # another use of a tape
    (dict(read_between="a_stack.append(a)"), True),             # a second push
    (dict(read_between="a = rt.top(a_stack)"), False),          # a's top after its pop (the last reads nothing)
])
def test_tapes_that_cannot_share_keep_their_own(parts, runs):
    source = _source(**parts)
    code = _merged(source)
    assert "tape_entry" not in code, code
    if runs:
        assert _run(code) == _run(textwrap.dedent(source))


def test_a_tape_read_in_the_block_that_pushes_it_keeps_its_own():
    # a nested derivative's tapes are pushed and read in one loop body: the push cannot move later
    source = """
    def f(x, n):
        a_stack = []
        b_stack = []
        s = 0.0
        for i in range(n):
            a = x * i
            a_stack.append(a)
            b = a + 1.0
            b_stack.append(b)
            b = rt.pop(b_stack)
            a = rt.pop(a_stack)
            s = s + a * b
        return s
    """
    code = _merged(source)
    assert "tape_entry" not in code, code


# --- gradients of loops whose tapes merge: the cpu target against the python target


def stepped(w, x):
    """Euler steps with a branch inside: the branch's tapes are a second merged tape."""
    velocity = np.array([0.5, -0.25])
    for step in range(12):
        force = -np.sin(x * w)
        if x[0] > 0.2:
            force = force * x[1]
        velocity = velocity + 0.1 * force
        x = x + 0.1 * velocity
    return np.sum(x ** 2)


def layered(weights, x):
    """Nested loops over rows, as an LSTM's layers and steps."""
    total = 0.0
    for t in range(5):
        h = x
        for layer in range(weights.shape[0]):
            gate = 1.0 / (1.0 + np.exp(-(weights[layer] * h)))
            h = np.tanh(h) * gate
        total = total + np.sum(h * h)
    return total


def falling(w):
    x = np.array([0.0, 4.0])
    velocity = np.array([0.75, 0.0])
    while True:
        moved = x + 0.1 * velocity
        if moved[1] < 0.0:
            return (x[0] + w) ** 2
        velocity = velocity + 0.1 * np.array([w * x[0], -1.0 - w])
        x = moved


@pytest.mark.parametrize("fn, args, argnums", [
    (stepped, (np.array([0.7, -0.3]), np.array([0.4, 0.9])), 0),
    (stepped, (np.array([0.7, -0.3]), np.array([0.4, 0.9])), 1),
    (layered, (np.random.default_rng(0).normal(size=(3, 6)), np.random.default_rng(1).normal(size=6)), 0),
    (falling, (0.3,), 0),
])
def test_gradients_through_merged_tapes_match_the_python_target(fn, args, argnums):
    grad = tr.jit(tr.grad(fn, argnums=argnums))
    assert "tape_entry" in tr.show(grad, *args)
    got = grad(*args)
    expected = tr.jit(tr.grad(fn, argnums=argnums), target="python")(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_a_second_derivative_through_merged_tapes_matches_the_python_target():
    x = np.array([0.4, 0.9])
    w = np.array([0.7, -0.3])

    def loss(w):
        return stepped(w, x)
    got = tr.jit(tr.hessian(loss))(w)
    expected = tr.jit(tr.hessian(loss), target="python")(w)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_a_pop_hands_over_its_entry_and_frees_nothing_twice():
    """``rt.pop`` of a tape of tuples of arrays (numba_runtime._take_last): entries come back last
    first with their values, every array is freed exactly once (numba's allocation counts balance),
    and popping an empty tape raises IndexError."""
    import numba
    from numba.core.runtime import _nrt_python, rtsys
    from transformer.backends import cpu
    cpu.load_numba()

    @numba.njit
    def record_then_read(x, n):
        tape = []
        for i in range(n):
            tape.append((x * i, i, x + i))
        total = 0.0
        for i in range(n - 1, -1, -1):
            scaled, k, shifted = rt.pop(tape)
            total = total * 0.5 + np.sum(scaled) + k + np.sum(shifted)
        return total, len(tape)

    @numba.njit
    def pop_empty(x):
        tape = [(x, x)]
        rt.pop(tape)
        return rt.pop(tape)

    x = np.arange(3.0)
    expected = 0.0
    for i in range(4, -1, -1):
        expected = expected * 0.5 + np.sum(x * i) + i + np.sum(x + i)
    record_then_read(x, 5)
    was_counting = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        total, left = record_then_read(x, 5)
        after = rtsys.get_allocation_stats()
    finally:
        if not was_counting:
            _nrt_python.memsys_disable_stats()
    assert total == pytest.approx(expected) and left == 0
    assert after.alloc - before.alloc == after.free - before.free > 0
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
    with pytest.raises(IndexError):
        pop_empty(x)

"""The rule table (tests/rule_table.py): every row under every check, against oracles of its own.

One test per (check, row).  Oracles need nothing of ours: NumPy itself (the
row function called directly), central differences in float64
(tests/oracles.py), a Python loop for vmap, and jax.numpy where jax is
importable.  A check that does not apply to a row is declared in the row with
its reason (``row.skip``) and is not collected; a documented refusal
(``row.refuses``) is checked to be raised, with its words.

Cost: the derivative and vmap checks run on the python target, one row at a
time (no compile).  The numba checks (``cpu``, ``jit_grad``, ``jit_jvp``)
compile one function per group of rows (generated into a temporary module:
each row's function called in turn) and compare each row's part; a group that
fails to compile is split in halves until the rows at fault are found.

``jit_grad`` and ``jit_jvp`` group fewer rows (DERIVATIVE_GROUP_SIZE): a reverse sweep is a
large function, and LLVM's optimisation time grows faster than its size.  Their 888 cells take
about 12 minutes on 2 cores; the whole suite with them fits in CI's 45.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import sys
import tempfile
import types
from pathlib import Path

import libcst as cst
import numpy as np
import pytest

import oracles
import rule_table as table
import transformer as tr
from rule_table import CHECKS, ROWS
from test_primitives import _Primitives
from transformer import primitives, staging
from transformer.forward import _forward
from transformer.normalize import normalize
from transformer.transformed import Transformed

GROUP_SIZE = 24          # rows per numba compile of their values
# rows per numba compile of their derivatives: LLVM's optimisation is superlinear in a function's
# size, and a reverse sweep is large (at -O3, 24 rows: 54-78 s, the same rows as 3 groups of 8: 36 s;
# at -O1, 24 linear-algebra and shape rows took 175 s as groups of 24, 141 s as groups of 8)
DERIVATIVE_GROUP_SIZE = 8
BATCH = 3                # examples per vmap check


# ------------------------------------------------------------------ rows and their data
def fresh_args(row, seed=0):
    return row.args(np.random.default_rng(seed))


def is_float(value) -> bool:
    return np.issubdtype(np.result_type(value), np.floating)


def leaves(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def regroup(flat, like):
    return type(like)(flat) if isinstance(like, (tuple, list)) else flat[0]


@functools.lru_cache(maxsize=None)
def numpy_out(row):
    return row.fn(*fresh_args(row))


def wrt(row) -> tuple:
    return row.wrt if row.wrt is not None else tuple(i for i, a in enumerate(fresh_args(row)) if is_float(a))


def single_precision(row) -> bool:
    return any(np.result_type(v) == np.float32 for v in (*fresh_args(row), *leaves(numpy_out(row))))


def tolerance(row, second_order=False) -> dict:
    if row.tol is not None:
        return dict(rtol=row.tol, atol=row.tol)
    if single_precision(row):
        return dict(rtol=3e-3, atol=3e-3)
    return dict(rtol=1e-5, atol=1e-5) if second_order else dict(rtol=1e-6, atol=1e-6)


def random_like(value, rng):
    """A random value of ``value``'s shape and dtype (a cotangent, a tangent)."""
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        drawn = rng.uniform(-1.0, 1.0)
        return float(drawn) if isinstance(value, float) else np.result_type(value).type(drawn)
    return rng.uniform(-1.0, 1.0, np.shape(value)).astype(np.result_type(value))


@functools.lru_cache(maxsize=None)
def cotangent(row):
    rng = np.random.default_rng(101)
    return tuple(random_like(o, rng) for o in leaves(numpy_out(row)))


@functools.lru_cache(maxsize=None)
def tangents(row) -> tuple:
    """One tangent per argument: random for the differentiated ones, zero for the other floats, 0.0 for ints."""
    rng = np.random.default_rng(202)
    out = []
    for i, a in enumerate(fresh_args(row)):
        if i in wrt(row):
            out.append(random_like(a, rng))
        else:
            out.append(np.zeros_like(a) if is_float(a) and np.ndim(a) else 0.0)
    return tuple(out)


# ------------------------------------------------------------------ finite-difference oracles
def float64_args(row):
    return [np.asarray(a, dtype=np.float64) if is_float(a) and np.ndim(a) else float(a) if is_float(a) else a
            for a in fresh_args(row)]


def seen_by_differences(row):
    """The function central differences see: the row's own, or its declared oracle (stop_gradient)."""
    return row.oracle(fresh_args(row)) if row.oracle is not None else row.fn


def projection_oracle(row):
    """args -> <u, f(args)> in float64, copying the arguments (the row may write into them)."""
    fn, u = seen_by_differences(row), cotangent(row)

    def project(*args):
        out = leaves(fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
        return sum(float(np.sum(np.asarray(o, dtype=np.float64) * np.asarray(w, dtype=np.float64)))
                   for o, w in zip(out, u))
    return project


@functools.lru_cache(maxsize=None)
def eps(row):
    """1e-6, or 1e-3 where the row rounds to float32 itself (differences finer than its rounding see noise)."""
    rounds = any(np.result_type(o) == np.float32 for o in leaves(seen_by_differences(row)(*float64_args(row))))
    return 1e-3 if rounds else 1e-6


@functools.lru_cache(maxsize=None)
def fd_vjp(row) -> dict:
    """argument position -> d <u, f> / d argument, by central differences."""
    project = projection_oracle(row)
    return {i: oracles.central_difference_grad(project, float64_args(row), argnum=i, eps=eps(row))
            for i in wrt(row)}


@functools.lru_cache(maxsize=None)
def fd_jvp(row) -> list:
    fn = seen_by_differences(row)
    args = float64_args(row)
    steps = [np.asarray(t, dtype=np.float64) if i in wrt(row) else None for i, t in enumerate(tangents(row))]
    outs = []
    for k in range(len(leaves(numpy_out(row)))):
        def leaf(*a, k=k):
            return np.asarray(leaves(fn(*[x.copy() if isinstance(x, np.ndarray) else x for x in a]))[k],
                              dtype=np.float64)
        outs.append(oracles.central_difference_jvp(leaf, args, steps, eps=eps(row)))
    return outs


@functools.lru_cache(maxsize=None)
def fd_hvp(row) -> dict:
    """argument position -> d/dt grad <u, f>(args + t v): the four-point difference, per entry."""
    project = projection_oracle(row)
    args = float64_args(row)
    h = 1e-2 if eps(row) > 1e-6 else 1e-4
    v = tangents(row)

    def at(i, flat_index, si, sv):
        moved = []
        for j, a in enumerate(args):
            a = np.array(a, dtype=np.float64) if j in wrt(row) else a
            if j in wrt(row):
                a = a + sv * h * np.asarray(v[j], dtype=np.float64)
                if j == i:
                    a = np.array(a)
                    a.reshape(-1)[flat_index] += si * h
                a = a if np.ndim(args[j]) else float(a)
            moved.append(a)
        return project(*moved)

    result = {}
    for i in wrt(row):
        entries = np.zeros(np.size(args[i]))
        for k in range(entries.size):
            entries[k] = (at(i, k, 1, 1) - at(i, k, 1, -1) - at(i, k, -1, 1) + at(i, k, -1, -1)) / (4 * h * h)
        result[i] = entries.reshape(np.shape(args[i])) if np.ndim(args[i]) else float(entries[0])
    return result


# ------------------------------------------------------------------ comparing results
def dtype_of(value):
    return np.result_type(value)


def assert_same(got, want, where, rtol=1e-12, atol=1e-12, dtype=None, python_scalars=False):
    """Same nesting, shapes, dtypes and values.  ``dtype`` overrides want's (finite differences
    are float64 whatever the row's precision); ``python_scalars`` lets a 0-d result be a Python
    number of the same kind (numba boxes scalars so)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, type(want)), f"{where}: got a {type(got).__name__}, want a {type(want).__name__}"
        assert len(got) == len(want), f"{where}: {len(got)} results, want {len(want)}"
        dtypes = dtype if isinstance(dtype, (tuple, list)) else [dtype] * len(want)
        for k, (g, w, d) in enumerate(zip(got, want, dtypes)):
            assert_same(g, w, f"{where}[{k}]", rtol, atol, d, python_scalars)
        return
    assert not isinstance(got, (tuple, list)), f"{where}: got a {type(got).__name__}, want one value"
    assert np.shape(got) == np.shape(want), f"{where}: shape {np.shape(got)} != {np.shape(want)}"
    want_dtype = np.dtype(dtype) if dtype is not None else dtype_of(want)
    got_dtype = dtype_of(got)
    if python_scalars and np.ndim(got) == 0 and isinstance(got, (bool, int, float)):
        assert got_dtype.kind == want_dtype.kind, f"{where}: dtype {got_dtype} != {want_dtype}"
    else:
        assert got_dtype == want_dtype, f"{where}: dtype {got_dtype} != {want_dtype}"
    if want_dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=where)


def value_tolerance(row) -> dict:
    return dict(rtol=2e-5, atol=1e-6) if single_precision(row) else dict(rtol=1e-10, atol=1e-12)


def assert_arguments_unchanged(row, args, where):
    """No transform changes a caller's array, jit included (as in JAX): a function that writes
    into its argument works on a copy."""
    for i, (a, b) in enumerate(zip(args, fresh_args(row))):
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: the call changed argument {i}")


# ------------------------------------------------------------------ generated helper modules
_GENERATED = Path(tempfile.mkdtemp(prefix="rule-table-"))
sys.path.insert(0, str(_GENERATED))


def generated_module(prefix, source):
    """Import ``source`` from a real file (transforms read the source of what they transform)."""
    name = f"{prefix}_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
    path = _GENERATED / f"{name}.py"
    if not path.exists():
        path.write_text(source)
    return importlib.import_module(name)


def fn_import(row) -> str:
    return f"from {row.fn.__module__} import {row.fn.__name__} as fn_{row.name}\n"


def n_out(row) -> int:
    out = numpy_out(row)
    assert all(not isinstance(o, (tuple, list)) for o in leaves(out)), f"{row.name}: nested results"
    return len(leaves(out))


def call_lines(row, params, results) -> list:
    """Lines calling the row's function on ``params``, binding its results (one name per leaf)."""
    call = f"fn_{row.name}({', '.join(params)})"
    if isinstance(numpy_out(row), (tuple, list)):
        return [f"    {', '.join(results)}, = {call}" if len(results) == 1 else f"    {', '.join(results)} = {call}"]
    return [f"    {results[0]} = {call}"]


def params_of(row, tag) -> list:
    return [f"a{tag}_{i}" for i in range(len(fresh_args(row)))]


def projection_source(row, tag) -> tuple[list, list, list]:
    """(parameters, cotangent parameters, body lines) of <u, row(args)> for a generated function."""
    params = params_of(row, tag)
    us = [f"u{tag}_{k}" for k in range(n_out(row))]
    outs = [f"o{tag}_{k}" for k in range(n_out(row))]
    body = call_lines(row, params, outs)
    terms = " + ".join(f"np.sum({o} * {u})" for o, u in zip(outs, us))
    body.append(f"    p{tag} = {terms}")
    return params, us, body


@functools.lru_cache(maxsize=None)
def projection(row):
    """A generated user function ``project(*args, *u) = <u, row(*args)>``."""
    params, us, body = projection_source(row, "")
    source = ("import numpy as np\n" + fn_import(row) +
              f"\n\ndef project_{row.name}({', '.join(params + us)}):\n" + "\n".join(body) + "\n    return p\n")
    return getattr(generated_module(f"project_{row.name}", source), f"project_{row.name}")


def group_source(rows, kind) -> str:
    """One function applying every row: its values (kind "values") or the sum of their projections."""
    head = "import numpy as np\n" + "".join(fn_import(r) for r in rows)
    params, lines, results, projections = [], [], [], []
    for n, row in enumerate(rows):
        if kind == "values":
            p = params_of(row, n)
            outs = [f"o{n}_{k}" for k in range(n_out(row))]
            lines += call_lines(row, p, outs)
            params += p
            results += outs
        else:
            p, us, body = projection_source(row, n)
            params += p + us
            lines += body
            projections.append(f"p{n}")
    tail = f"    return {', '.join(results)}," if kind == "values" else f"    return {' + '.join(projections)}"
    return head + f"\n\ndef group({', '.join(params)}):\n" + "\n".join(lines) + "\n" + tail + "\n"


def group_arguments(rows, kind) -> list:
    args = []
    for row in rows:
        args += list(fresh_args(row))
        if kind != "values":
            args += list(cotangent(row))
    return args


def split_by_row(rows, flat, per_row) -> dict:
    found, position = {}, 0
    for row in rows:
        n = per_row(row)
        found[row.name] = tuple(flat[position:position + n])
        position += n
    return found


def run_group(rows, kind) -> dict:
    """{row name: (its part of the result, the arguments it was passed)} for one compiled function."""
    if kind in ("values", "jvp"):
        group = generated_module("group_values", group_source(rows, "values")).group
        args = group_arguments(rows, "values")
        if kind == "values":
            out = tr.jit(group)(*args)
        else:
            all_tangents = [t for row in rows for t in tangents(row)]
            _, out = tr.jvp(tr.jit(group), tuple(args), tuple(all_tangents))
        parts = split_by_row(rows, out, n_out)
        passed = split_by_row(rows, args, lambda row: len(fresh_args(row)))
        return {name: (parts[name], passed[name]) for name in parts}
    group = generated_module("group_projection", group_source(rows, "projection")).group
    args = group_arguments(rows, "projection")
    positions, offset = [], 0                            # every differentiated argument of every row
    for row in rows:
        positions += [offset + i for i in wrt(row)]
        offset += len(fresh_args(row)) + n_out(row)
    grads = tr.jit(tr.grad(group, argnums=tuple(positions)))(*args)
    parts = split_by_row(rows, grads, lambda row: len(wrt(row)))
    passed = split_by_row(rows, args, lambda row: len(fresh_args(row)) + n_out(row))
    return {name: (parts[name], passed[name]) for name in parts}


@functools.lru_cache(maxsize=None)
def grouped(kind, names: tuple) -> dict:
    """{row name: (its part, its arguments) or the exception its compile raised}; a failing group
    is split in halves until each exception belongs to the rows that raise it."""
    try:
        return run_group([table.BY_NAME[n] for n in names], kind)
    except Exception as error:                      # noqa: BLE001  (each row's test reports its own)
        if len(names) == 1:
            return {names[0]: error}
        half = len(names) // 2
        return {**grouped(kind, names[:half]), **grouped(kind, names[half:])}


@functools.lru_cache(maxsize=None)
def runs_on_python(row, kind) -> bool:
    """Whether the row's function (kind "values"), gradient or jvp runs on the python target: one that
    does not is compiled alone, so that its error does not split a group into many compiles."""
    try:
        if kind == "values":
            tr.jit(row.fn, target="python")(*fresh_args(row))
        elif kind == "jvp":
            our_jvp(row)
        else:
            gradient_of_projection(row)(*fresh_args(row), *cotangent(row))
    except Exception:                               # noqa: BLE001  (the row's own python checks report it)
        return False
    return True


def group_of(row, check, kind) -> tuple:
    if check in row.refuses or not runs_on_python(row, kind):
        return kind, (row.name,)
    members = [r.name for r in ROWS if applies(r, check) and check not in r.refuses and runs_on_python(r, kind)]
    size = GROUP_SIZE if kind == "values" else DERIVATIVE_GROUP_SIZE
    k = members.index(row.name) // size
    return kind, tuple(members[k * size:(k + 1) * size])


def grouped_result(row, check, kind):
    result = grouped(*group_of(row, check, kind))[row.name]
    if isinstance(result, Exception):
        raise result
    return result


# ------------------------------------------------------------------ which checks apply
def automatic_skip(row, check) -> str | None:
    args = fresh_args(row)
    if check == "vmap_none" and len(args) < 2:
        return table.ONE_ARG
    if check == "vmap1" and not any(np.ndim(a) for a in args):
        return "every argument is a scalar: there is no axis 1 to map"
    if check == "hessian" and row.hessian is None:
        return "the row does not ask for tr.hessian (jvp_of_grad checks second order)"
    if check == "jax" and _jax() is None:
        return "jax is not installed"
    return None


def applies(row, check) -> bool:
    return check not in row.skip and automatic_skip(row, check) is None


def cells(check):
    return [pytest.param(row, id=row.name) for row in ROWS if check not in row.skip and
            (check == "jax" or automatic_skip(row, check) is None)]


def run_or_refuse(row, check, run):
    """``run()``; where a row declares a documented refusal for ``check``, the TransformError must
    say what the row declares (None is returned), and a check that runs instead fails: a refusal
    that is no longer made must leave the row, so that the cell's result is checked."""
    if check not in row.refuses:
        return run()
    try:
        run()
    except tr.TransformError as error:
        assert row.refuses[check] in str(error), str(error)
        return None
    raise AssertionError(f"{row.name}: {check} is declared refused ({row.refuses[check]!r}) but runs: "
                         "take the refusal out of the row, so that its result is checked")


# ------------------------------------------------------------------ the checks
@pytest.mark.parametrize("row", cells("python"))
def test_python(row):
    args = fresh_args(row)
    got = tr.jit(row.fn, target="python")(*args)
    assert_same(got, numpy_out(row), f"{row.name} on python", **value_tolerance(row))
    assert_arguments_unchanged(row, args, f"{row.name} on python")


@pytest.mark.parametrize("row", cells("cpu"))
def test_cpu(row):
    got, args = grouped_result(row, "cpu", "values")
    assert_same(regroup(list(got), numpy_out(row)), numpy_out(row), f"{row.name} on cpu", python_scalars=True,
                **value_tolerance(row))
    assert_arguments_unchanged(row, args, f"{row.name} on cpu")


def our_vjp(row):
    args = fresh_args(row)
    out, vjp_fn = tr.vjp(row.fn, *args)
    cotangents = vjp_fn(regroup(list(cotangent(row)), numpy_out(row)))
    return args, out, cotangents


def our_jvp(row):
    args = fresh_args(row)
    out, out_dot = tr.jvp(row.fn, args, tangents(row))
    return args, out, out_dot


def output_dtypes(row):
    return [dtype_of(o) for o in leaves(numpy_out(row))]


@pytest.mark.parametrize("row", cells("vjp"))
def test_vjp(row):
    result = run_or_refuse(row, "vjp", lambda: our_vjp(row))
    if result is None:
        return
    args, out, cotangents = result
    assert_arguments_unchanged(row, args, f"{row.name} under vjp")
    assert_same(out, numpy_out(row), f"{row.name}: vjp's value", **value_tolerance(row))
    for i in wrt(row):
        assert_same(cotangents[i], fd_vjp(row)[i], f"{row.name}: cotangent of argument {i}",
                    dtype=dtype_of(fresh_args(row)[i]), **tolerance(row))


@pytest.mark.parametrize("row", cells("jvp"))
def test_jvp(row):
    result = run_or_refuse(row, "jvp", lambda: our_jvp(row))
    if result is None:
        return
    args, out, out_dot = result
    assert_arguments_unchanged(row, args, f"{row.name} under jvp")
    assert_same(out, numpy_out(row), f"{row.name}: jvp's value", **value_tolerance(row))
    assert_same(out_dot, regroup(fd_jvp(row), numpy_out(row)), f"{row.name}: tangent",
                dtype=output_dtypes(row) if isinstance(numpy_out(row), (tuple, list)) else output_dtypes(row)[0],
                **tolerance(row))


@pytest.mark.parametrize("row", cells("transpose"))
def test_transpose(row):
    """<u, J v> (jvp) = <J^T u, v> (vjp): the two modes agree with each other, exactly up to rounding."""
    forward_mode = run_or_refuse(row, "transpose", lambda: our_jvp(row))
    if forward_mode is None:
        return
    _, _, out_dot = forward_mode
    _, _, cotangents = our_vjp(row)
    forward = sum(float(np.sum(np.asarray(t, dtype=np.float64) * u)) for t, u in zip(leaves(out_dot), cotangent(row)))
    reverse = sum(float(np.sum(np.asarray(cotangents[i], dtype=np.float64) * tangents(row)[i])) for i in wrt(row))
    scale = 1e-4 if single_precision(row) else 1e-10
    assert abs(forward - reverse) <= scale * (1.0 + abs(forward)), (forward, reverse)


def gradient_of_projection(row):
    """grad <u, f>: one array for one differentiated argument (a 1-tuple output is a row of its own)."""
    return tr.grad(projection(row), argnums=wrt(row) if len(wrt(row)) > 1 else wrt(row)[0])


def per_argument(row, grads) -> tuple:
    return grads if len(wrt(row)) > 1 else (grads,)


@pytest.mark.parametrize("row", cells("jvp_of_grad"))
def test_jvp_of_grad(row):
    """Forward over reverse: d/dt grad <u, f>(x + t v) against the four-point difference."""
    def run():
        args = fresh_args(row)
        primals = (*args, *cotangent(row))
        zeros = tuple(np.zeros_like(u) if np.ndim(u) else 0.0 for u in cotangent(row))
        return args, tr.jvp(gradient_of_projection(row), primals, (*tangents(row), *zeros))
    result = run_or_refuse(row, "jvp_of_grad", run)
    if result is None:
        return
    args, (grads, hvp) = result
    grads, hvp = per_argument(row, grads), per_argument(row, hvp)
    assert_arguments_unchanged(row, args, f"{row.name} under jvp of grad")
    for k, i in enumerate(wrt(row)):
        dtype = dtype_of(fresh_args(row)[i])
        assert_same(grads[k], fd_vjp(row)[i], f"{row.name}: gradient of argument {i}", dtype=dtype, **tolerance(row))
        assert_same(hvp[k], fd_hvp(row)[i], f"{row.name}: its tangent", dtype=dtype, **tolerance(row, True))


@pytest.mark.parametrize("row", cells("vjp_of_grad"))
def test_vjp_of_grad(row):
    """Reverse over reverse: the cotangent v through grad <u, f> is H v (H is symmetric)."""
    def run():
        args = fresh_args(row)
        _, back = tr.vjp(gradient_of_projection(row), *args, *cotangent(row))
        v = tuple(tangents(row)[i] for i in wrt(row))
        return args, back(v if len(v) > 1 else v[0])
    result = run_or_refuse(row, "vjp_of_grad", run)
    if result is None:
        return
    args, cotangents = result
    assert_arguments_unchanged(row, args, f"{row.name} under vjp of grad")
    for i in wrt(row):
        assert_same(cotangents[i], fd_hvp(row)[i], f"{row.name}: H v for argument {i}",
                    dtype=dtype_of(fresh_args(row)[i]), **tolerance(row, True))


@pytest.mark.parametrize("row", cells("hessian"))
def test_hessian(row):
    i = row.hessian
    args = (*fresh_args(row), *cotangent(row))
    got = tr.hessian(projection(row), argnums=i)(*args)
    want = oracles.central_difference_hessian(projection_oracle(row), float64_args(row), argnum=i)
    assert_same(got, want, f"{row.name}: hessian", dtype=dtype_of(args[i]), **tolerance(row, True))


def stacked(values, axis):
    if isinstance(values[0], (tuple, list)):
        return type(values[0])(stacked([v[k] for v in values], axis) for k in range(len(values[0])))
    return np.stack([np.asarray(v) for v in values], axis=axis)


def vmap_case(row, check):
    """(in_axes, batched arguments, the loop's results) for one of the vmap checks."""
    examples = [fresh_args(row, seed) for seed in range(BATCH)]
    n = len(examples[0])
    if check == "vmap0":
        axes = (0,) * n
    elif check == "vmap1":
        axes = tuple(1 if np.ndim(a) else 0 for a in examples[0])
    else:
        axes = (None,) + (0,) * (n - 1)
    batched = [examples[0][i] if axes[i] is None else stacked([e[i] for e in examples], axes[i]) for i in range(n)]
    loop = []
    for b in range(BATCH):
        # an example is what vmap's definition gives f: a slice of the batched array (a Python int
        # or float passed per example becomes an element of an array, with NumPy's promotion: a
        # float32 array ** np.int64(3) is float64 where ** 3 is float32)
        args = [examples[0][i] if axes[i] is None else np.take(batched[i], b, axis=axes[i]) for i in range(n)]
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        loop.append(row.fn(*args))
    return axes, batched, stacked(loop, 0)


@pytest.mark.parametrize("row, check", [pytest.param(row, check, id=f"{check}-{row.name}")
                                        for check in table.VMAPS for row in ROWS if applies(row, check)])
def test_vmap(row, check):
    axes, batched, want = vmap_case(row, check)
    got = run_or_refuse(row, check, lambda: tr.vmap(row.fn, in_axes=axes)(*batched))
    if got is None:
        return
    assert_same(got, want, f"{row.name} under vmap(in_axes={axes})", **value_tolerance(row))


@pytest.mark.parametrize("row", cells("jit_grad"))
def test_jit_grad(row):
    if "jit_grad" in row.refuses:      # a refusal is made before numba is called: no group needed
        result = run_or_refuse(row, "jit_grad", lambda: tr.jit(gradient_of_projection(row))(
            *fresh_args(row), *cotangent(row)))
        if result is None:
            return
    grads, _ = grouped_result(row, "jit_grad", "grad")
    for k, i in enumerate(wrt(row)):
        assert_same(grads[k], vjp_oracle(row)[i], f"{row.name}: jit(grad) for argument {i}",
                    dtype=dtype_of(fresh_args(row)[i]), python_scalars=True, **tolerance(row))


@pytest.mark.parametrize("row", cells("jit_jvp"))
def test_jit_jvp(row):
    if "jit_jvp" in row.refuses:       # a refusal is made before numba is called: no group needed
        result = run_or_refuse(row, "jit_jvp", lambda: tr.jvp(tr.jit(row.fn), fresh_args(row), tangents(row)))
        if result is None:
            return
    out_dot, _ = grouped_result(row, "jit_jvp", "jvp")
    want = fd_jvp(row) if "jvp" not in row.skip else [np.asarray(t) for t in leaves(our_jvp(row)[2])]
    assert_same(list(out_dot), want, f"{row.name}: jit(jvp)", dtype=output_dtypes(row),
                python_scalars=True, **tolerance(row))


def vjp_oracle(row) -> dict:
    """What jit(grad) is checked against: central differences; where the row says they are no oracle
    (at a tie of sort, differences average the one-sided derivatives), the python tier's gradient,
    which the jax cell checks against jax's convention."""
    if "vjp" not in row.skip:
        return fd_vjp(row)
    return dict(zip(wrt(row), per_argument(row, gradient_of_projection(row)(*fresh_args(row), *cotangent(row)))))


# ------------------------------------------------------------------ jax as a second oracle
@functools.lru_cache(maxsize=None)
def _jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


class _Namespace:
    """Attribute lookups answered by a function of the name (np -> jax.numpy and friends)."""

    def __init__(self, lookup):
        self._lookup = lookup

    def __getattr__(self, name):
        return self._lookup(name)


def jaxified(fn):
    """``fn`` with np, math, scipy and tr meaning jax.numpy, jax.numpy (jax.scipy.special for erf, erfc and
    lgamma), jax.scipy and jax's own transforms."""
    jax = _jax()
    jnp = jax.numpy
    math_names = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "pow": "power",
                  "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}
    lax_names = {"psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute", "stop_gradient"}
    tr_like = _Namespace(lambda name: {
        "stop_gradient": jax.lax.stop_gradient,
        "vmap": lambda f, **kw: jax.vmap(jaxified(f), **kw),
        "lax": _Namespace(lambda n: getattr(jax.lax, n) if n in lax_names else None),
        "nn": jax.nn,
    }[name])
    special = jax.scipy.special
    math_special = {"erf": special.erf, "erfc": special.erfc, "lgamma": special.gammaln}
    names = dict(fn.__globals__, np=jnp, tr=tr_like, scipy=_Namespace(lambda n: {"special": special}[n]),
                 math=_Namespace(lambda n: math_special.get(n) or getattr(jnp, math_names.get(n, n))))
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)


def jax_tracing_limits():
    """JAX errors that mean JAX cannot trace or differentiate the row (a value-dependent shape, a Python
    bool, a collective without a derivative rule): then that part has no second oracle, not a failure."""
    errors = _jax().errors
    return (errors.ConcretizationTypeError, errors.NonConcreteBooleanIndexError, errors.TracerBoolConversionError,
            errors.TracerIntegerConversionError, NotImplementedError)


def as_numpy(value):
    if isinstance(value, (tuple, list)):
        return type(value)(as_numpy(v) for v in value)
    return np.asarray(value)


def of_differentiated(row, fn):
    """``fn`` as a function of the differentiated arguments only (jax wants no tangent for an integer)."""
    args = fresh_args(row)

    def partial(*differentiated):
        full = list(args)
        for i, value in zip(wrt(row), differentiated):
            full[i] = value
        return fn(*full)
    return partial, tuple(args[i] for i in wrt(row))


def jax_or_none(run):
    try:
        return run()
    except jax_tracing_limits():
        return None


@pytest.mark.parametrize("row", cells("jax"))
def test_jax(row):
    """jax.numpy's values, shapes, nesting and dtypes; where JAX can trace the row, its jvp, vjp and vmap."""
    jax = _jax()
    if jax is None:
        pytest.skip("jax is not installed (optional: pip install 'jax[cpu]')")
    fn = jaxified(row.fn)
    want = as_numpy(fn(*fresh_args(row)))
    ours = tr.jit(row.fn, target="python")(*fresh_args(row))
    assert_same(as_numpy(ours), want, f"{row.name}: ours against jax", **value_tolerance(row))
    partial, primals = of_differentiated(row, fn)
    if applies(row, "jvp") and run_or_refuse(row, "jvp", lambda: our_jvp(row)) is not None:
        jax_dot = jax_or_none(lambda: jax.jvp(partial, primals, tuple(tangents(row)[i] for i in wrt(row)))[1])
        if jax_dot is not None:
            assert_same(as_numpy(our_jvp(row)[2]), as_numpy(jax_dot), f"{row.name}: jvp against jax",
                        **tolerance(row))
    if applies(row, "vjp") and run_or_refuse(row, "vjp", lambda: our_vjp(row)) is not None:
        u = regroup(list(cotangent(row)), numpy_out(row))
        jax_bar = jax_or_none(lambda: jax.vjp(partial, *primals)[1](u))
        if jax_bar is not None:
            ours = our_vjp(row)[2]
            for k, i in enumerate(wrt(row)):
                assert_same(as_numpy(ours[i]), np.asarray(jax_bar[k]), f"{row.name}: cotangent {i} against jax",
                            **tolerance(row))
    if applies(row, "vmap0"):
        axes, batched, _ = vmap_case(row, "vmap0")
        got = run_or_refuse(row, "vmap0", lambda: tr.vmap(row.fn, in_axes=axes)(*batched))
        jax_batched = jax_or_none(lambda: as_numpy(jax.vmap(fn, in_axes=axes)(*batched)))
        if got is not None and jax_batched is not None:
            assert_same(as_numpy(got), jax_batched, f"{row.name}: vmap against jax", **value_tolerance(row))


# ------------------------------------------------------------------ completeness
def primitives_in(core_node) -> set:
    visitor = _Primitives()
    core_node.visit(visitor)
    return visitor.found


def derivative_chains(row):
    """The Transformed chains the checks build for ``row`` (python target): their core forms name the
    runtime helpers the derivatives and batching of the row generate."""
    args = fresh_args(row)
    chains = []
    if applies(row, "vjp"):
        chains.append((Transformed.of(row.fn).then(staging.Step("vjp", (("has_aux", False),))), args))
    if applies(row, "jvp") and "jvp" not in row.refuses:
        active = tuple(i for i, a in enumerate(args) if is_float(a))
        chains.append((_forward(row.fn, active, tuple(np.ndim(a) for a in args)), (*args, *tangents(row))))
    for check in ("vmap0", "vmap1", "vmap_none"):
        if applies(row, check):
            axes, batched, _ = vmap_case(row, check)
            chains.append((tr.vmap(row.fn, in_axes=axes), batched))
    primals = (*args, *cotangent(row))
    if applies(row, "vjp_of_grad") and "vjp_of_grad" not in row.refuses:
        chains.append((Transformed.of(gradient_of_projection(row)).then(staging.Step("vjp", (("has_aux", False),))),
                       primals))
    if applies(row, "jvp_of_grad") and "jvp_of_grad" not in row.refuses:
        active = tuple(i for i, a in enumerate(primals) if is_float(a))
        chains.append((_forward(gradient_of_projection(row), active, tuple(np.ndim(a) for a in primals)),
                       (*primals, *primals)))
    if row.hessian is not None:
        hessian = tr.hessian(projection(row), argnums=row.hessian)
        hessian(*primals)
        chains += [(chain, primals) for chain in getattr(hessian.base, "_chains", {}).values()]
        chains += [(chain, primals) for chain in getattr(hessian, "_chains", {}).values()]
    return chains


@functools.lru_cache(maxsize=None)
def exercised() -> frozenset:
    """Every primitive the rows apply (their core forms) or make their transforms generate."""
    found = set()
    for row in ROWS:
        for fn in (row.fn, *row.helpers):
            found |= primitives_in(normalize(fn).node)
        for chain, args in derivative_chains(row):
            try:
                source = chain.source(*args)
            except tr.TransformError:
                continue                  # the row's own check reports it
            found |= primitives_in(cst.parse_module(source))
    return frozenset(found)


@pytest.mark.parametrize("name", sorted(primitives.REGISTRY))
def test_every_primitive_has_a_row(name):
    assert name in exercised(), (f"primitive {name!r} is registered but no row of tests/rule_table.py applies "
                                 f"it, nor do the derivatives and batching of any row generate it")


@pytest.mark.parametrize("dotted", sorted(primitives.definitions()))
def test_every_definition_has_a_row(dotted):
    """A NumPy function transformer defines (templates/definitions.py) is called by some row, under the
    name it is defined for (``np.roll``, ``scipy.special.logsumexp``)."""
    name = dotted.rpartition(".")[2]
    if primitives.definition_of(getattr(importlib.import_module(primitives._module_of(dotted)), name, None)) is None:
        pytest.skip(f"{dotted} is not in this NumPy or scipy")
    assert any(dotted + "(" in inspect.getsource(row.fn) for row in ROWS), \
        f"{dotted} is defined in templates/definitions.py but no row of tests/rule_table.py calls it"


def test_every_check_is_named():
    for row in ROWS:
        for check in (*row.skip, *row.refuses):
            assert check in CHECKS, (row.name, check)
        for check, why in row.skip.items():
            assert len(why) > 15, (row.name, check, "say why the check does not apply")

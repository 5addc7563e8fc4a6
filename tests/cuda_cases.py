"""CUDA target checks, run on numba's CUDA simulator in a process of their own.

``python tests/cuda_cases.py`` sets NUMBA_ENABLE_CUDASIM=1 before numba.cuda
is imported, runs every ``case_*`` below, and prints one JSON line per case
(``"ok"`` or the traceback).  tests/test_cuda.py runs it once in a subprocess
so the simulator setting never reaches other tests.  Each case checks the
CUDA result against NumPy (or central differences, or a Python loop).

The user-style functions transformed here live in this file too: transforms
read source, so they must be in a real file.
"""
import math

import numpy as np

import transformer as tr


# ------------------------------------------------------ user functions
def chain(x, b):
    y = np.tanh(x * 2.0 + b)
    z = y * y - 0.5 * x
    return np.sum(z, axis=1), z


def scaled(x, d):
    scale = 1.0 / np.sqrt(d)
    return np.where(x > 0, x * scale, np.exp(x) - 1.0)


def reductions(x):
    return (np.sum(x), np.mean(x, axis=0), np.max(x, axis=1, keepdims=True), np.min(x, axis=-1),
            np.sum(x > 0.5, axis=0))


def long_sum(x):
    return np.sum(x * x), np.max(x)


def logistic(w, x):
    z = x @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return np.mean(p), np.dot(np.transpose(x), p)


def matmul(a, b):
    return a @ b


def host_control(x, steps):
    total = 0.0
    for i in range(steps):
        x = x * 0.5 + 1.0
        if np.sum(x) > 10.0:
            total = total + np.max(x)
    return x, total


def uses_cumsum(x):
    y = x * 2.0
    return np.cumsum(y)


def damped(x, v, k):
    dt = 0.01
    for step in range(50):
        a = -k * x - 0.1 * v
        v = v + dt * a
        x = x + dt * v
    return x, v


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def leaky(x, slope):
    if x > 0:
        y = math.sin(x) * x
    else:
        y = slope * x
    return y


def straight(x, y):
    return np.exp(x * y) / (1.0 + x * x) + np.sqrt(y * y + 1.0)


def loop_loss(x, k):
    s = 0.0
    for i in range(3):
        s = s + math.sin(x * s + 1.0) * k
    return s


def halve_until_small(x):
    y = x
    while y > 0.1:
        y = y * 0.5 + 0.01 * y * y
    return y * y


def long_loop(x):
    # np.sin's rule reads s, so every pass tapes it (s * 0.99 alone would need no tape)
    s = x
    for i in range(300):
        s = np.sin(s) * 0.99 + 0.01
    return s


def sum_of_squares(x):
    return np.sum(x * x)


# ------------------------------------------------------------ helpers
RNG = np.random.default_rng(0)


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=tol, atol=tol)


def central_difference(f, x, *rest, h=1e-6):
    return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)


def cuda_jit(f):
    return tr.jit(f, target="cuda")


# -------------------------------------------------------------- cases
def case_elementwise_chain_is_one_fused_kernel():
    f = cuda_jit(chain)
    x, b = RNG.standard_normal((6, 7)), RNG.standard_normal(7)
    s, z = f(x, b)
    y = np.tanh(x * 2.0 + b)
    close(z, y * y - 0.5 * x)
    close(s, (y * y - 0.5 * x).sum(axis=1))
    assert isinstance(s, np.ndarray) and isinstance(z, np.ndarray)
    text = tr.show(f)
    assert text.count("@cuda.jit") == 1, text            # lines 21-22: six operations, one kernel
    assert "def chain_fused0_kernel(" in text and "# y = np.tanh(x * 2.0 + b)   [cuda_cases.py:21]" in text
    assert "cu.reduce('sum', z, axis=1" in text


def case_scalar_runs_on_host_and_broadcasts():
    f = cuda_jit(scaled)
    x = RNG.standard_normal((5, 3))
    close(f(x, 4.0), np.where(x > 0, x * 0.5, np.exp(x) - 1.0))
    x32 = x.astype(np.float32)
    out = f(x32, 4.0)
    assert out.dtype == scaled(x32, 4.0).dtype, out.dtype     # NumPy's own promotion rules
    close(f(np.float64(0.3), 4.0), 0.15)                # no array at all: plain host code


def case_reductions_with_axes():
    f = cuda_jit(reductions)
    x = RNG.random((9, 13))
    got = f(x)
    want = (x.sum(), x.mean(axis=0), x.max(axis=1, keepdims=True), x.min(axis=-1), (x > 0.5).sum(axis=0))
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        close(g, w)
    assert got[4].dtype == want[4].dtype


def case_long_reduction_uses_block_chunks():
    x = RNG.standard_normal(1500)
    total, peak = cuda_jit(long_sum)(x)
    close(total, np.sum(x * x), 1e-9)
    close(peak, x.max())


def case_matmul_tiled():
    f = cuda_jit(matmul)
    a, b = RNG.standard_normal((21, 35)), RNG.standard_normal((35, 18))
    close(f(a, b), a @ b)
    close(f(a.astype(np.float32), b.astype(np.float32)), a @ b, 1e-4)
    v = RNG.standard_normal(35)
    close(f(a, v), a @ v)
    close(f(v, b), v @ b)
    close(f(v, v), v @ v)


def case_logistic_mixes_kernels():
    w, x = RNG.standard_normal(4), RNG.standard_normal((30, 4))
    mean, grad_like = cuda_jit(logistic)(w, x)
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    close(mean, p.mean())
    close(grad_like, x.T @ p)


def case_device_arrays_stay_on_device():
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    f = cuda_jit(logistic)
    w, x = RNG.standard_normal(4), RNG.standard_normal((30, 4))
    f(w, x)                                          # build first
    copies = []
    original = FakeCUDAArray.copy_to_host

    def counting(self, *args, **kwargs):
        copies.append(self.shape)
        return original(self, *args, **kwargs)

    FakeCUDAArray.copy_to_host = counting
    try:
        mean, out = f(cuda.to_device(w), cuda.to_device(x))
    finally:
        FakeCUDAArray.copy_to_host = original
    assert hasattr(out, "copy_to_host"), type(out)   # stays on the device
    assert copies == [()], copies                    # only the scalar mean is read back, at the very end
    close(out.copy_to_host(), x.T @ (1.0 / (1.0 + np.exp(-(x @ w)))))


def case_host_control_flow_around_kernels():
    x = RNG.random(8)
    got_x, got_total = cuda_jit(host_control)(x, 5)
    want_x, want_total = host_control(x.copy(), 5)
    close(got_x, want_x)
    close(got_total, want_total)


def case_unsupported_names_the_user_line():
    try:
        cuda_jit(uses_cumsum)(np.ones(4))
    except tr.TransformError as err:
        assert "cuda_cases.py:61" in str(err) and "np.cumsum" in str(err), str(err)
    else:
        raise AssertionError("np.cumsum on the cuda target should be refused")


def case_vmap_ode_one_thread_per_example():
    f = cuda_jit(tr.vmap(damped, in_axes=(0, 0, None)))
    x, v = RNG.standard_normal(40), RNG.standard_normal(40)
    xs, vs = f(x, v, 2.0)
    want = [damped(a, b, 2.0) for a, b in zip(x, v)]
    close(xs, [w[0] for w in want])
    close(vs, [w[1] for w in want])
    text = tr.show(f)
    assert "def vmap_damped_kernel(" in text and "x = x_batch[example]" in text
    assert "np.moveaxis" not in text                    # not the array-level vmap


def case_vmap_data_dependent_while_and_branches():
    n = np.arange(1, 60)
    steps = cuda_jit(tr.vmap(collatz))(n)
    assert steps.dtype == np.int64 and np.array_equal(steps, [collatz(int(k)) for k in n])
    x = RNG.standard_normal(33)
    close(cuda_jit(tr.vmap(leaky, in_axes=(0, None)))(x, 0.1), [leaky(a, 0.1) for a in x])


def case_vmap_grad_straight_line_and_fixed_loop():
    x, y = RNG.random(25) + 0.5, RNG.random(25)
    g = cuda_jit(tr.vmap(tr.grad(straight)))(x, y)
    close(g, [central_difference(straight, a, b) for a, b in zip(x, y)], 1e-6)
    g = cuda_jit(tr.vmap(tr.grad(loop_loss), in_axes=(0, None)))(x, 0.7)
    close(g, [central_difference(loop_loss, a, 0.7) for a in x], 1e-6)
    assert "cuda.local.array(TAPE_CAPACITY" in tr.show(cuda_jit(tr.vmap(tr.grad(loop_loss), in_axes=(0, None))))


def case_vmap_grad_data_dependent_while():
    x = RNG.random(20) * 20 + 1.0
    g = cuda_jit(tr.vmap(tr.grad(halve_until_small)))(x)
    close(g, [central_difference(halve_until_small, a) for a in x], 1e-5)


def case_vmap_grad_tape_overflow_raises():
    try:
        cuda_jit(tr.vmap(tr.grad(long_loop)))(np.ones(3))
    except RuntimeError as err:
        assert "TAPE_CAPACITY" in str(err)
    else:
        raise AssertionError("a loop longer than the tape should raise")


def case_vmap_device_inputs_stay_on_device():
    from numba import cuda
    out = cuda_jit(tr.vmap(collatz))(cuda.to_device(np.arange(1, 9)))
    assert hasattr(out, "copy_to_host")
    assert np.array_equal(out.copy_to_host(), [collatz(k) for k in range(1, 9)])


def case_vmap_of_array_code_takes_the_array_path():
    x = RNG.standard_normal((6, 4))
    close(cuda_jit(tr.vmap(sum_of_squares))(x), (x * x).sum(axis=1))


def case_cli_shows_kernels():
    import contextlib
    import io

    from transformer import cli
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert cli.main(["show", "--target", "cuda", "--no-color", f"{__file__}:chain"]) == 0
    text = buffer.getvalue()
    assert "@cuda.jit" in text and "def chain_fused0_kernel(" in text, text


def _elementwise_functions():
    """One user function per elementwise primitive of the registry, in a real file (transforms read
    source), each a fused kernel on the cuda target: the simulator checks the values against NumPy,
    and tests/test_cuda.py compiles every one of them to PTX."""
    import importlib.util
    import tempfile
    from pathlib import Path

    from transformer import primitives as p
    lines = ["import numpy as np", "from transformer import lax", ""]      # lax: the special functions' spelling
    names = []
    for prim in p.REGISTRY.values():
        if prim.kind not in (p.UNARY, p.BINARY, p.COMPARE) or prim.name == "not" or not prim.on_device:
            continue        # (one that device code cannot call is refused: test_cuda's refusal case)
        arity = len(prim.params)
        operands = ["x", "y"][:arity]
        if prim.is_operator:
            call = f"{prim.spelling}x" if arity == 1 else f"x {prim.spelling} y"
        else:
            call = f"{prim.spelling}({', '.join(operands)})"
        lines += [f"def {prim.name}_of(x, y):", f"    return {call} * 1", ""]
        names.append(prim.name)
    path = Path(tempfile.mkdtemp(prefix="transformer-cuda-")) / "elementwise_user.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("elementwise_user", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: getattr(module, f"{name}_of") for name in names}


def case_every_elementwise_primitive_matches_numpy():
    special = np.array([-np.inf, -2.5, -1.5, -0.0, 0.0, 0.5, 1.5, 2.5, np.inf, np.nan])
    inside = np.linspace(0.15, 0.85, 10)          # every function is defined here (arccosh: 1 + x)
    failures = []
    for name, fn in _elementwise_functions().items():
        for x, y in [(inside, inside[::-1]), (special, special[::-1])]:
            if name == "arccosh":
                x = x + 1.0
            if name in ("invert", "logical_not", "logical_and", "logical_or", "logical_xor",
                        "bitwise_and", "bitwise_or", "bitwise_xor"):
                x, y = x > 0.5, y > 0.5
            with np.errstate(all="ignore"):
                want = fn(x, y)
                got = cuda_jit(fn)(x, y)
            if got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True):
                failures.append(f"{name}{(x[:3], y[:3])}: {got} != {want} ({got.dtype}, {want.dtype})")
    assert not failures, "\n".join(failures)


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def main(names):
    import json
    import os
    import sys
    import traceback
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"          # before numba.cuda is first imported
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import simulator
    with simulator.launches_recorded():               # for tests/test_cuda.py's PTX check
        for name in names or CASES:
            try:
                CASES[name]()
                outcome = "ok"
            except BaseException:                     # report every failure, keep running the others
                outcome = traceback.format_exc()
            print(json.dumps({"case": name, "outcome": outcome}), flush=True)


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])

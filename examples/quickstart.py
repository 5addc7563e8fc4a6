"""Quick start: compile a plain NumPy function with transformer.jit.

    python examples/quickstart.py

The function below is ordinary NumPy (the attention of a transformer model).
``tr.jit`` rewrites its source into simple statements, writes them to a .py
file in the cache directory, and numba compiles them for this CPU in a
background process while the first calls run them as plain NumPy (the python
tier).  We check both tiers against NumPy and print the generated code.
"""
import time

import numpy as np

import transformer as tr


def scaled_dot_product(q, k, v):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    weights = tr.nn.softmax(scores)
    return np.dot(weights, v)


def seconds_per_call(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def function_part(module_text):
    """The generated function, without the module's header and imports."""
    return module_text[module_text.index("\ndef ") + 1:]


def main():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((256, 64)) for _ in range(3))

    attention = tr.jit(scaled_dot_product)          # nothing is generated yet
    start = time.perf_counter()
    out = attention(q, k, v)                        # first call: generate; numba compiles aside
    first_call = time.perf_counter() - start
    first_tier = tr.tier_of(attention)              # "python" while numba compiles
    start = time.perf_counter()
    attention.wait_until_compiled()                 # a program would simply go on calling
    compile_wait = time.perf_counter() - start
    compiled_out = attention(q, k, v)               # loads numba and the compiled code once
    next_call = min(seconds_per_call(attention, q, k, v) for _ in range(5))  # compiled code

    expected = scaled_dot_product(q, k, v)          # the same function, run by NumPy
    error = max(np.max(np.abs(out - expected)), np.max(np.abs(compiled_out - expected)))
    print(f"jit(scaled_dot_product) on q, k, v of shape {q.shape}: output shape {out.shape}")
    print(f"largest difference from NumPy: {error:.1e}")
    print(f"first call {first_call:.2f} s on the {first_tier} tier; the compile finished "
          f"{compile_wait:.1f} s later; compiled calls {next_call * 1e3:.2f} ms (best of 5, "
          f"on the {tr.tier_of(attention)} tier)")
    for result in (out, compiled_out):
        if not np.allclose(result, expected, rtol=1e-10, atol=1e-12):
            raise SystemExit("the jitted function does not match NumPy")

    print("\nThe code tr.jit generated (tr.show(attention)); each block names the line it came from:\n")
    print(function_part(tr.show(attention)))


if __name__ == "__main__":
    main()

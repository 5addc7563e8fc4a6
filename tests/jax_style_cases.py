"""User code for the JAX-name tests of tests/test_jax_programs.py (transforms read source)."""
import numpy as np

import transformer as jax
from transformer import lax


def takes_a_dynamic_slice(x):
    return np.sum(lax.dynamic_slice(x, (1,), (2,)))


def uses_attention(x):
    return np.sum(jax.nn.dot_product_attention(x, x, x))


# A config dict read in the function: JAX reads a global when it traces, transformer when it
# transforms; literal keys, nested dicts, and a loop over its items are decided then.
CONFIG = {"lr": 0.1, "scale": np.array([1.0, 2.0]), "layers": {"depth": 2, "gain": 1.5}, "learning-rate": 0.5}


def configured_loss(w, x):
    h = x
    for _ in range(CONFIG["layers"]["depth"]):
        h = np.tanh(h * w * CONFIG["scale"])
    return np.sum(h ** 2) * CONFIG["layers"]["gain"] + CONFIG["learning-rate"]


def configured_step(w, x):
    return w - CONFIG["lr"] * jax.grad(configured_loss)(w, x)


def sum_over_the_config(x):
    total = 0.0
    for key, entry in CONFIG.items():
        if key != "layers":
            total = total + np.sum(entry * x)
    for key, entry in CONFIG["layers"].items():
        total = total + entry * x[0]
    return total


def sum_over_a_nested_argument(params, x):
    total = 0.0
    for key, entry in params["layers"].items():
        total = total + np.sum(entry * x)
    return total


# Tracer-style mistakes: a Python number or truth value asked of an array (JAX's
# ConcretizationTypeError under jit; NumPy's own error here, told at the line below).
def number_of_an_array(x):
    scale = float(x)
    return np.sum(x) * scale


def branch_on_an_array(x):
    if x > 0:
        return np.sum(x)
    return -np.sum(x)


def number_of_one_element(x):
    return float(x[1]) * np.sum(x) + int(np.sum(x > 1.5))


# lax's elementwise names, as a JAX program calls them
def uses_lax_elementwise(x, y):
    a = lax.rsqrt(lax.square(x) + 1.0) * lax.clamp(-0.5, y, 0.5) + lax.cbrt(lax.exp2(y))
    b = lax.logistic(lax.sub(x, y)) + lax.integer_pow(lax.tanh(x), 3) + lax.atan2(x, y + 2.0)
    c = lax.max(lax.exp(-x), lax.cos(y)) + lax.min(lax.sinh(x), lax.acosh(lax.abs(y) + 1.5))
    d = lax.rem(x * 7.0, 2.0) + lax.round(x * 3.0) + lax.round(y * 3.0, 1) + lax.pow(lax.abs(x) + 1.0, y)
    e = lax.mul(lax.log1p(lax.abs(y)), lax.expm1(x)) + lax.neg(lax.asinh(x)) + lax.atanh(y * 0.5)
    f = lax.select(lax.gt(x, y), lax.sin(x), lax.tan(y * 0.5)) + lax.sign(x) * lax.floor(y) + lax.ceil(x)
    g = lax.add(lax.asin(y * 0.5), lax.acos(x * 0.2)) + lax.atan(x) + lax.cosh(y) + lax.sqrt(lax.abs(x))
    zero = 0.0 * x                    # (jax.lax.select takes operands of one shape)
    h = lax.select(lax.lt(x, y), x, y) + lax.select(lax.le(x, 0.0), 2.0 * y, y) + lax.select(lax.ge(y, 0.5), y, zero)
    k = lax.select(np.logical_and(lax.is_finite(x), lax.ne(x, y)), x, zero) + lax.select(lax.eq(x, 0.31), y, zero)
    return np.sum(a * b + c + d + e + f + g + h + k + lax.sort(x) * y + lax.log(lax.abs(x) + 1.0))


# tree_util over a list of (w, b) tuples inside transformed code
def sum_of_squares_by_tree_leaves(params):
    total = 0.0
    for p in jax.tree_util.tree_leaves(params):
        total = total + np.sum(p ** 2)
    return total


def sum_of_squares_by_tree_reduce(params):
    return jax.tree_util.tree_reduce(lambda a, b: a + np.sum(b ** 2), params, 0.0)


def largest_leaf_sum(params):
    sums = jax.tree_util.tree_map(lambda p: np.sum(p), jax.tree_util.tree_leaves(params))
    return jax.tree_util.tree_reduce(lambda a, b: np.maximum(a, b), sums)


def sum_by_jax_tree_reduce(params):
    return jax.tree.reduce(lambda a, b: a + np.sum(b), params, 0.0)

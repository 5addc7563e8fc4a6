"""User-style functions for forward mode (tests/test_jvp.py).

Each entry of CASES is (function, arguments): plain NumPy code of the kinds
people write — math, broadcasting, reductions, linear algebra, indexing,
in-place writes, branches and loops on values, helpers, tr.nn.  Integer
arguments are loop bounds or counts (their tangents are ignored).
"""
import math

import numpy as np

import transformer as tr

_rng = np.random.default_rng(0)


def vec(n=5, lo=-1.0, hi=1.0):
    return _rng.uniform(lo, hi, n)


def mat(r=3, c=4, lo=-1.0, hi=1.0):
    return _rng.uniform(lo, hi, (r, c))


# ------------------------------------------------------------------ elementwise
def sin_exp(x):
    return np.sin(x) * np.exp(x)


def log_chain(x):
    return np.log(1.0 + x ** 2) + np.tanh(x) / 2


def sqrt_power(x):
    return np.sqrt(x * x + 1.0) + x ** 3 - 2.0 * x


def quotient(x, y):
    return x / (1.5 + y) - y / x


def scalar_math(a, b):
    return math.sin(a) * math.exp(b) + math.sqrt(a * a + b * b) + a ** b


def trig_family(x):
    return np.arctan(x) + np.arcsin(x / 2) + np.cosh(x) - np.sinh(x) + np.expm1(x) + np.log1p(x + 1.5)


def two_argument_math(x, y):
    return np.arctan2(x, y) + np.hypot(x, y) + np.logaddexp(x, y)


def absolute(x):
    return np.sum(np.abs(x) * x)


# ------------------------------------------------------------------ broadcasting
def affine(x, w, b):
    return x * w + b          # (3, 4) * (4,) + scalar


def centered(x):
    return x - np.mean(x, axis=1, keepdims=True)


def outer_broadcast(u, v):
    return np.exp(u[:, None] - v[None, :])


# -------------------------------------------------------------------- reductions
def column_sums(x):
    return np.sum(x * x, axis=0)


def row_means(x):
    return np.mean(np.sin(x), axis=1)


def largest(x):
    return np.max(x * 2.0) + np.min(x)


def largest_per_row(x):
    return np.max(x, axis=1) - np.sum(np.min(x, axis=0))


def spread(x):
    return np.var(x) + np.sum(np.std(x, axis=0, ddof=1))


def length(x):
    return np.linalg.norm(x) * np.linalg.norm(x, axis=1)


def running_total(x):
    return np.cumsum(x * x)


# ------------------------------------------------------------------------ linalg
def matvec(a, x):
    return np.tanh(a @ x)


def matmat(a, b):
    return np.sum(np.dot(a, np.transpose(b)), axis=1)


def outer_product(u, v):
    return np.outer(u, v) * 2.0


def linear_solve(a, b):
    return np.linalg.solve(a + 4.0 * np.eye(3), b)


def inverse_trace(a):
    return np.trace(np.linalg.inv(a + 4.0 * np.eye(3)))


# ---------------------------------------------------------------------- indexing
def slices(x):
    return x[1:4] * x[0] + x[-1]


def rows_and_columns(x):
    column = x[:, 1]
    return x[0, :] * column.sum() + x[2, 3]


def reshaped(x):
    return np.transpose(np.reshape(x, (4, 3))) @ np.ones(4)


def joined(x, y):
    return np.concatenate((x, y * 2.0)) + np.sum(np.stack((x, y), axis=0))


# ------------------------------------------------------------- in-place writes
def squares_into(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] ** 2
    return out


def shifted_copy(x):
    y = np.zeros_like(x)
    y[0:3] = x[1:4]
    y[3] = 7.0
    y[4] += x[0] * x[4]
    return y


def rows_scaled(x, w):
    out = np.empty((3, 4))
    for i in range(3):
        out[i] = x[i] * w[i]
    return out


# ------------------------------------------------------------------ control flow
def branch_on_value(x):
    if np.sum(x) > 0:
        y = np.sin(x)
    else:
        y = x * x
    return y * 2.0


def branch_scalar(a, b):
    if a > b:
        c = a * b
    elif a < 0:
        c = a + 0.0
    else:
        c = 3.0
    return c + b


def loop_runtime_bound(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i + 1]
    return s


def loop_over_rows(x, w):
    total = 0.0
    for row in x:
        total += np.dot(row, w) ** 2
    return total


def while_until_large(x):
    s = 0.1
    steps = 0
    while s < 10.0:
        s = s * 1.5 + np.sum(x * x)
        steps += 1
    return s * steps


def loop_with_break(x):
    acc = 1.0
    for i in range(x.shape[0]):
        if x[i] > 0.9:
            break
        acc = acc * (1.0 + x[i])
    return acc


def loop_with_continue(x):
    acc = 0.0
    for v in x:
        if v < 0:
            continue
        acc += np.exp(v)
    return acc


def early_return(x):
    s = np.sum(x)
    if s > 100.0:
        return s
    for i in range(3):
        if x[i] > 0.5:
            return x[i] * s
    return s * s


def rosenbrock(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def horner(coefficients, x):
    result = np.zeros_like(x)
    for c in coefficients:
        result = result * x + c
    return result


def recurrent(w, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
    return h


def zipped(x, y):
    total = 0.0
    for a, b in zip(x, y):
        total += a * b
    for i, a in enumerate(x):
        total += a * (i + 1)
    return total


def argmax_pick(x):
    k = np.argmax(x)
    return x[k] * np.floor(x[0] * 3)


# ------------------------------------------------------------------------ helpers
def _square_sum(v):
    return np.sum(v * v)


def _scale(v, factor=2.0):
    return v * factor


def with_helpers(x, y):
    return _square_sum(_scale(x)) + np.sum(_scale(y, factor=0.5))


# ------------------------------------------------------------------------- tr.nn
def mlp(x, w1, w2):
    hidden = tr.nn.relu(w1 @ x)
    return tr.nn.sigmoid(w2 @ hidden)


def attention_row(q, k):
    return tr.nn.softmax(k @ q)


def classifier_loss(logits):
    return -tr.nn.log_softmax(logits)[2] + tr.nn.logsumexp(logits)


def activations(x):
    return tr.nn.gelu(x) + tr.nn.softplus(x) + tr.nn.tanh(x)


# ------------------------------------------------------------------------ misc
def selections(x, y):
    return np.where(x > 0, x * y, y) + np.maximum(x, y) - np.minimum(x, 0.5) + np.clip(x, -0.5, 0.5)


def partly_constant(x):
    return tr.stop_gradient(x) * x + np.floor(x)


def partly_constant_reference(x, frozen):
    """partly_constant with the stopped value passed in as a constant."""
    return frozen * x + np.floor(x)


def integer_scale(x, n):
    return x * n + n


def pair_output(x):
    return np.sum(x), x * 2.0


def constant_output(x):
    return np.ones(3) * float(x.shape[0])


CASES = [
    (sin_exp, (vec(),)),
    (log_chain, (vec(),)),
    (sqrt_power, (vec(),)),
    (quotient, (vec(lo=0.5, hi=1.5), vec())),
    (scalar_math, (0.7, 0.4)),
    (trig_family, (vec(),)),
    (two_argument_math, (vec(lo=0.2), vec(lo=0.2))),
    (absolute, (vec(),)),
    (affine, (mat(), vec(4), 0.3)),
    (centered, (mat(),)),
    (outer_broadcast, (vec(3), vec(4))),
    (column_sums, (mat(),)),
    (row_means, (mat(),)),
    (largest, (vec(),)),
    (largest_per_row, (mat(),)),
    (spread, (mat(),)),
    (length, (mat(),)),
    (running_total, (vec(),)),
    (matvec, (mat(), vec(4))),
    (matmat, (mat(), mat())),
    (outer_product, (vec(3), vec(4))),
    (linear_solve, (mat(3, 3), vec(3))),
    (inverse_trace, (mat(3, 3),)),
    (slices, (vec(),)),
    (rows_and_columns, (mat(),)),
    (reshaped, (mat(),)),
    (joined, (vec(3), vec(3))),
    (squares_into, (vec(),)),
    (shifted_copy, (vec(),)),
    (rows_scaled, (mat(), vec(3))),
    (branch_on_value, (vec(lo=0.1),)),
    (branch_on_value, (vec(hi=-0.1),)),
    (branch_scalar, (0.8, 0.3)),
    (branch_scalar, (-0.5, 0.3)),
    (branch_scalar, (0.2, 0.3)),
    (loop_runtime_bound, (vec(6), 4)),
    (loop_over_rows, (mat(), vec(4))),
    (while_until_large, (vec(lo=0.1),)),
    (loop_with_break, (np.array([0.1, -0.3, 0.5, 0.95, 0.2]),)),
    (loop_with_continue, (vec(),)),
    (early_return, (np.array([0.1, 0.7, 0.2, 0.3]),)),
    (early_return, (np.array([0.1, 0.2, 0.3, 0.3]),)),
    (rosenbrock, (vec(6),)),
    (horner, (vec(4), vec())),
    (recurrent, (mat(3, 3), mat(4, 3))),
    (zipped, (vec(), vec())),
    (argmax_pick, (vec(),)),
    (with_helpers, (vec(), vec())),
    (mlp, (vec(4), mat(5, 4), mat(2, 5))),
    (attention_row, (vec(4), mat(6, 4))),
    (classifier_loss, (vec(),)),
    (activations, (vec(),)),
    (selections, (vec(), vec())),
    (integer_scale, (vec(), 3)),
    (pair_output, (vec(),)),
    (constant_output, (vec(),)),
]

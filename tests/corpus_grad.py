"""User-style functions for reverse mode: each takes float64 arrays/scalars.

CASES maps a name to (function, argument builder); the builder takes a
numpy Generator and returns the arguments.  Every case is differentiated
with respect to its first argument and checked against central differences.
"""
import math

import numpy as np

import transformer as tr


def _vec(n):
    return lambda rng: (rng.normal(size=n),)


def _mat(m, n):
    return lambda rng: (rng.normal(size=(m, n)),)


# ---------------------------------------------------------------- elementwise
def sin_sum(x):
    return np.sum(np.sin(x))


def poly(x):
    return np.sum(3.0 * x ** 3 - 2.0 * x ** 2 + x - 5.0)


def exp_log(x):
    return np.sum(np.log(1.0 + np.exp(x)))


def tanh_square(x):
    y = np.tanh(x)
    return np.sum(y * y)


def math_scalar(x):
    return math.sin(x) * math.exp(x) + math.sqrt(x * x + 1.0)


def division(x):
    return np.sum(1.0 / (1.0 + x * x))


def abs_mix(x):
    return np.sum(np.abs(x) * x)


def power_var(x):
    return np.sum(np.abs(x) ** 1.5)


def arctan2_mix(x):
    return np.sum(np.arctan2(x, 2.0 + x * x))


def hyperbolic(x):
    return np.sum(np.sinh(x) * 0.3 + np.cosh(x) * 0.2 + np.arcsinh(x))


def trig_inverse(x):
    y = 0.5 * np.tanh(x)
    return np.sum(np.arcsin(y) + np.arccos(y) * y + np.arctan(x))


def sqrt_cbrt(x):
    return np.sum(np.sqrt(x * x + 1.0) + np.cbrt(x * x + 2.0))


def logs(x):
    y = x * x + 1.0
    return np.sum(np.log2(y) + np.log10(y) + np.log1p(y) + np.expm1(0.1 * x))


def maximum_minimum(x):
    return np.sum(np.maximum(x, 0.1) * 2.0 + np.minimum(x, -0.2))


def where_select(x):
    return np.sum(np.where(x > 0, x * x, -x))


def clip_range(x):
    return np.sum(np.clip(x, -0.5, 0.5) * x)


def square_reciprocal(x):
    return np.sum(np.square(x) + np.reciprocal(2.0 + x * x))


def hypot_logaddexp(x):
    return np.sum(np.hypot(x, 1.5) + np.logaddexp(x, 0.5 * x))


def mod_floor(x):
    return np.sum(np.mod(x, 0.7) + np.floor(x) * x)


def negation_chain(x):
    return -np.sum(-(-x) * x)


# -------------------------------------------------------- broadcasting, reductions
def broadcast_bias(x):
    b = np.array([1.0, -2.0, 0.5])
    return np.sum((x + b) ** 2)


def broadcast_column(x):
    return np.sum(x * x[:, 0:1])


def mean_axis0(x):
    return np.sum(np.mean(x, axis=0) ** 2)


def sum_axis1_keepdims(x):
    s = np.sum(x, axis=1, keepdims=True)
    return np.sum(x / s)


def max_reduce(x):
    return np.max(x * x) + np.sum(np.max(x, axis=0))


def min_axis(x):
    return np.sum(np.min(x, axis=1) * 2.0)


def prod_reduce(x):
    return np.prod(x)


def var_std(x):
    return np.var(x) + np.std(x, axis=0).sum()


def cumsum_chain(x):
    return np.sum(np.cumsum(x) ** 2)


def norm_l2(x):
    return np.linalg.norm(x) + x.sum()


def softmax_ce(x):
    p = tr.nn.softmax(x)
    return -np.sum(np.log(p) * np.array([0.2, 0.3, 0.5]))


def logsumexp_fn(x):
    return tr.nn.logsumexp(x * 2.0)


def sigmoid_relu(x):
    return np.sum(tr.nn.sigmoid(x) + tr.nn.relu(x) * x + tr.nn.gelu(x))


def log_softmax_rows(x):
    return np.sum(tr.nn.log_softmax(x, axis=1)[:, 0])


# -------------------------------------------------------------------- linalg
def quadratic_form(x):
    a = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])
    return np.dot(x, np.dot(a, x))


def matmul_chain(x):
    w = np.ones((3, 2)) * 0.5
    return np.sum((x @ w) ** 2)


def matvec(x):
    v = np.array([1.0, -1.0, 2.0, 0.5])
    return np.sum(np.tanh(np.dot(x, v)))


def outer_trace(x):
    return np.trace(np.outer(x, x)) + np.sum(np.outer(x, x[::-1]))


def transpose_reshape(x):
    y = x.T.reshape(-1)
    return np.sum(y * np.arange(12.0))


def expand_squeeze(x):
    y = np.expand_dims(x, 0) * 2.0
    return np.sum(np.squeeze(y, axis=0) ** 2)


def concat_stack(x):
    y = np.concatenate((x, x * 2.0))
    z = np.stack((x, x ** 2), axis=1)
    return np.sum(y ** 2) + np.sum(z[:, 1])


def flip_ravel(x):
    return np.sum(np.flip(x) * np.ravel(x) * np.arange(4.0))


def inverse_det(x):
    m = np.eye(2) * 3.0 + np.reshape(x, (2, 2))
    return np.sum(np.linalg.inv(m)) + np.linalg.det(m)


def solve_system(x):
    a = np.array([[3.0, 1.0], [1.0, 2.0]]) + np.reshape(x, (2, 2)) * 0.1
    return np.sum(np.linalg.solve(a, x[:2]) ** 2)


# ------------------------------------------------------------- indexing, writes
def index_scalar(x):
    return x[0] * x[1] + x[2] ** 2


def slice_sum(x):
    return np.sum(x[1:4] * x[:3])


def matrix_index(x):
    return np.sum(x[1, :] * x[:, 0]) + x[2, 2]


def inplace_fill(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] * x[i]
    return np.sum(y * x)


def inplace_accumulate(x):
    y = np.ones(4)
    y[1:3] += x[0:2] * 3.0
    y[0] *= x[3]
    return np.sum(y ** 2)


def inplace_overwrite(x):
    y = x * 1.0
    y[0] = y[1] * y[2]
    y[1] = y[0] + 1.0
    return np.sum(y * y)


def cumulative_loop(x):
    out = np.zeros(5)
    acc = 0.0
    for i in range(5):
        acc = acc + x[i]
        out[i] = acc * acc
    return np.sum(out)


# --------------------------------------------------------------- control flow
def branch_on_value(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.exp(x)
    return np.sum(y * x)


def elif_chain(x):
    s = np.sum(x)
    if s > 1.0:
        r = s * s
    elif s > -1.0:
        r = np.sin(s)
    else:
        r = -s
    return r


def ternary(x):
    a = x[0] if x[0] > x[1] else x[1]
    return a * a + x[2]


def scalar_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i] * (i + 1)
    return s


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def loop_over_rows(x):
    total = 0.0
    for row in x:
        total = total + np.sum(np.tanh(row)) * row[0]
    return total


def enumerate_loop(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * i
    return s * s


def zip_loop(x):
    s = 0.0
    for a, b in zip(x[:-1], x[1:]):
        s += a * b
    return s


def while_data_dependent(x):
    s = x
    while s < 10.0:
        s = s * 1.5 + 0.1
    return s


def while_with_counter(x):
    y = x
    k = 0
    while np.sum(y * y) < 50.0 and k < 20:
        y = y * 1.3 + 0.05
        k += 1
    return np.sum(y)


def break_loop(x):
    s = 0.0
    for i in range(len(x)):
        if s > 2.0:
            break
        s = s + x[i] * x[i]
    return s


def continue_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            continue
        s = s + np.sin(x[i])
    return s


def early_return(x):
    if x[0] > 0:
        return np.sum(x * 2.0)
    y = x * x
    return np.sum(y)


def return_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
        if s > 1.0:
            return s * s
    return s


def nested_loops(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            s = s + x[i, j] * (i - j)
    return s * s


def nested_data_loops(x):
    s = 0.0
    for i in range(len(x)):
        t = x[i]
        k = 0
        while t < 3.0 and k < 10:
            t = t * 1.7 + 0.2
            k += 1
        s = s + t
    return s


def reassigned_variables(x):
    y = np.sin(x)
    y = y * y
    y = y + x
    z = y
    y = z * 2.0
    return np.sum(y)


def rnn(x):
    w = np.array([[0.5, -0.2], [0.3, 0.4]])
    h = np.zeros(2)
    for t in range(len(x)):
        h = np.tanh(np.dot(w, h) + x[t])
    return np.sum(h)


def ode_euler(x):
    y = x
    for _ in range(20):
        y = y + 0.05 * (-y * y * y + np.sin(y))
    return np.sum(y)


def branch_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s = s + x[i] * x[i]
        else:
            s = s - x[i]
    return s


def accumulate_matrix(x):
    m = np.zeros((3, 3))
    for i in range(3):
        m[i, :] = x * (i + 1.0)
    return np.sum(m @ x)


# -------------------------------------------------------------------- helpers
def _helper_square(v):
    return v * v


def _helper_affine(v, scale=2.0, shift=0.5):
    return v * scale + shift


def _helper_nested(v):
    return _helper_square(_helper_affine(v, shift=0.1))


def helper_calls(x):
    return np.sum(_helper_square(x) + _helper_affine(x, 3.0))


def nested_helpers(x):
    return np.sum(_helper_nested(x))


def _write_into(buffer, values):
    for i in range(len(values)):
        buffer[i] = values[i] * 2.0
    return buffer


def helper_inplace(x):
    buf = np.zeros(4)
    buf = _write_into(buf, x)
    return np.sum(buf * buf)


def two_arguments(x, y):
    return np.sum(x * y + np.sin(x))


# ------------------------------------------------------------ more user code
def softplus_loss(x):
    return np.mean(tr.nn.softplus(x) - 0.5 * x)


def logistic_regression(w):
    xs = np.array([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [-1.0, 0.3, 0.8], [2.0, 1.0, 0.0]])
    ys = np.array([1.0, 0.0, 1.0, 0.0])
    logits = xs @ w
    return np.mean(np.logaddexp(0.0, logits) - ys * logits)


def two_layer_mlp(w):
    x = np.array([[0.2, -0.4], [1.0, 0.5], [-0.3, 0.8]])
    h = np.tanh(x @ np.reshape(w[:6], (2, 3)))
    out = h @ w[6:9]
    return np.mean((out - 0.5) ** 2)


def attention_scores(q):
    k = np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.7]])
    scores = q @ k.T / np.sqrt(2.0)
    weights = tr.nn.softmax(scores, axis=-1)
    return np.sum(weights * np.arange(3.0))


def huber(x):
    total = 0.0
    for i in range(len(x)):
        a = abs(x[i])
        if a < 1.0:
            total = total + 0.5 * a * a
        else:
            total = total + a - 0.5
    return total


def gaussian_nll(x):
    mu = np.mean(x)
    var = np.mean((x - mu) ** 2) + 0.1
    return 0.5 * np.sum((x - mu) ** 2 / var + np.log(var))


def pairwise_distances(x):
    total = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            d = x[i] - x[j]
            total = total + np.sqrt(np.sum(d * d) + 1e-3)
    return total


def running_max(x):
    best = x[0]
    for i in range(1, len(x)):
        best = max(best, x[i])
    return best * best


def polynomial_horner(x):
    coefficients = np.array([0.5, -1.0, 2.0, 0.3])
    result = np.zeros_like(x)
    for c in coefficients:
        result = result * x + c
    return np.sum(result)


def newton_sqrt(x):
    y = x
    for _ in range(6):
        y = 0.5 * (y + x / y)
    return y


def bisection_free_fixed_point(x):
    y = 0.5
    k = 0
    while k < 30:
        y = np.cos(x * y)
        k = k + 1
    return y


def leaky_piecewise(x):
    y = np.where(x > 0, x, 0.1 * x)
    z = np.where(y > 0.5, y * y, y)
    return np.sum(z)


def matrix_power_loop(x):
    m = np.reshape(x, (2, 2)) * 0.5
    acc = np.eye(2)
    for _ in range(3):
        acc = acc @ m
    return np.sum(acc)


def column_normalize(x):
    norms = np.sqrt(np.sum(x * x, axis=0, keepdims=True))
    y = x / norms
    return np.sum(y[0] * np.arange(3.0))


def slice_assign_loop(x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i, 0] = x[i]
        out[i, 1] = x[i] * x[(i + 1) % 3]
    return np.sum(out ** 2)


def reverse_cumulative(x):
    acc = 0.0
    total = 0.0
    for i in range(len(x) - 1, -1, -1):
        acc = acc * 0.9 + x[i]
        total = total + acc * acc
    return total


def stepped_range(x):
    s = 0.0
    for i in range(1, len(x), 2):
        s = s + x[i] * x[i - 1]
    return s


def nested_branch_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            if x[i] > 1.0:
                s = s + x[i] ** 3
            else:
                s = s + x[i] ** 2
        elif x[i] < -1.0:
            s = s - x[i]
    return s


def chained_comparison(x):
    s = 0.0
    for i in range(len(x)):
        if -0.5 < x[i] < 0.5:
            s = s + x[i] * 4.0
        else:
            s = s + np.sin(x[i])
    return s


def sum_of_exp_ratio(x):
    e = np.exp(x - np.max(x))
    return np.log(np.sum(e)) + np.max(x)


def aug_assign_ops(x):
    y = x * 1.0
    y += 2.0
    y *= x
    y -= 0.5 * x
    y /= 1.0 + x * x
    return np.sum(y)


def tuple_unpack_helper(x):
    a, b = _split_pair(x)
    return np.sum(a * b)


def _split_pair(v):
    return v[:2], v[2:]


def mean_std_normalize(x):
    z = (x - np.mean(x)) / (np.std(x) + 1e-3)
    return np.sum(z * np.arange(5.0))


def triangular_loops(x):
    s = 0.0
    for i in range(4):
        for j in range(i):
            s = s + x[i] * x[j] * 0.5
    return s



def reversed_rows(x):
    s = 0.0
    for v in reversed(x):
        s = s * 0.9 + np.sin(v)
    return s


def reversed_range_from(x):
    s = 0.0
    for i in reversed(range(2, len(x))):
        s = np.tanh(s) + x[i] * x[i - 1]
    return s


def annotated_one_liners(x: np.ndarray) -> float:
    total: float = 0.0
    for i in range(len(x)): total += x[i] ** 3
    if total > 0.0: total = total * 2.0
    return total


def for_else_search(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 1.8:
            s = s + x[i] ** 3
            break
        s = s + x[i]
    else:
        s = s * np.sin(s)
    return s


def while_else_product(x):
    s = 1.0
    k = 0
    while k < len(x):
        s = s * x[k]
        if s > 5.0:
            break
        k += 1
    else:
        s = -s
    return s


def nested_for_else(x):
    # the inner loop's break sets only its own flag
    s = 0.0
    for i in range(3):
        for j in range(3):
            if x[i] * x[j] > 2.5:
                break
            s += x[i] * x[j]
        else:
            s += x[i]
    else:
        s *= 2.0
    return s


def differences_of_differences(x):
    # the carried array loses an element each iteration
    out = x * 1.0
    for k in range(2):
        out = out[1:] - out[:-1]
    return np.sum(out ** 2)


def pairwise_pooling(x):
    # halves each pass, until one element is left
    out = x * 1.0
    while len(out) > 1:
        out = out[::2] + np.tanh(out[1::2])
    return np.sum(out ** 2)


def grown_by_concatenation(x):
    # gains an element each iteration
    out = x[:1] * 1.0
    for i in range(1, len(x)):
        out = np.concatenate([out, out[-1:] * 0.5 + x[i:i + 1]])
    return np.sum(out ** 2)


def decompositions(x):
    m = np.reshape(x, (2, 2))
    a = m @ m.T + np.eye(2)                       # symmetric, positive definite
    w, v = np.linalg.eigh(a)
    sign, logabsdet = np.linalg.slogdet(a)
    return np.sum(w * v[0] ** 2) + sign * logabsdet + np.sum(np.linalg.cholesky(a)) + np.linalg.eigvalsh(a)[0]


def tuple_in_a_variable(x):
    pair = (x[:2], x[2:] * 2.0)
    same = pair
    return np.sum(same[0] * same[1]) + np.sum(pair[-1] ** 2)


def rosenbrock_slices(x):
    """Rosenbrock vectorised: x[1:] and x[:-1] have one shape, so no cotangent is summed between them."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def shifted_rates(x):
    """An ODE's right-hand side written into a slice from shifted slices, in a loop that rebinds y."""
    y = np.sin(x)
    for _ in range(2):
        z = np.empty_like(y)
        z[0] = x[0]
        z[1:] = x[1:] * y[:-1]
        y = y + 0.5 * z
    return np.sum(y ** 2)


def shortening_slices(x):
    """y loses an entry each pass: its slices' shapes change from pass to pass, so no class is shared."""
    y = x * 1.0
    for _ in range(3):
        y = y[1:] * x[:-1][:len(y) - 1] + y[:-1]
    return np.sum(y ** 2)


def slices_of_one_length(x):
    """x[1:-2], x[3:] and x[:-3] drop three entries each: one shape."""
    a = x[1:-2]
    return np.sum(a * x[3:] + x[:-3] * a ** 2)


CASES = {
    "sin_sum": (sin_sum, _vec(5)), "poly": (poly, _vec(4)), "exp_log": (exp_log, _vec(4)),
    "tanh_square": (tanh_square, _vec(6)), "math_scalar": (math_scalar, lambda r: (float(r.normal()),)),
    "division": (division, _vec(4)), "abs_mix": (abs_mix, _vec(5)), "power_var": (power_var, _vec(4)),
    "arctan2_mix": (arctan2_mix, _vec(4)), "hyperbolic": (hyperbolic, _vec(4)),
    "trig_inverse": (trig_inverse, _vec(4)), "sqrt_cbrt": (sqrt_cbrt, _vec(4)), "logs": (logs, _vec(4)),
    "maximum_minimum": (maximum_minimum, _vec(6)), "where_select": (where_select, _vec(6)),
    "clip_range": (clip_range, _vec(6)), "square_reciprocal": (square_reciprocal, _vec(4)),
    "hypot_logaddexp": (hypot_logaddexp, _vec(4)), "mod_floor": (mod_floor, _vec(4)),
    "negation_chain": (negation_chain, _vec(3)),
    "broadcast_bias": (broadcast_bias, _mat(4, 3)), "broadcast_column": (broadcast_column, _mat(3, 4)),
    "mean_axis0": (mean_axis0, _mat(4, 3)), "sum_axis1_keepdims": (sum_axis1_keepdims, lambda r: (r.uniform(1, 2, (3, 4)),)),
    "max_reduce": (max_reduce, _mat(3, 4)), "min_axis": (min_axis, _mat(3, 4)), "prod_reduce": (prod_reduce, _vec(5)),
    "var_std": (var_std, _mat(4, 3)), "cumsum_chain": (cumsum_chain, _vec(5)), "norm_l2": (norm_l2, _vec(4)),
    "softmax_ce": (softmax_ce, _vec(3)), "logsumexp_fn": (logsumexp_fn, _vec(5)),
    "sigmoid_relu": (sigmoid_relu, _vec(6)), "log_softmax_rows": (log_softmax_rows, _mat(3, 4)),
    "quadratic_form": (quadratic_form, _vec(3)), "matmul_chain": (matmul_chain, _mat(4, 3)),
    "matvec": (matvec, _mat(3, 4)), "outer_trace": (outer_trace, _vec(4)),
    "transpose_reshape": (transpose_reshape, _mat(3, 4)), "expand_squeeze": (expand_squeeze, _vec(4)),
    "concat_stack": (concat_stack, _vec(3)), "flip_ravel": (flip_ravel, _vec(4)),
    "inverse_det": (inverse_det, _vec(4)), "solve_system": (solve_system, _vec(4)),
    "decompositions": (decompositions, _vec(4)), "tuple_in_a_variable": (tuple_in_a_variable, _vec(4)),
    "index_scalar": (index_scalar, _vec(3)), "slice_sum": (slice_sum, _vec(5)),
    "matrix_index": (matrix_index, _mat(3, 3)), "inplace_fill": (inplace_fill, _vec(4)),
    "inplace_accumulate": (inplace_accumulate, _vec(4)), "inplace_overwrite": (inplace_overwrite, _vec(3)),
    "cumulative_loop": (cumulative_loop, _vec(5)),
    "branch_on_value": (branch_on_value, _vec(4)), "elif_chain": (elif_chain, _vec(3)),
    "ternary": (ternary, _vec(3)), "scalar_loop": (scalar_loop, _vec(6)), "rosenbrock": (rosenbrock, _vec(6)),
    "rosenbrock_slices": (rosenbrock_slices, _vec(6)), "shifted_rates": (shifted_rates, _vec(5)),
    "shortening_slices": (shortening_slices, _vec(6)), "slices_of_one_length": (slices_of_one_length, _vec(5)),
    "loop_over_rows": (loop_over_rows, _mat(3, 4)), "enumerate_loop": (enumerate_loop, _vec(4)),
    "zip_loop": (zip_loop, _vec(5)), "while_data_dependent": (while_data_dependent, lambda r: (float(r.uniform(0.5, 2.0)),)),
    "while_with_counter": (while_with_counter, lambda r: (r.uniform(0.5, 1.0, 3),)),
    "break_loop": (break_loop, _vec(6)), "continue_loop": (continue_loop, _vec(6)),
    "early_return": (early_return, _vec(4)), "return_in_loop": (return_in_loop, lambda r: (r.uniform(0.1, 0.5, 6),)),
    "nested_loops": (nested_loops, _mat(3, 3)), "nested_data_loops": (nested_data_loops, lambda r: (r.uniform(0.5, 1.5, 4),)),
    "reassigned_variables": (reassigned_variables, _vec(4)), "rnn": (rnn, _vec(5)),
    "ode_euler": (ode_euler, _vec(3)), "branch_in_loop": (branch_in_loop, _vec(6)),
    "accumulate_matrix": (accumulate_matrix, _vec(3)),
    "helper_calls": (helper_calls, _vec(4)), "nested_helpers": (nested_helpers, _vec(4)),
    "helper_inplace": (helper_inplace, _vec(4)),
    "two_arguments": (two_arguments, lambda r: (r.normal(size=3), r.normal(size=3))),
    "softplus_loss": (softplus_loss, _vec(5)), "logistic_regression": (logistic_regression, _vec(3)),
    "two_layer_mlp": (two_layer_mlp, _vec(9)), "attention_scores": (attention_scores, _mat(4, 2)),
    "huber": (huber, lambda r: (r.normal(size=6) * 2.0,)), "gaussian_nll": (gaussian_nll, _vec(6)),
    "pairwise_distances": (pairwise_distances, _mat(4, 2)), "running_max": (running_max, _vec(6)),
    "polynomial_horner": (polynomial_horner, _vec(4)),
    "newton_sqrt": (newton_sqrt, lambda r: (float(r.uniform(1.0, 4.0)),)),
    "bisection_free_fixed_point": (bisection_free_fixed_point, lambda r: (float(r.uniform(0.2, 0.8)),)),
    "leaky_piecewise": (leaky_piecewise, _vec(6)), "matrix_power_loop": (matrix_power_loop, _vec(4)),
    "column_normalize": (column_normalize, lambda r: (r.uniform(0.5, 1.5, (3, 3)),)),
    "reversed_rows": (reversed_rows, _vec(5)), "reversed_range_from": (reversed_range_from, _vec(6)),
    "annotated_one_liners": (annotated_one_liners, _vec(5)),
    # uniform(0.5, 2.0): some runs break, some finish and take the else
    "for_else_search": (for_else_search, lambda r: (r.uniform(0.5, 2.0, 6),)),
    "while_else_product": (while_else_product, lambda r: (r.uniform(0.5, 2.0, 4),)),
    "nested_for_else": (nested_for_else, lambda r: (r.uniform(0.5, 2.0, 3),)),
    "differences_of_differences": (differences_of_differences, _vec(6)),
    "pairwise_pooling": (pairwise_pooling, _vec(8)), "grown_by_concatenation": (grown_by_concatenation, _vec(5)),
    "slice_assign_loop": (slice_assign_loop, _vec(3)), "reverse_cumulative": (reverse_cumulative, _vec(5)),
    "stepped_range": (stepped_range, _vec(6)), "nested_branch_loop": (nested_branch_loop, lambda r: (r.normal(size=8) * 1.5,)),
    "chained_comparison": (chained_comparison, _vec(6)), "sum_of_exp_ratio": (sum_of_exp_ratio, _vec(5)),
    "aug_assign_ops": (aug_assign_ops, _vec(4)), "tuple_unpack_helper": (tuple_unpack_helper, _vec(4)),
    "mean_std_normalize": (mean_std_normalize, _vec(5)), "triangular_loops": (triangular_loops, _vec(4)),
}

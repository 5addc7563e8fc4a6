"""User-style functions for vmap tests: each is written for ONE example."""
import math

import numpy as np

import transformer as tr


def scale_shift(x, a):
    return np.sin(x) * a + 1.0


def dot_weights(x, w):
    return np.dot(x, w)


def logistic_loss(w, x, y):
    z = x @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def normalize_rows(x):
    return x / np.sum(x, axis=-1, keepdims=True)


def vector_norm(x):
    return np.sqrt(np.sum(x * x))


def mean_var(x):
    return np.mean(x), np.var(x)


def relu_if(x):
    if x > 0:
        y = x
    else:
        y = 0.1 * x
    return y


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def sum_first(x, k):
    total = 0.0
    for i in range(k):
        total = total + x[i]
    return total


def clip_inplace(x):
    y = np.copy(x)
    for i in range(len(y)):
        if y[i] > 1.0:
            y[i] = 1.0
    return y


def write_row(x, v):
    y = np.zeros((3, 2))
    y[1] = v
    y[0, 1] = x
    return y


def gather(x, i):
    return x[i]


def matvec(a, x):
    return a @ x


def outer_sum(x, y):
    return np.sum(np.outer(x, y))


def shapes(x):
    n = x.shape[0]
    return np.reshape(x, (n, 1)) * 2.0


def transpose_mat(x):
    return x.T + 1.0


def softmax(x):
    return tr.nn.softmax(x)


def max_min(x):
    return np.max(x) - np.min(x)


def argmax_row(x):
    return np.argmax(x, axis=1)


def cumulative(x):
    return np.cumsum(x)


def ode_steps(x0):
    x = x0
    t = 0.0
    while x > 0.01:
        x = x - 0.1 * x * (1.0 + math.sin(t))
        t = t + 0.1
    return t


def stack_two(x, y):
    return np.stack((x, y), axis=-1)


def concat(x, y):
    return np.concatenate((x, y))


def expand(x):
    return np.expand_dims(x, -1) * np.ones((1, 3))


def where_abs(x):
    return np.where(x > 0, x, -x)


def piecewise(x):
    if x < -1.0:
        return_value = -1.0
    elif x < 1.0:
        return_value = x ** 3
    else:
        return_value = 1.0
    return return_value


def count_positive(x):
    count = 0
    for i in range(len(x)):
        if x[i] > 0:
            count += 1
    return count


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def poly(x, c):
    result = 0.0
    for i in range(len(c)):
        result = result * x + c[i]
    return result


def matmul_both(a, b):
    return a @ b


def solve_lin(a, b):
    return np.linalg.solve(a, b)


def det_inv(a):
    return np.linalg.det(a) * np.trace(np.linalg.inv(a))


def flip_all(x):
    return np.flip(x)


def swap(x):
    return np.swapaxes(x, 0, 1)


def reduce_axis0(x):
    return np.sum(x, axis=0) + np.max(x, axis=0)


def std_ddof(x):
    return np.std(x, ddof=1)


def any_all(x):
    return np.any(x > 0.5), np.all(x > -2.0)


def prod_of(x):
    return np.prod(x)


def first_last(x):
    return x[0] + x[-1] + np.sum(x[1:3])


def count_to(n):
    total = 0
    for i in range(n):
        total = total + i
    return total


def masked_update(x, t):
    y = np.copy(x)
    if t > 0:
        y[0] = t
        y[1] = y[1] * 2.0
    return y


def nested_if(x, y):
    if x > 0:
        if y > 0:
            r = x + y
        else:
            r = x - y
    else:
        r = 0.0
    return r


def shape_query(x):
    return x.ndim + x.size + len(x) + x.shape[1]


def clip_scalar(x):
    return np.clip(x, -0.5, 0.5)


def mixed_rank(s, v):
    return s * v + np.sum(v) * s


def norm2(x):
    return np.linalg.norm(x)


def linspace_scale(x):
    return x * np.linspace(0.0, 1.0, 4)


def returns_unbatched(x, w):
    return np.sum(x * w), w * 2.0


def psum_normalize(x):
    return x / tr.lax.psum(x, "batch")


def pmean_center(x):
    return x - tr.lax.pmean(x, "batch")


def pmax_pmin(x):
    return tr.lax.pmax(x, "batch") - tr.lax.pmin(x, "batch")


def gather_all(x):
    return tr.lax.all_gather(x, "batch")


def index_of(x):
    return x * tr.lax.axis_index("batch")


def break_in_batched(x):
    while x < 100.0:
        if x > 50.0:
            break
        x = x * 2.0
    return x


def return_in_batched(x):
    if x > 0:
        return x
    return -x


def bad_arange(n):
    return np.arange(0, n)


# ------------------------------------------- exits that differ per example
def first_positive(x):
    for i in range(len(x)):
        if x[i] > 0:
            return i
    return -1


def sum_until_negative(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            break
        total += x[i]
    return total


def sum_skip_negative(x):
    total = 0.0
    i = 0
    while i < len(x):
        i += 1
        if x[i - 1] < 0:
            continue
        total += x[i - 1]
    return total


def stop_index(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            break
    return i


def newton_capped(a):
    y = a
    steps = 0
    while True:
        y_next = 0.5 * (y + a / y)
        steps += 1
        if abs(y_next - y) < 1e-12 or steps >= 50:
            break
        y = y_next
    return y_next, steps


def nested_return(x):
    for i in range(len(x)):
        for j in range(len(x)):
            if x[i] + x[j] > 2.5:
                return i * 10 + j
    return -1


def last_crossing(x, level):
    for i in range(len(x)):
        if x[i] > level:
            found = i
    return found


def return_in_a_branch_no_pass_takes(x):
    # the early return's store sits in a branch no pass takes (k == 1 never holds): the final
    # return's store is then the first, and there is no old value to keep for inactive examples
    v = x * 1.0
    for i in range(1):
        for k in range(1):
            v = v * 0.7 + np.sin(x)
            if k == 1:
                if np.sum(v) > 1.0:
                    return np.sum(v)
    return np.sum(v) + 0.5


def sign_and_size(x):
    if x < 0:
        return -1.0, -x
    return 1.0, x


def tuple_in_loop(x):
    pair = (x, 0.0)
    while x > 1.0:
        x = x / 2.0
        pair = (x, 1.0)
    return pair


def tuple_of_tuples_in_loop(x):
    pair = ((x, 0.0), 1.0)
    while x > 1.0:
        x = x / 2.0
        pair = ((x, 1.0), 2.0)
    return pair[0][0] + pair[0][1] + pair[1]


def affine(params, x):
    return np.dot(params["W"], x) + params["b"]


def affine_loss(params, x):
    y = affine(params, x)
    return np.sum(y * y)


def scaled_pair(pair, x):
    return pair[0] * x + pair[1]


def dot_after_update(x, w):
    x = x * 2.0                      # x is no longer the argument: its examples are not the argument's rows
    return np.dot(x, w)


def gather_after_write(x, i):
    x[0] = 1.0
    return x[i]


def write_through_alias(x, i):
    y = x
    y[0] = 1.0                       # writes into x: its examples are no longer the argument's rows
    return x[i]


def pmax_pmin_scaled(x):
    return x * tr.lax.pmax(x, "batch") + np.sin(tr.lax.pmin(x, "batch"))


def pmax_pmin_directional(x, t):
    # forward mode inside the vmap: jvp meets pmax and pmin themselves (it refused them before)
    return tr.jvp(pmax_pmin_scaled, (x,), (t,))[1]


# One number or truth value of each example: NumPy refuses float() of an array and an `if` on
# one, so vmap must refuse them for an example that is an array (it cast or masked every element).
def steps_until_small(x):
    while x > 1.0:                    # one example's x: a number, or an array NumPy refuses here
        x = x * 0.5
    return x


def negated_condition(x):
    small = not (x > 1.0)
    return np.where(small, x, 2.0 * x)


def number_of_the_example(x):
    return float(x) * 2.0 + int(x > 0.0)


def repeated_sum(x, n):
    total = x * 0.0
    for i in range(n):               # one example's n: a number, or an array NumPy refuses here
        total = total + x
    return total


def scaled_and_summed(x):
    """A dict output, for out_axes given as a dict."""
    return {"scaled": x * 2.0, "total": np.sum(x)}


def scaled_and_summed_pair(x):
    return x * 2.0, np.sum(x)


def axes_by_keyword(x):
    """np.expand_dims, np.moveaxis and np.swapaxes with their axes given by keyword."""
    moved = np.moveaxis(x, source=0, destination=-1)
    return np.expand_dims(moved, axis=1) * np.swapaxes(x, axis1=0, axis2=1)[:, None, :]

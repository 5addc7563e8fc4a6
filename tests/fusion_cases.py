"""Functions whose CPU code substitutes elementwise temporaries (backends/numba_fusion.py)."""
import numpy as np


def chain(x):
    return np.exp(-x ** 2) * np.sin(3 * x) + 0.5 * np.tanh(x)


def operand_rewritten_in_place(x, y):
    t = x * 2.0          # read once, below; but x[0] changes in between
    x[0] = 100.0
    return t + y


def operand_rebound(x, y):
    t = y + 1.0
    y = x * 3.0
    return t * y


def read_twice(x):
    t = np.sin(x)
    return t * t + 1.0


def through_a_reduction(x):
    t = x * 2.0
    return np.sum(t) + 1.0


def in_a_loop(x, n):
    total = x * 0.0
    for i in range(n):
        step = np.cos(x + i)
        total = total + step * x
    return total


def operand_written_through_a_view(x, y):
    t = x * 2.0          # read once, below; x changes through the view v in between
    v = x[1:]
    v[0] = 100.0
    return t + y


def log_sum_exp(x):
    return np.log(np.sum(np.exp(x)))


def row_log_sum_exp(x):
    return np.sum(np.log(np.sum(np.exp(x), axis=1)))


def total_of_column_sums(x):
    # each cotangent is expanded and then returned or expanded again: no elementwise expression
    # reads it beside an array of the full shape
    return np.sum(np.sum(x, axis=0))


# --- a max's cotangent added in its own pass (numba_fusion.fuse_added_cotangents)
def shifted_log_sum_exp(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top


def log_sum_exp_rows(x):
    top = np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - top), axis=1)) + top[:, 0])


def max_only(x):
    return np.max(x) * 3.0


def log_sum_exp_kept(x):
    top = np.max(x, keepdims=True)
    return np.log(np.sum(np.exp(x - top))) + np.max(x) + np.sum(top * 0.5)


def log_sum_exp_transposed(x):
    # a transpose: the lowering keeps each rebound cotangent in one layout (nl.c_ordered)
    y = np.transpose(x)
    top = np.max(y, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(y - top), axis=1)) + top[:, 0]) + np.max(y)


# --- a product's cotangent summed as it is computed (numba_fusion.fuse_summed_products)
def nearest_centroid_total(centroids, points):
    distances = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(distances, axis=1))


def scaled_rows_total(x, w):
    return np.sum(np.tanh(x * w))


def row_weighted_total(w, x):
    return np.sum(np.tanh(w[None, :] * x))


def middle_axis_total(w, x):
    # a sum over a middle axis (w's None is not leading in the product): the written product, summed
    return np.sum(np.sin(w[None, :, None] * x[:, None, :]) ** 2)


def sigmoid_layers(w, x):
    """A loop whose backward sweep reads each taped value (rt.top), uses it, then pops it: the
    cotangents made before a pop still join the statements after it."""
    h = x
    for _ in range(3):
        h = 1.0 / (1.0 + np.exp(-(h * w)))
    return np.sum(h)

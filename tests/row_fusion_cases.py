"""Functions whose CPU code computes a softmax in one loop over rows (numba_fusion.fuse_rows)."""
import numpy as np

import transformer as tr


def attention_weights(q, k):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    return tr.nn.softmax(scores)


def plain_softmax(x):
    return tr.nn.softmax(x)


def written_out(x):
    # the user's own softmax, not tr.nn's
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def in_a_loop(x, n):
    total = np.zeros_like(x)
    for i in range(n):
        total = total + tr.nn.softmax(x * (i + 1.0))
    return total


def scaled_by_a_product(x):
    return tr.nn.softmax(x * 0.125)


# --- these must keep their separate passes (or some of them)
def along_the_first_axis(x):
    return tr.nn.softmax(x, axis=0)


def exponentials_read_again(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True), e


def peak_read_again(x):
    peak = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - peak)
    return e / np.sum(e, axis=-1, keepdims=True) + peak


def scale_read_again(x):
    scaled = x / 3.0
    return tr.nn.softmax(scaled) + scaled


# --- sums of squares (numba_fusion.fuse_sums_of_squares)
def squared_distances(points, centroids):
    return np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)


def nearest_distance_total(centroids, points):
    distances = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(distances, axis=1))


def squares_along_the_first_axis(x):
    return np.sum(x ** 2, axis=0)


def squares_read_again(x):
    squares = x ** 2
    return np.sum(squares, axis=-1) + squares[:, 0]


def squares_summed_in_a_loop(x, n):
    total = np.zeros(x.shape[0])
    for i in range(n):
        total = total + np.sum((x * (i + 1.0)) ** 2, axis=1)
    return total

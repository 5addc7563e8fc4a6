"""Programs over arrays of a few elements, which the CPU target keeps as a number per element
(backends/numba_small_arrays.py), and programs where it must keep the array."""
import numpy as np

import transformer as tr


def potential(x, w):
    charges = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    return np.sum(1.0 / np.sqrt(np.sum((x - charges) ** 2, axis=1)))


def particle(w):
    # GradBench's particle: a position and a velocity of two elements each, the gradient of a
    # potential inside a while loop that returns
    x = np.array([0.0, 8.0])
    velocity = np.array([0.75, 0.0])
    while True:
        acceleration = -tr.grad(potential)(x, w)
        moved = x + 0.1 * velocity
        if moved[1] < 0.0:
            landing = x + (-x[1] / velocity[1]) * velocity
            return landing[0] ** 2
        velocity = velocity + 0.1 * acceleration
        x = moved


def particle_by_forward_mode(w):
    # the particle's derivative as JAX takes it (jacfwd through its while loop): a jvp, whose
    # tangents start as np.zeros_like of the position and velocity
    return tr.jvp(particle, (w,), (1.0,))[1]


def damped_spring(k):
    # three elements stepped in a for loop; a norm, an element read, a sum.  (The stiffness is
    # an array made here: a parameter met in arithmetic may be an array of any shape, so an array
    # it meets stays an array.)
    x = np.array([1.0, 0.0, 0.0])
    v = np.array([0.0, 1.0, 0.5])
    stiffness = np.array([k, 2.0 * k, 0.5])
    for _ in range(40):
        a = -stiffness * x - 0.1 * v * np.sqrt(np.sum(v ** 2))
        v = v + 0.01 * a
        x = x + 0.01 * v
    return np.sum(x * x) + x[2]


def sums_in_numpy_order(x):
    # twelve terms of different magnitudes: np.sum adds them pairwise (eight running sums)
    v = np.array([x, 1e-8, 3.0, -2.5e7, 0.1, x * x, 7.0, 1e16, -1e16, 0.3, 2.0 ** -30, 5.5])
    return np.sum(v * 1.1)


def sums_along_axes(x):
    m = np.array([[x, 2.0, 3.0], [4.0, x * x, 6.0]])
    rows = np.sum(m, axis=1, keepdims=True)
    columns = np.sum(m, axis=0)
    return rows[1, 0] * columns[2] + np.sum(m * rows) - columns[0]


def float32_element(w):
    # a tuple with a float literal is float64, whatever w is
    v = np.array([1.5, w])
    return np.sum(v * v)


def division_by_zero(x):
    # an array's division gives inf; a number's would raise
    v = np.array([x, 0.0])
    return np.sum(1.0 / v)


def returned(x):
    # the array itself is the result: it stays an array
    v = np.array([x, 1.0])
    return v * 2.0


def shared_then_written(x):
    a = np.array([x, 1.0])
    b = a                  # b is a: the write below changes what b reads
    a[0] = 5.0
    return b[0] * x


def shared_then_written_in_a_loop(x):
    a = np.array([x, 1.0])
    total = 0.0
    for i in range(3):
        b = a
        a[0] = a[0] + 1.0  # from the second pass on, b (the same array) sees this
        total = total + b[0] * x
    return total


def written_while_fresh(x):
    total = 0.0
    for i in range(3):
        a = np.array([x, 1.0]) * 2.0
        a[1] = a[0] + i
        b = a
        total = total + np.sum(b) * b[1]
    return total


def read_out_of_bounds(x):
    v = np.array([x, 1.0])
    return v[2]


def element_is_an_array(w):
    return np.sum(np.array([1.0, w]))


def names_like_elements(x_0):
    # a parameter named as the pass would name x's first element
    x = np.array([x_0, 2.0])
    x_1 = x_0 * 3.0
    x[0] = x_1
    y = x * 0.5
    return np.sum(y) + x_1


def written_after_made_from_a_tuple(x):
    v = np.array([x, 1.0, 2.0])
    v[2] = v[0] * v[1] + 4.0
    return np.sum(v * v)


def spring_of_stiffness(k):
    # k may be a number (one stiffness) or an array (one per axis): numbers per element where it
    # is a number, arrays where it is not
    x = np.array([1.0, 0.0, 0.0])
    v = np.array([0.0, 1.0, 0.5])
    for _ in range(40):
        a = -k * x - 0.1 * v
        v = v + 0.01 * a
        x = x + 0.01 * v
    return np.sum(x * x)

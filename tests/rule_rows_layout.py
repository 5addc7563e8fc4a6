"""Rule-table rows of the layout family: np.tile, np.kron, np.repeat, np.pad, np.diag, np.diagonal, np.rollaxis,
np.atleast_*d, np.column_stack, np.split and its kin (gathers, slices through index arrays of transformer.runtime: templates/definitions.py)."""
import numpy as np

from rule_table import F32, U, Row


def tile_int(x): return np.tile(x, 2) * 1.5                                       # noqa: E704
def tile_tuple(x): return np.tile(x, (2, 3)), np.tile(x, (2, 1, 1))               # noqa: E704
def kron_(a, b): return np.kron(a, b), np.kron(a[0], b[:, 0]), np.kron(a, b[0])    # noqa: E704
def tile_vector(x): return np.tile(x, (3, 2))                                     # noqa: E704
def repeat_flat(x): return np.repeat(x, 2)                                        # noqa: E704
def repeat_axis(x): return np.repeat(x, 3, axis=1), np.repeat(x, 2, axis=-2)      # noqa: E704
def repeat_counts(x): return np.repeat(x, [2, 0, 1], axis=0), np.repeat(x, (1, 2, 1, 3), axis=1)   # noqa: E704
def repeat_count_array(x, counts): return np.repeat(x, counts)                    # noqa: E704
def pad_constant(x): return np.pad(x, 1), np.pad(x, ((1, 0), (2, 3)), constant_values=0.5)   # noqa: E704
def pad_constant_value(x, c): return np.pad(x, (2, 1), mode="constant", constant_values=c)   # noqa: E704
def pad_edge(x): return np.pad(x, ((2, 1), (1, 3)), mode="edge")                  # noqa: E704
def pad_reflect(x): return np.pad(x, 2, mode="reflect"), np.pad(x, ((3, 4), (0, 1)), mode="reflect")   # noqa: E704
def pad_symmetric(x): return np.pad(x, (1, 2), mode="symmetric")                  # noqa: E704
def pad_wrap(x): return np.pad(x, ((1, 5), (2, 0)), mode="wrap")                  # noqa: E704
def pad_vector(x): return np.pad(x, 3, mode="reflect") * np.pad(x, (1, 5), mode="wrap")   # noqa: E704
def diag_matrix(x): return np.diag(x), np.diag(x, 1), np.diag(x, k=-2)            # noqa: E704
def diag_vector(v): return np.diag(v), np.diag(v, 2), np.diag(v, -1)             # noqa: E704
def diagonal_(x): return np.diagonal(x), np.diagonal(x, 1), np.diagonal(x, offset=-1, axis1=1, axis2=0)   # noqa: E704
def diagonal_stack(x): return np.diagonal(x, 0, 1, 2), np.diagonal(x, -1, axis1=-1, axis2=0)   # noqa: E704
def rollaxis_(x): return np.rollaxis(x, 2), np.rollaxis(x, 0, 3), np.rollaxis(x, -1, 1)   # noqa: E704
def atleast_(x): return np.atleast_1d(x), np.atleast_2d(x), np.atleast_3d(x)     # noqa: E704
def atleast_scalar(x): return np.atleast_1d(x * 2.0), np.atleast_2d(x), np.atleast_3d(x)   # noqa: E704
def squeeze_all(x): return np.squeeze(x) * np.sum(np.squeeze(x[:1]))           # noqa: E704
def broadcast_arrays_(x, y): return np.broadcast_arrays(x, y[:, None] * 2.0)      # noqa: E704
def broadcast_arrays_3(x, y): return np.broadcast_arrays(x[0], y[:, None], x[:1, :1, None])   # noqa: E704


def meshgrid_(x, y):
    a, b = np.meshgrid(x, y)
    c, d = np.meshgrid(y, x, indexing="ij")
    return a * 2.0, b, c, d


def meshgrid_3(x, y):
    a, b, c = np.meshgrid(x, y, x[:2])
    d, e, f = np.meshgrid(y, x[1:], y, indexing="ij")
    return a, b, c * 2.0, d, e, f


SQUEEZE_JIT = "np.squeeze(x) needs axis= under jit: the result's rank depends on which axes have length 1 " \
    "(tests/test_layout.py checks the refusal)"

LIST = {"jax": "jax.numpy.broadcast_arrays returns a list where NumPy returns a tuple"}


def dstack_pair(a, b):
    return np.dstack((a, b * 2.0))


def column_stack_(v, m):
    return np.column_stack((v, m * 2.0, v))


# NumPy's split functions return lists: the rows unpack them into one flat tuple of results
def split_sections(x):
    a, b = np.split(x, 2)
    c, d = np.split(x, 2, axis=1)
    e, f, g = np.split(x, (1, 3), axis=-1)
    return a, b * 2.0, c, d, e, f, g


def split_indices(x):
    a, b, c, d = np.split(x, [1, 5, 2], axis=1)          # out of order and past the end, as NumPy allows
    return a, b, c * 2.0, d


def array_split_(x):
    a, b, c = np.array_split(x, 3, axis=1)
    d, e, f = np.array_split(x, 3)
    return a, b, c, d * 2.0, e, f


def hvd_split(x):
    a, b = np.hsplit(x, 2)
    c, d = np.vsplit(x, [1])
    e, f = np.dsplit(x, 2)
    return a, b, c * 2.0, d, e, f


def hsplit_vector(v):
    # NumPy splits a 1-D array along axis 0
    a, b = np.hsplit(v, 2)
    c, d, e = np.hsplit(v * v, [1, 3])
    return a, b * 2.0, c, d, e


def rows():
    matrix = lambda r: (U(r, 3, 4),)                        # noqa: E731
    vector = lambda r: (U(r, 4),)                           # noqa: E731
    stack = lambda r: (U(r, 2, 3, 4),)                      # noqa: E731
    return [
        Row("tile_int", tile_int, matrix),
        Row("kron_", kron_, lambda r: (U(r, 2, 3), U(r, 3, 2))),
        Row("dstack_pair", dstack_pair, lambda r: (U(r, 3, 4), U(r, 3, 4))),
        Row("column_stack_", column_stack_, lambda r: (U(r, 3), U(r, 3, 2))),
        Row("split_sections", split_sections, lambda r: (U(r, 4, 4),)),
        Row("split_indices", split_indices, lambda r: (U(r, 3, 4),),
            skip={"jax": "jax.numpy.split refuses indices out of order, where NumPy gives an empty piece"}),
        Row("array_split_", array_split_, lambda r: (U(r, 4, 5),)),
        Row("hvd_split", hvd_split, lambda r: (U(r, 3, 4, 2),)),
        Row("hsplit_vector", hsplit_vector, lambda r: (U(r, 6),)),
        Row("split_f32", split_sections, lambda r: (F32(r, 4, 4),)),
        Row("tile_tuple", tile_tuple, matrix),
        Row("tile_vector", tile_vector, vector),
        Row("tile_f32", tile_tuple, lambda r: (F32(r, 3, 4),)),
        Row("repeat_flat", repeat_flat, matrix),
        Row("repeat_axis", repeat_axis, matrix),
        Row("repeat_counts", repeat_counts, matrix,
            skip={"jax": "jax.numpy.repeat refuses a list of counts (it wants an array)"}),
        Row("repeat_count_array", repeat_count_array, lambda r: (U(r, 3), np.array([1, 3, 0])), wrt=(0,),
            refuses={"vmap_none": "its arguments differ between examples",
                     "vmap0": "its arguments differ between examples",
                     "vmap1": "its arguments differ between examples"}),
        Row("pad_constant", pad_constant, matrix),
        Row("pad_constant_value", pad_constant_value, lambda r: (U(r, 3, 4), U(r))),
        Row("pad_edge", pad_edge, matrix),
        Row("pad_reflect", pad_reflect, matrix),
        Row("pad_symmetric", pad_symmetric, matrix),
        Row("pad_wrap", pad_wrap, matrix),
        Row("pad_vector", pad_vector, vector),
        Row("pad_f32", pad_edge, lambda r: (F32(r, 3, 4),)),
        Row("diag_matrix", diag_matrix, matrix),
        Row("diag_vector", diag_vector, vector),
        Row("diagonal_", diagonal_, matrix),
        Row("diagonal_stack", diagonal_stack, stack),
        Row("rollaxis_", rollaxis_, stack),
        Row("atleast_vector", atleast_, vector),
        Row("atleast_matrix", atleast_, matrix),
        Row("atleast_stack", atleast_, stack),
        Row("atleast_scalar", atleast_scalar, lambda r: (U(r),)),
        Row("squeeze_all", squeeze_all, lambda r: (U(r, 3, 1, 4),),
            skip={"cpu": SQUEEZE_JIT, "jit_grad": SQUEEZE_JIT, "jit_jvp": SQUEEZE_JIT}),
        Row("squeeze_all_units", squeeze_all, lambda r: (U(r, 1, 1),),
            skip={"cpu": SQUEEZE_JIT, "jit_grad": SQUEEZE_JIT, "jit_jvp": SQUEEZE_JIT}),
        Row("broadcast_arrays_", broadcast_arrays_, lambda r: (U(r, 3, 4), U(r, 3)), skip=LIST),
        Row("broadcast_arrays_3", broadcast_arrays_3, lambda r: (U(r, 3, 4), U(r, 3)), skip=LIST),
        Row("meshgrid_", meshgrid_, lambda r: (U(r, 4), U(r, 3))),
        Row("meshgrid_3", meshgrid_3, lambda r: (U(r, 4), U(r, 3))),
    ]

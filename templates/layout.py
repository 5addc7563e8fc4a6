"""Rules of the layout family: the index arrays and shapes that NumPy's layout functions
(np.tile, np.kron, np.repeat, np.pad, np.diag, np.diagonal, np.rollaxis, np.atleast_*d, np.split and its kin;
their definitions are in templates/definitions.py) are computed from.

Each helper reads only a shape (and literal parameters), so its result is a constant to every
derivative, and the same for every example of a vmap (np.shape answers for one example there).  A
helper given an argument that differs between examples (a per-example ``repeats`` array) would make
a result whose shape differs between examples, which no batch can hold: vmap refuses it.
"""
from transformer.rules import rule, unsupported, zero_derivative

LAYOUT_HELPERS = ("rt.tile_index", "rt.kron_index", "rt.repeat_index", "rt.pad_index", "rt.diag_index", "rt.diagonal_index",
                  "rt.rollaxis_index", "rt.atleast_1d_shape", "rt.atleast_2d_shape", "rt.atleast_3d_shape",
                  "rt.broadcast_shape", "rt.squeezed_shape", "rt.split_bounds", "rt.concatenate_bounds",
                  "rt.kept_dims_shape", "rt.hsplit_shape")

zero_derivative(*LAYOUT_HELPERS)


@rule("tangent", *LAYOUT_HELPERS, nondifferentiable=True)
def layout_index_tangent():
    """Index arrays and shapes are integer constants."""


unsupported("batching", LAYOUT_HELPERS,
            "its arguments differ between examples, so each example's result would have its own shape "
            "(a per-example repeats array, or pad widths), which no batch can hold")

"""Rule-table rows of the contraction family: np.einsum and np.tensordot, written for each subscripts
string or literal axes as transposes, reshapes, matrix products, diagonals and sums
(templates/definitions.py: einsum, tensordot)."""
import numpy as np

from rule_table import F32, U, Row


def einsum_matmul(a, b): return np.einsum("ij,jk->ik", a, b)                      # noqa: E704
def einsum_batched(q, x): return np.einsum("kij,nkj->nki", q, x)                  # noqa: E704
def einsum_three(a, b, c): return np.einsum("ij,jk,kl->il", a, b, c)              # noqa: E704
def einsum_implicit(a, b): return np.einsum("Ba,aC", a, b), np.einsum("ij,jk", a, b)   # noqa: E704
def einsum_vectors(u, v): return np.einsum("i,i->", u, v), np.einsum("i,j->ij", u, v), np.einsum("i,i->i", u, v)   # noqa: E704
def einsum_one(a): return np.einsum("ij->ji", a), np.einsum("ij->", a), np.einsum("ij->j", a)   # noqa: E704
def einsum_diagonal(a): return np.einsum("ii->i", a), np.einsum("ii", a), np.einsum("ii->", a) * 2.0   # noqa: E704
def einsum_diagonal_stack(x): return np.einsum("iij->j", x), np.einsum("iji->ij", x)   # noqa: E704
def einsum_grouped(a, b, c): return np.einsum("abc,cd->abd", a, b), np.einsum("abc,bd->dca", a, c)   # noqa: E704
def einsum_ellipsis(a, b): return np.einsum("...ij,...jk->...ik", a, b), np.einsum("...ij,jk", a, b[0]), np.einsum("...i,...i->...", a, a)   # noqa: E704
def einsum_ellipsis_broadcast(a, b): return np.einsum("...ij,...jk->...ik", a, b), np.einsum("...ii->...i", b[:, :, :2])   # noqa: E704
def einsum_ellipsis_anywhere(a, b): return np.einsum("i...j,j...k->i...k", a, b), np.einsum("i...->...", a), np.einsum("a...b->b...a", b)   # noqa: E704
def einsum_rows(a, b): return np.einsum("bi,bi->b", a, b), np.einsum("bi,bj->bij", a, b)   # noqa: E704

def tensordot_int(a, b): return np.tensordot(a, b, 2), np.tensordot(a, b[0], axes=1)   # noqa: E704
def tensordot_default(a, b): return np.tensordot(a, b)                            # noqa: E704
def tensordot_pairs(a, b): return np.tensordot(a, b, axes=([0, 2], [1, 0])), np.tensordot(a, b, ([2], [0]))   # noqa: E704
def tensordot_negative(a, b): return np.tensordot(a, b, axes=([-1, -3], [-2, -1])), np.tensordot(a, b, ([2, 0], [-2, -1]))   # noqa: E704
def tensordot_outer(u, m): return np.tensordot(u, m, 0), np.tensordot(m, m, 2)     # noqa: E704


def rows():
    return [
        Row("einsum_matmul", einsum_matmul, lambda r: (U(r, 3, 4), U(r, 4, 2))),
        Row("einsum_batched", einsum_batched, lambda r: (U(r, 3, 2, 4), U(r, 5, 3, 4))),
        Row("einsum_three", einsum_three, lambda r: (U(r, 2, 3), U(r, 3, 4), U(r, 4, 2))),
        Row("einsum_implicit", einsum_implicit, lambda r: (U(r, 3, 3), U(r, 3, 3))),
        Row("einsum_vectors", einsum_vectors, lambda r: (U(r, 4), U(r, 4))),
        Row("einsum_one", einsum_one, lambda r: (U(r, 3, 4),)),
        Row("einsum_diagonal", einsum_diagonal, lambda r: (U(r, 3, 3),)),
        Row("einsum_diagonal_stack", einsum_diagonal_stack, lambda r: (U(r, 3, 3, 3),)),
        Row("einsum_grouped", einsum_grouped, lambda r: (U(r, 2, 3, 4), U(r, 4, 2), U(r, 3, 2))),
        Row("einsum_ellipsis", einsum_ellipsis, lambda r: (U(r, 2, 3, 4), U(r, 2, 4, 3))),
        Row("einsum_ellipsis_broadcast", einsum_ellipsis_broadcast, lambda r: (U(r, 2, 1, 3, 2), U(r, 4, 2, 2))),
        Row("einsum_ellipsis_anywhere", einsum_ellipsis_anywhere, lambda r: (U(r, 2, 3, 4), U(r, 4, 3, 2))),
        Row("einsum_rows", einsum_rows, lambda r: (U(r, 3, 4), U(r, 3, 4))),
        Row("einsum_f32", einsum_batched, lambda r: (F32(r, 3, 2, 4), F32(r, 5, 3, 4))),
        Row("tensordot_int", tensordot_int, lambda r: (U(r, 2, 3, 4), U(r, 3, 4, 5))),
        Row("tensordot_default", tensordot_default, lambda r: (U(r, 2, 3, 4), U(r, 3, 4, 5))),
        Row("tensordot_pairs", tensordot_pairs, lambda r: (U(r, 4, 2, 4), U(r, 4, 4, 3))),
        Row("tensordot_negative", tensordot_negative, lambda r: (U(r, 3, 2, 4), U(r, 5, 4, 3))),
        Row("tensordot_outer", tensordot_outer, lambda r: (U(r, 3), U(r, 2, 3))),
        Row("tensordot_f32", tensordot_pairs, lambda r: (F32(r, 4, 2, 4), F32(r, 4, 4, 3))),
    ]

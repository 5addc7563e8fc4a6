"""The composition matrix: every ordered pair outer(inner) of jit, grad, vjp (through its function),
jvp, vmap, pmap, jacfwd, jacrev, hessian and linearize, and the triples users write.

The inner transform is applied to a function inside a function of its own
(``composition_matrix_cases.INNER``, the way JAX code composes with closures), which the outer
transform transforms.  Three functions are swept: a smooth one, one of loops, a branch on values,
a while loop and in-place writes, and one of a tuple of two arrays (JAX's parameters), which the
oracle sees as a function of one vector.  The oracle needs nothing of ours: the inner transforms have closed
forms (``reference_inner``, plain NumPy), and the outer transforms are central differences and
Python loops over them (``reference_outer``).

Every pair works but one kind, refused as declared here with its words: grad, like JAX's, takes
scalar functions only, and seven of the inner transforms return arrays.  A pair that starts working
(or stops) fails its declaration, so the list stays true.
"""
import numpy as np
import pytest

import composition_matrix_cases as case
import transformer as tr
from oracles import ring_of_sines_gradient, ring_of_sines_hessian

TRANSFORMS = ("jit", "grad", "vjp", "jvp", "vmap", "pmap", "jacfwd", "jacrev", "hessian", "linearize")
X = np.array([0.3, -0.6, 1.1])
ONES = np.ones(3)

# inners whose function returns an array per point, which grad refuses as JAX does
NON_SCALAR = ("grad", "vjp", "vmap", "pmap", "jacfwd", "jacrev", "hessian")


# ------------------------------------------------------------------ the oracle
def f(x):
    return np.sum(case.W * np.sin(x)) + np.dot(case.A, x) ** 3 / 6.0


def gradient(x):
    return case.W * np.cos(x) + case.A * np.dot(case.A, x) ** 2 / 2.0


def hessian(x):
    return np.diag(-case.W * np.sin(x)) + np.outer(case.A, case.A) * np.dot(case.A, x)


# the tuple-argument function, seen by the oracle as a function of one vector z = (a, b)
def tree_value(z):
    return case.f_tree((z[:3], z[3:]))


def tree_gradient(z):
    a, b = z[:3], z[3:]
    return np.concatenate([gradient(a) + 0.5 * np.cos(a) * b * b, np.sin(a) * b])


def tree_hessian(z):
    a, b = z[:3], z[3:]
    return np.block([[hessian(a) - np.diag(0.5 * np.sin(a) * b * b), np.diag(np.cos(a) * b)],
                     [np.diag(np.cos(a) * b), np.diag(np.sin(a))]])


FUNCTIONS = {"smooth": (f, gradient, hessian), "loops": (case.f_loops, ring_of_sines_gradient, ring_of_sines_hessian),
             "tree": (tree_value, tree_gradient, tree_hessian)}
TANGENT = {"tree": np.concatenate([case.V, case.B_TANGENT])}


def reference_inner(function, inner):
    value, grad, hess = FUNCTIONS[function]
    rows = lambda xs: np.array([value(x) for x in xs])      # noqa: E731
    tangent = TANGENT.get(function, case.V)
    return {"jit": value, "grad": grad, "vjp": grad, "jvp": lambda x: grad(x) @ tangent, "vmap": rows,
            "pmap": rows, "jacfwd": grad, "jacrev": grad, "hessian": hess,
            "linearize": lambda x: grad(x) @ tangent}[inner]


def jacobian(g, x, eps=1e-6):
    """d g / d x by central differences: shape g(x).shape + x.shape."""
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        step = step.reshape(x.shape)
        columns.append((np.asarray(g(x + step)) - np.asarray(g(x - step))) / (2 * eps))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(g(x)) + x.shape)


def reference_outer(outer, g, x):
    if outer == "jit":
        return g(x)
    if outer == "grad":
        return jacobian(g, x)
    if outer == "vjp":                  # the cotangent is ones shaped like the output
        jac = jacobian(g, x)
        return np.tensordot(np.ones(np.shape(g(x))), jac, axes=np.ndim(g(x)))
    if outer in ("jvp", "linearize"):   # the tangent is ones shaped like x
        return np.tensordot(jacobian(g, x), np.ones(np.shape(x)), axes=np.ndim(x))
    if outer == "vmap":
        return np.array([g(row) for row in (x, 0.5 * x)])
    if outer == "pmap":
        return np.array([g(x)])
    if outer in ("jacfwd", "jacrev"):
        return jacobian(g, x)
    if outer == "hessian":
        return jacobian(lambda z: jacobian(g, z, 1e-4), x, 1e-4)
    raise ValueError(outer)


# ------------------------------------------------------------------ ours
def ours(outer, g, x):
    """outer applied to g at x, where x may be a tuple of arrays (each leaf stacked, or seeded, alike)."""
    each = tr.tree_util.tree_map
    if outer == "jit":
        return tr.jit(g, target="python")(x)
    if outer == "grad":
        return tr.grad(g)(x)
    if outer == "vjp":
        out, vjp_fn = tr.vjp(g, x)
        return vjp_fn(each(lambda leaf: np.ones_like(np.asarray(leaf)), out))[0]
    if outer == "jvp":
        return tr.jvp(g, (x,), (each(np.ones_like, x),))[1]
    if outer == "vmap":
        return tr.vmap(g)(each(lambda leaf: np.stack([leaf, 0.5 * leaf]), x))
    if outer == "pmap":
        return tr.pmap(g)(each(lambda leaf: np.stack([leaf]), x))
    if outer == "jacfwd":
        return tr.jacfwd(g)(x)
    if outer == "jacrev":
        return tr.jacrev(g)(x)
    if outer == "hessian":
        return tr.hessian(g)(x)
    if outer == "linearize":
        _, f_jvp = tr.linearize(g, x)
        return f_jvp(each(np.ones_like, x))
    raise ValueError(outer)


def flat(result, part_ndim):
    """A result of the tuple-argument function as the oracle's of one vector.  Each level of tuples
    splits one axis of the vector's (d output / d argument, as JAX nests them: a tuple of tuples of
    tuples for a Jacobian of the Hessian), its arrays having that axis among their last ones
    (``part_ndim`` dimensions per part): rejoined level by level."""
    depth, first = 0, result
    while isinstance(first, tuple):
        depth, first = depth + 1, first[0]

    def joined(r, level):
        if not isinstance(r, tuple):
            return np.asarray(r)
        return np.concatenate([joined(part, level + 1) for part in r], axis=-(depth - level - 1) * part_ndim - 1)
    return joined(result, 0)


def split(z):
    """The tuple-argument function's argument for the oracle's vector (or batch of them) z."""
    return (z[..., :3], z[..., 3:])


def assert_pair(outer, inner, g, x, function="smooth"):
    """outer applied to g (the inner transform's function of ``function``) at x, against the oracle."""
    want = reference_outer(outer, reference_inner(function, inner), x)
    got = flat(ours(outer, g, split(x)), np.ndim(x)) if function == "tree" else np.asarray(ours(outer, g, x))
    assert got.shape == want.shape, f"{outer}({inner}) of {function}: shape {got.shape}, expected {want.shape}"
    rtol, atol = (1e-4, 1e-5) if outer == "hessian" else (1e-6, 1e-8)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{outer}({inner}) of {function}")


Z = np.concatenate([X, [0.2, 0.1, -0.5]])      # the tuple-argument function's (a, b), as one vector


def point(inner, function="smooth"):
    """Where the pair is evaluated: a batch of points for the inners that map over one."""
    x = Z if function == "tree" else X
    return {"vmap": np.stack([x, 0.5 * x]), "pmap": np.stack([x])}.get(inner, x)


@pytest.mark.parametrize("outer", TRANSFORMS)
@pytest.mark.parametrize("inner", TRANSFORMS)
@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_pair(function, outer, inner):
    g, x = case.INNER[function][inner], point(inner, function)
    if outer == "grad" and inner in NON_SCALAR:
        with pytest.raises(TypeError, match="grad requires a scalar output"):
            ours(outer, g, split(x) if function == "tree" else x)
        return
    assert_pair(outer, inner, g, x, function)


# ------------------------------------------------------------------ transformed functions, transformed again
# outer(inner(f)) with the inner transform's function itself.  A Jacobian computed in Python from
# calls of generated code (jacfwd, jacrev, hessian) is transformed in its code form
# (transformer/derived_code.py), not by adding steps to f's chain, whose steps are not what it computes.
API_INNER = {"jit": lambda fn: tr.jit(fn, target="python"), "grad": tr.grad, "vmap": tr.vmap, "pmap": tr.pmap,
             "jacfwd": tr.jacfwd, "jacrev": tr.jacrev, "hessian": tr.hessian}


@pytest.mark.parametrize("outer", TRANSFORMS)
@pytest.mark.parametrize("inner", list(API_INNER))
@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_pair_of_transformed_functions(function, outer, inner):
    user = case.f_tree if function == "tree" else FUNCTIONS[function][0]     # the user's function, of a tuple
    g, x = API_INNER[inner](user), point(inner, function)
    if outer == "grad" and inner in NON_SCALAR:
        with pytest.raises(TypeError, match="grad requires a scalar output"):
            ours(outer, g, split(x) if function == "tree" else x)
        return
    assert_pair(outer, inner, g, x, function)


# ------------------------------------------------------------------ triples users write
def test_jit_vmap_grad():
    batch = np.stack([X, 0.5 * X, -X])
    np.testing.assert_allclose(tr.jit(tr.vmap(tr.grad(case.f)))(batch), [gradient(x) for x in batch], rtol=1e-12)


def test_vmap_jacrev():
    batch = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(tr.vmap(tr.jacrev(case.INNER["smooth"]["grad"]))(batch), [hessian(x) for x in batch],
                               rtol=1e-12)


def test_grad_of_a_sum_over_vmap():
    batch = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(tr.grad(case.summed_over_rows)(batch), [gradient(x) for x in batch], rtol=1e-12)


def test_jit_hessian():
    np.testing.assert_allclose(tr.jit(tr.hessian(case.f))(X), hessian(X), rtol=1e-12)


def test_pmap_jit_grad():
    np.testing.assert_allclose(tr.pmap(tr.jit(tr.grad(case.f)))(np.stack([X])), [gradient(X)], rtol=1e-12)


def test_vmap_jvp_grad():
    batch = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(tr.vmap(case.inner_jvp_of_grad)(batch), [hessian(x) @ case.V for x in batch],
                               rtol=1e-12)

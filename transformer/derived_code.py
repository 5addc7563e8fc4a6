"""The derived transforms written as code: ``jacfwd``, ``jacrev``, ``hessian`` and ``hvp`` of a
function, and the function ``linearize`` returns, each as a Python function that calls ``tr.jvp``,
``tr.grad`` and ``tr.vmap``.

``derived.py`` computes a Jacobian from Python, one call of generated code per basis vector.
Transformed code cannot call that, and a transform of it would transform ``f`` alone.  Written
as code instead, the Jacobian is an ordinary function of the transforms that compose:

* ``jacfwd``: column ``k`` of the Jacobian in ``x`` is the jvp's tangent output for the ``k``-th
  basis tangent; ``tr.vmap`` runs every basis tangent in one call, the primals unbatched, so
  ``f`` itself is computed once;
* ``jacrev``: row ``i`` is the gradient of ``sum(f(x) * e_i)``; ``tr.vmap`` of that gradient
  over the basis cotangents runs every row in one call;
* ``hessian``: ``jacfwd`` of ``jacrev`` (forward over reverse, as JAX's);
* ``hvp``: ``tr.jvp`` of ``tr.grad``;
* ``linearized``: ``tr.jvp`` at the primals ``linearize`` was given, which the module holds.

So ``tr.jacrev(f)(x)`` inside a jitted loop is inlined as that function is, and
``tr.grad(tr.hessian(f))`` transforms the plain function that calls it (``called``), whose call
inlines the code form.  The text depends on the kind, the number of arguments, the argnums and,
where arguments are tuples, lists or dicts, their structures (``_of_structures``: the Jacobian of
``f`` taking each leaf, regrouped); it is written to the cache directory once, and each function
transformed loads it as a module of its own, in which ``fun`` is that function (as
``checkpoint.py`` writes its rules).  ``transformer show`` prints these lines under the file's
name.  The code form is of one array output: a function returning a tuple is refused
(``derived._code_form``); derived.py's own calls take it, and a Hessian of one is taken per array
(``picked``).
"""
from __future__ import annotations

import inspect
import re

from . import emit
from .errors import TransformError


def written(kind: str, fun, arity: int, argnums: tuple, several: bool, inner: tuple | None = None,
            primals: tuple = (), structures: tuple | None = None):
    """``kind`` (jacfwd, jacrev, hessian, hvp, linearized) of ``fun``, a function of ``arity``
    positional arguments, in ``argnums`` (a tuple of ``several``, else of one), as a Python
    function.  A Hessian's ``inner``: the ``(argnums, several)`` of the jacrev inside its jacfwd;
    linearized's ``primals``: where its jvp is taken (the module's ``p0``, ``p1``...).
    ``structures``: per argument, the TreeDef of the tuple, list or dict it is given (LEAF for an
    array or a number), for a Jacobian in arguments that are structures (``_of_structures``)."""
    name = _name_of(fun)
    stem = f"{kind}_{arity}"
    if structures is not None and any(t.kind != "leaf" for t in structures):
        defs, stem = _of_structures(kind, name, structures, argnums, several, inner), f"{kind}_{arity}_tree"
    else:
        defs = _WRITERS[kind](name, arity, argnums, several, inner)
    text = _HEADER.format(kind=kind, argnums=argnums if several else argnums[0], arity=arity) \
        + "\n\n".join(defs) + "\n"
    bindings = {"fun": fun, **{f"p{k}": primal for k, primal in enumerate(primals)}}
    module = emit.load_written(text, stem, bindings)
    return getattr(module, f"{kind}_{name}")


def called(fun, arity: int):
    """A plain function whose body calls ``fun`` (a Jacobian's function, or the one linearize
    returns): what a transform from Python transforms.  At arrays, the call inlines ``fun``'s code
    form; at tuple, list or dict arguments the transform takes their leaves, and the call inlines
    the code form written for their structures, which only code calling ``fun`` knows."""
    name = _name_of(fun)
    name = "called_fun" if name == "fun" else name      # not the module's name for what it calls
    xs = ", ".join(_params(arity))
    text = (f"# a function of {arity} positional arguments called from code, written by transformer/derived_code.py,\n"
            f"# so that a transform of it takes the code form of fun written for its arguments\n\n\n"
            f"def {name}({xs}):\n"
            f"    return fun({xs})\n")
    module = emit.load_written(text, f"called_{arity}", {"fun": fun})
    return getattr(module, name)


def calling_custom(fun):
    """A plain function with the parameters of ``fun`` (a custom_vjp or custom_jvp function) whose
    body calls it: what a transform from Python transforms, so that it meets the call and applies
    the user's rule there (``fun``'s own code gives only its value).  Defaults are the module's
    ``d0``, ``d1``...; ``*args`` and ``**kwargs`` cannot be passed on to a rule, and are refused."""
    own = inspect.signature(fun.fun)
    params, passed, defaults = [], [], {}
    for p in own.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{fun.fun.__qualname__} takes {'*' if p.kind is p.VAR_POSITIONAL else '**'}{p.name}: "
                            f"a custom_vjp or custom_jvp function transformed from Python takes named parameters")
        if p.kind is p.KEYWORD_ONLY and not any(q.startswith("*") for q in params):
            params.append("*")
        written_default = ""
        if p.default is not p.empty:
            written_default = f"=d{len(defaults)}"
            defaults[f"d{len(defaults)}"] = p.default
        params.append(f"{p.name}{written_default}")
        passed.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
    name = _name_of(fun.fun)
    name = "called_fun" if name == "fun" else name
    text = (f"# a {type(fun).__name__} function called, written by transformer/derived_code.py, so that a\n"
            f"# transform of it applies the function's own rule where fun is called\n\n\n"
            f"def {name}({', '.join(params)}):\n"
            f"    return fun({', '.join(passed)})\n")
    module = emit.load_written(text, f"custom_{len(passed)}", {"fun": fun, **defaults})
    return getattr(module, name)


def called_from_code(base, fun=None):
    """``called`` of ``fun`` (``base`` itself by default), a Transformed of ``base``'s parameters on
    its target: a transform of it at tuple, list or dict arguments takes what ``base``'s own generated
    code cannot (grad(f)'s, vmap(f)'s, a Jacobian's)."""
    from .transformed import Transformed      # transformed.py's chain reaches this module
    return Transformed(called(base if fun is None else fun, len(base.signature.parameters)), (), base.target, (),
                       (), base.tiered)


def picked(fun, arity: int, treedef) -> list:
    """For each array of ``fun``'s output, whose structure is ``treedef`` (a tuple, list or dict),
    ``fun`` with that array alone as its output: a Hessian of a function returning a structure is
    the Hessian of each of its arrays, nested as the output is."""
    name = _name_of(fun)
    xs = ", ".join(_params(arity))
    accesses = _leaf_paths(treedef, "value")
    defs = [f"def leaf{k}_of_{name}({xs}):\n"
            f"    # {access} of fun's output, as the output\n"
            f"    value = fun({xs})\n"
            f"    return {access}" for k, access in enumerate(accesses)]
    text = (f"# each array of the output of a function of {arity} positional arguments, as a function of its own,\n"
            f"# written by transformer/derived_code.py (a Hessian of a function returning {treedef})\n\n\n"
            + "\n\n\n".join(defs) + "\n")
    module = emit.load_written(text, f"picked_{arity}", {"fun": fun})
    return [getattr(module, f"leaf{k}_of_{name}") for k in range(len(accesses))]


def with_aux(fun, arity: int, kind: str, argnums):
    """``tr.kind(fun, argnums, has_aux=True)`` for a ``fun`` returning ``(output, aux)``: the written
    function returns ``kind`` of ``fun`` with its output alone, and ``aux``, as JAX's ``has_aux``
    does.  Written as code, so that transforms of it (``jit``, ``vmap``) read it like any other
    function; the kind and argnums are in its text, which the cache's key holds."""
    name = _name_of(fun)
    xs = ", ".join(_params(arity))
    text = (f"# tr.{kind}(fun, argnums={argnums!r}, has_aux=True) for a function of {arity} positional arguments\n"
            f"# returning (output, aux), written by transformer/derived_code.py\n"
            f"import transformer as tr\n\n\n"
            f"def output_of_{name}({xs}):\n"
            f"    # fun's output without its aux: the function differentiated\n"
            f"    return fun({xs})[0]\n\n\n"
            f"def {kind}_with_aux_of_{name}({xs}):\n"
            f"    return tr.{kind}(output_of_{name}, argnums={argnums!r})({xs}), fun({xs})[1]\n")
    module = emit.load_written(text, f"with_aux_{arity}", {"fun": fun})
    written = getattr(module, f"{kind}_with_aux_of_{name}")
    written.inlined_as_written = True      # transformed code calling it inlines it as a helper (normalize)
    return written


def _name_of(fun) -> str:
    """``fun``'s name as a Python name (a lambda's is ``lambda_fn``)."""
    name = re.sub(r"\W", "", getattr(fun, "__name__", "") or "") or "fun"
    return "lambda_fn" if name == "lambda" else name


_HEADER = """\
# tr.{kind}(fun, argnums={argnums}) for a function of {arity} positional arguments, written as code by
# transformer/derived_code.py, so that transformed code can call it and transforms transform it
import numpy as np

import transformer as tr


"""


def _params(arity: int) -> list[str]:
    return [f"x{k}" for k in range(arity)]


def _basis(size: str, like: str) -> str:
    """The basis vectors of ``like``'s entries, one per row: shape (size,) + like.shape."""
    return f"np.reshape(np.eye({size}), ({size},) + np.shape({like}))"


def _jacfwd(name: str, inner: str, arity: int, argnums: tuple, several: bool, outputs: int | None,
            kind: str = "jacfwd") -> list[str]:
    """``jacfwd`` of ``inner`` (a function of this module returning one array, or a tuple of
    ``outputs``): per argument, vmap of the jvp over the basis tangents."""
    xs = _params(arity)
    unbatched = "(" + "None, " * arity + "0)"
    defs, body, results = [], [], []
    for j in argnums:
        along = ", ".join("a" if k == j else x for k, x in enumerate(xs))
        defs.append(f"def tangent_in_{j}({', '.join(xs)}, t):\n"
                    f"    # the tangent of {inner} for the tangent t of argument {j}\n"
                    f"    return tr.jvp(lambda a: {inner}({along}), (x{j},), (t,))[1]")
        body += [f"    n{j} = np.size(x{j})",
                 f"    # column k of each Jacobian in x{j}: the tangent output for the k-th basis tangent",
                 f"    columns{j} = tr.vmap(tangent_in_{j}, in_axes={unbatched})({', '.join(xs)}, "
                 f"{_basis(f'n{j}', f'x{j}')})"]
        for i in (range(outputs) if outputs is not None else (None,)):
            column = f"columns{j}" if i is None else f"columns{j}[{i}]"
            suffix = f"{j}" if i is None else f"{i}_{j}"
            body.append(f"    jacobian{suffix} = np.reshape(np.moveaxis({column}, 0, -1), "
                        f"np.shape({column})[1:] + np.shape(x{j}))")
    if outputs is None:
        results = [f"jacobian{j}" for j in argnums]
        value = _tuple(results) if several else results[0]
    else:
        per_output = [[f"jacobian{i}_{j}" for j in argnums] for i in range(outputs)]
        value = _tuple([_tuple(row) if several else row[0] for row in per_output])
    main = [f"def {kind}_{name}({', '.join(xs)}):", *body, f"    return {value}"]
    return defs + ["\n".join(main)]


def _jacrev(name: str, arity: int, argnums: tuple, several: bool, kind: str = "jacrev",
            callee: str = "fun") -> list[str]:
    """``jacrev`` of ``callee``: vmap of the gradient of ``sum(callee(...) * cotangent)`` over the
    basis cotangents (the primals unbatched, so the forward sweep runs once)."""
    xs = _params(arity)
    args = ", ".join(xs)
    projected = (f"def projected_{name}({args}, cotangent):\n"
                 f"    # the output's entries weighed by the cotangent: its gradient is one row of the Jacobian\n"
                 f"    return np.sum({callee}({args}) * cotangent)")
    body = [f"def {kind}_{name}({args}):",
            f"    out = {callee}({args})",
            "    m = np.size(out)",
            "    # row i of each Jacobian: the gradient for the i-th basis cotangent",
            f"    rows = tr.vmap(tr.grad(projected_{name}, argnums={tuple(argnums)!r}), "
            f"in_axes=({'None, ' * arity}0))({args}, {_basis('m', 'out')})"]
    results = []
    for k, j in enumerate(argnums):
        body.append(f"    jacobian{j} = np.reshape(rows[{k}], np.shape(out) + np.shape(x{j}))")
        results.append(f"jacobian{j}")
    body.append(f"    return {_tuple(results) if several else results[0]}")
    return [projected, "\n".join(body)]


def _tuple(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _jacfwd_of_fun(name, arity, argnums, several, inner, callee="fun"):
    return _jacfwd(name, callee, arity, argnums, several, None)


def _jacrev_of_fun(name, arity, argnums, several, inner, callee="fun"):
    return _jacrev(name, arity, argnums, several, callee=callee)


def _hessian(name, arity, argnums, several, inner, callee="fun"):
    """``jacfwd(jacrev(fun, *inner), argnums)``: the gradient written as jacrev, then its forward
    Jacobian (``jac[i][j]``: d gradient_i / d argument_j)."""
    rev, rev_several = inner
    gradient = _jacrev(name, arity, rev, rev_several, kind="gradient", callee=callee)
    return gradient + _jacfwd(name, f"gradient_{name}", arity, argnums, several,
                              len(rev) if rev_several else None, kind="hessian")


def _of_structures(kind, name, structures, argnums, several, inner) -> list[str]:
    """``kind`` of ``fun`` whose arguments are tuples, lists or dicts of arrays (``structures``, one
    TreeDef each): the Jacobian of ``flat_<name>``, ``fun`` taking each leaf as an argument of its
    own, regrouped as JAX nests it: per argument in argnums, the argument's structure (a Hessian's
    twice, the gradient's argnums outside)."""
    if kind not in ("jacfwd", "jacrev", "hessian"):
        raise TransformError(f"{kind} of a function given a tuple, list or dict is written as code for arrays "
                             f"and numbers only; pass each array as an argument of its own")
    for treedef in structures:
        _check_arrays_in_tuples_lists_dicts(treedef)
    paths = [_leaf_paths(treedef, f"x{k}") for k, treedef in enumerate(structures)]
    leaves = [f"x{k}_{j}" for k, found in enumerate(paths) for j in range(len(found))]
    leaf_of = {}        # (argument, its leaf) -> position among the flat function's parameters
    for k, found in enumerate(paths):
        for j in range(len(found)):
            leaf_of[k, j] = len(leaf_of)
    rebuilt = [_display(treedef, iter([f"x{k}_{j}" for j in range(len(paths[k]))]))
               for k, treedef in enumerate(structures)]
    flat = (f"def flat_{name}({', '.join(leaves)}):\n"
            f"    # fun with each array of its tuple, list or dict arguments given as an argument of its own\n"
            f"    return fun({', '.join(rebuilt)})")

    def flat_argnums(user):
        return tuple(leaf_of[a, j] for a in user for j in range(len(paths[a])))

    def regrouped(user, user_several, entry):
        """The flat Jacobians of ``user``'s leaves (``entry(position)``), as each argument's structure."""
        positions = iter(range(sum(len(paths[a]) for a in user)))
        groups = [_display(structures[a], (entry(next(positions)) for _ in paths[a])) for a in user]
        return _tuple(groups) if user_several else groups[0]

    flat_inner = None
    if kind == "hessian":
        rev, rev_several = inner
        flat_inner = (flat_argnums(rev), True)
        value = regrouped(rev, rev_several, lambda i: regrouped(argnums, several, lambda j: f"leaves[{i}][{j}]"))
    else:
        value = regrouped(argnums, several, lambda i: f"leaves[{i}]")
    flat_name = f"flat_{name}"
    defs = _WRITERS[kind](flat_name, len(leaves), flat_argnums(argnums), True, flat_inner, callee=flat_name)
    xs = _params(len(structures))
    main = (f"def {kind}_{name}({', '.join(xs)}):\n"
            f"    # the Jacobians in each array of the arguments, regrouped as the arguments are\n"
            f"    leaves = {kind}_{flat_name}({', '.join(p for found in paths for p in found)})\n"
            f"    return {value}")
    return [flat, *defs, main]


def _check_arrays_in_tuples_lists_dicts(treedef):
    if treedef.kind in ("namedtuple", "node"):
        raise TransformError(f"a Jacobian inside transformed code of a {treedef.node_type.__qualname__} "
                             f"argument is written for tuples, lists and dicts of arrays; pass a tuple of its "
                             f"arrays")
    for child in treedef.children:
        _check_arrays_in_tuples_lists_dicts(child)


def _leaf_paths(treedef, access: str) -> list[str]:
    """How each leaf of an argument of ``treedef`` is read from ``access``, in flatten order."""
    if treedef.kind == "leaf":
        return [access]
    keys = treedef.keys if treedef.kind == "dict" else range(len(treedef.children))
    return [path for key, child in zip(keys, treedef.children) for path in _leaf_paths(child, f"{access}[{key!r}]")]


def _display(treedef, leaves) -> str:
    """``treedef`` written as a display of the expressions ``leaves`` gives, in flatten order."""
    if treedef.kind == "leaf":
        return next(leaves)
    if treedef.kind == "none":
        return "None"
    inner = [_display(child, leaves) for child in treedef.children]
    if treedef.kind == "dict":
        return "{" + ", ".join(f"{key!r}: {v}" for key, v in zip(treedef.keys, inner)) + "}"
    if treedef.kind == "list":
        return "[" + ", ".join(inner) + "]"
    return _tuple(inner)


def _hvp(name, arity, argnums, several, inner, callee="fun"):
    """``jvp(grad(fun), x, v)``: the Hessian of argument ``argnums[0]`` times ``v``."""
    xs = _params(arity)
    j = argnums[0]
    along = ", ".join("a" if k == j else x for k, x in enumerate(xs))
    return [f"def hvp_{name}({', '.join(xs)}, v):\n"
            f"    # forward over reverse: the gradient's tangent along v\n"
            f"    return tr.jvp(lambda a: tr.grad(fun, argnums={j})({along}), (x{j},), (v,))[1]"]


def _linearized(name, arity, argnums, several, inner, callee="fun"):
    """``tr.jvp(fun, primals, tangents)[1]``, the primals the module's ``p0``, ``p1``..."""
    ts = ", ".join(f"t{k}" for k in range(arity))
    ps = ", ".join(f"p{k}" for k in range(arity))
    return [f"def linearized_{name}({ts}):\n"
            f"    # the jvp at the primals linearize was given ({ps}), along the tangents\n"
            f"    return tr.jvp(fun, {_tuple(ps.split(', '))}, {_tuple(ts.split(', '))})[1]"]


_WRITERS = {"jacfwd": _jacfwd_of_fun, "jacrev": _jacrev_of_fun, "hessian": _hessian, "hvp": _hvp,
            "linearized": _linearized}

"""Staging: from a user function and a chain of transforms to a callable.

    user function --normalize--> core form --transform*--> core form
        --backend.source--> module text --emit--> file --import--> backend.finish

Each stage is cached on disk under a key computed without libcst
(``cache.fingerprint``), so a second run of a program that transforms the
same function reads the generated module straight from the cache.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

import libcst as cst

from . import backends, cache, custom, dataflow, emit, structure
from .errors import Location, TransformError
from . import core_form as cf
from .normalize import normalize
from .transforms import TRANSFORMS
from .transforms.pmap import axis_of, collectives
from .transforms.shapes import SCALAR, Shapes


@dataclass(frozen=True)
class Step:
    """One source transform in a chain, e.g. ``grad(argnums=(0,))``."""

    name: str
    options: tuple = ()          # sorted (key, value) pairs

    def __str__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.options)
        return f"{self.name}({inner})"


def describe(steps) -> str:
    return " . ".join(str(s) for s in steps) or "normalize"


def entry_name(base_name: str, steps) -> str:
    name = base_name
    for step in steps:
        name = f"{step.name}_{name}"
    return name


def make_core(fn, steps, static: dict | None = None, structures: dict | None = None,
              backend=None, inlined: bool = False, ranks: dict | None = None) -> cf.CoreFunction:
    return make_cores(fn, steps, static, structures, [backend], inlined, ranks)[0]


def make_cores(fn, steps, static: dict | None, structures: dict | None, for_backends, inlined=False,
               ranks: dict | None = None) -> list:
    """The core form of ``fn`` under ``steps`` for each backend of ``for_backends``: the transforms
    run once for all, but for the last step of a backend that compiles it itself.  ``inlined``: the
    core is inlined into transformed code, whose own transforms may still differentiate it, so a
    custom_vjp's marker stays."""
    core, adapted = _checked_core(fn, steps, static, structures, ranks, inlined)
    if ranks and not inlined:       # (the marker is named by the steps the caller gives)
        _note_ranks_passed(fn, steps, static, structures, ranks)
    steps = adapted
    core = copy_written_arguments(core)
    # once no derivative is left to take, a custom rule's marker is its value (vmap and jit need no rule)
    last_derivative = max((k for k, step in enumerate(steps) if step.name in DIFFERENTIATING_STEPS), default=-1)
    if last_derivative < 0 and not inlined:
        core = custom_rules_as_values(core)
    for k, step in enumerate(steps[:-1]):
        refuse_reverse_over_tape_writes(core, steps, k)
        core = apply_step(core, step)
        if k == last_derivative and not inlined:
            core = custom_rules_as_values(core)
    if steps:
        refuse_reverse_over_tape_writes(core, steps, len(steps) - 1)
    name = cf.name(entry_name(base_name_of(fn), steps))

    def finished(last):
        if static:
            last = specialize(last, static)
        last.node = last.node.with_changes(name=name)
        return last

    cores, shared = [], None
    for backend in for_backends:
        # a backend may compile the outermost step itself (cuda: vmap as one thread per example)
        taken = steps and hasattr(backend, "take_last_step") and backend.take_last_step(core, steps[-1])
        if taken:
            cores.append(finished(taken))
            continue
        if shared is None:
            shared = finished(apply_step(core, steps[-1]) if steps else core)
        cores.append(shared)
    return cores


# steps whose generated function returns what the function returns, its leaves only batched or split
# across devices: the caller rebuilds a list, dict or named tuple the function built and returned
KEEP_RESULT_STRUCTURE = {"vmap", "pmap", "pmap_shard"}


def result_structure(fn, steps, static: dict | None = None, structures: dict | None = None):
    """The structure Transformed rebuilds the generated code's tuples as (a list, dict or named tuple
    ``fn`` builds and returns), or None.  Read from the normalized function, so a module loaded from
    the cache has it too."""
    if any(step.name not in KEEP_RESULT_STRUCTURE for step in steps):
        return None
    return normalize(fn, static, structures).result_structure


def copy_written_arguments(core: cf.CoreFunction) -> cf.CoreFunction:
    """An argument the function writes into is copied on entry: no transform changes the caller's
    array (JAX's arrays are values), and a derivative is that of the function of the value passed.
    Arguments only read are not copied."""
    written = dataflow.parameters_written_in_place(core.node)
    if not written:
        return core
    copies = [cf.assign(p, cf.call("np.copy", [cst.Name(p)])) for p in written]
    copies[0] = cf.with_comment(copies[0], "# written in place below: a copy, so the caller's array stays as it was")
    core.node = core.node.with_changes(body=cf.block(copies + list(core.node.body.body)))
    return core


REVERSE_STEPS = {"grad", "value_and_grad", "vjp"}
DIFFERENTIATING_STEPS = REVERSE_STEPS | {"jvp"}
# steps whose function sees one example of what the call gives (a row of a batched argument)
BATCHING_STEPS = {"vmap", "pmap", "pmap_shard", "columns"}


def _user_line(core: cf.CoreFunction, stmt) -> Location | None:
    """The user's file and line a statement of ``core`` came from (its origin comment)."""
    origin = cf.origins(core.node.body.body).get(id(stmt))
    return Location(core.sources.get(origin[0], origin[0]), origin[1]) if origin else None


def refuse_writes_through_views(core: cf.CoreFunction):
    """Derivatives follow each variable's own writes; a write through a view (``head = x[:2]``,
    ``head[1] = ...``) changes another variable unseen, which would give a wrong derivative."""
    found = dataflow.writes_through_views_in_order(core.node)
    if found:
        raise TransformError("a write into a view of another array (a slice, reshape or alias of it) "
                             "cannot be differentiated", _user_line(core, found[0]),
                             "write into the array itself (x[1] = ...), or copy the view first "
                             "(head = x[:2].copy())")


def refuse_aliases_read_after_augmented_assignments(core: cf.CoreFunction, ranks: dict | None = None):
    """``y += v`` is ``y = y + v`` in core form, a new array, where NumPy changes y in place: a name
    that shares y's memory (``z = y``, ``z = y[:]``, the caller's array a helper's argument came
    from) would show the change in NumPy and not here, so reading one after it is refused."""
    if not core.augmented:
        return
    found = dataflow.aliases_read_after_augmented_assignments(core.node, core.augmented, *_known_kinds(core, ranks))
    if found:
        raise TransformError("an array that shares memory with one changed by an augmented assignment (y += v, "
                             "which NumPy does in place) is read here; transformed code gives y a new array, "
                             "so this read would not see the change", _user_line(core, found[0]),
                             "write the change into the array (y[...] += v) to change it in place, or copy the "
                             "other array first (z = y.copy()) to keep its values")


def refuse_unbound_collectives(core: cf.CoreFunction, steps):
    """A collective (``lax.psum(x, "i")``) with no vmap or pmap among the steps to bind its axis, as
    JAX's NameError says, at the user's line (numba's error named lax itself)."""
    if any(step.name in BATCHING_STEPS for step in steps):
        return
    for prim, call, where in collectives(core, core.node.body.body):
        named = axis_of(call)
        raise TransformError(f"unbound axis name: {named!r} (lax.{prim.name} outside any vmap or pmap)", where,
                             f"call it inside tr.vmap or tr.pmap with axis_name={named!r}")


def refuse_copies_read_after_writes(core: cf.CoreFunction):
    """np.diagonal returns a view of its array in NumPy, whose definition here computes a copy: a
    write into the array after it would show in NumPy's and not in ours, under every transform."""
    if not core.copied_views:
        return
    found = dataflow.copies_read_after_writes(core.node, core.copied_views)
    if found:
        raise TransformError("this reads a result NumPy gives as a view of its array (np.diagonal, np.diag of a "
                             "matrix, np.rollaxis) after a write into that array, which NumPy's view would show; "
                             "transformer computes such a result as a copy", _user_line(core, found[0]),
                             "copy it where it is taken (d = np.diagonal(y).copy()) to keep its values, or take it "
                             "again after the write")


def _known_kinds(core: cf.CoreFunction, ranks: dict | None) -> tuple[set[str], set[str]]:
    """The variables shape analysis knows hold numbers (an entry of a 2-d array: ``v[0, 1]``), and
    those it knows hold arrays (a row of one: ``v[0]``, a view), from the arguments' ``ranks``
    (their numbers of dimensions) where given."""
    shapes = Shapes(core, [(ranks or {}).get(p) for p in core.params])
    kinds = {name: shapes.of_name(name) for name in shapes.tokens}
    numbers = {name for name, kind in kinds.items() if kind == SCALAR}
    arrays = {name for name, kind in kinds.items() if isinstance(kind[0], int) and kind[0] > 0}
    return numbers, arrays


def _checked_core(fn, steps, static, structures, ranks, inlined=False):
    """The normalized core (its structured parameters flattened, and the steps adapted to them),
    after every refusal of what the transforms cannot follow; ``ranks``: the call's
    (Transformed.ranks), where known."""
    core = normalize(fn, static, structures)
    refuse_aliases_read_after_augmented_assignments(core, ranks)
    refuse_copies_read_after_writes(core)
    if not inlined:
        refuse_unbound_collectives(core, steps)
    if structures:
        user_params = core.params
        core = structure.flatten_parameters(core, structures)
        steps = structure.adapt_steps(steps, user_params, structures)
    if any(step.name in DIFFERENTIATING_STEPS for step in steps):
        refuse_writes_through_views(core)
    if any(step.name in REVERSE_STEPS for step in steps):
        refuse_views_read_after_writes(core, ranks)
    return core, steps


def refuse_for_ranks(fn, steps, static: dict | None, structures: dict | None, ranks: dict):
    """The refusals above that the arguments' ranks decide (``Transformed.ranks``): ``r = y[0]`` is a
    row of a 2-d ``y``, a view, and an entry of a 1-d one, a number.  The generated code is the same
    for any ranks, so a module built for other ranks is reused; these checks run for each new ranks,
    once: a marker beside the module says they passed, so a warm start reads no source."""
    passed = _ranks_passed(fn, steps, static, structures, ranks)
    if passed.exists() or not any(emit.is_intact(module_path(fn, steps, target, static, structures)[0])
                                  for target in ("python", "cpu")):
        return          # checked already, or no module yet: its build checks with these ranks
    _checked_core(fn, steps, static, structures, ranks)
    _note_ranks_passed(fn, steps, static, structures, ranks)


def _note_ranks_passed(fn, steps, static, structures, ranks) -> None:
    try:
        passed = _ranks_passed(fn, steps, static, structures, ranks)
        passed.parent.mkdir(parents=True, exist_ok=True)
        passed.write_text(f"{describe(steps)} | ranks={sorted(ranks.items())!r}\n")
    except OSError:     # a cache that cannot be written: the checks run again next time
        pass


def _ranks_passed(fn, steps, static, structures, ranks):
    """The marker that says the refusals passed for these ranks, beside the function's modules."""
    path, _ = module_path(fn, steps, "python", static, structures)
    tag = hashlib.sha256(repr(sorted(ranks.items())).encode()).hexdigest()[:12]
    return path.with_name(f"{path.stem}.ranks-{tag}.passed")


def refuse_views_read_after_writes(core: cf.CoreFunction, ranks: dict | None = None):
    """Reverse mode gives each variable a cotangent of its own; a view read after a write into its
    array (``prev = y[:]``, ``y[1] = 0.0``, then ``prev[1]``) reads memory the write changed, whose
    derivative would go to ``prev``'s cotangent, which the write's adjoint never sees."""
    found = dataflow.views_read_after_writes(core.node, *_known_kinds(core, ranks))
    if found:
        raise TransformError("a view of an array (a slice, reshape or alias of it) is read here after a write "
                             "into that array changed it, which reverse mode cannot differentiate", _user_line(core, found[0]),
                             "copy the view where it is taken (prev = y[:].copy()) to keep the values it had, "
                             "or index the array itself after the write")


def refuse_reverse_over_tape_writes(core: cf.CoreFunction, steps, k: int):
    """Reverse mode over reverse mode's own code (``steps[k]`` a reverse step after another): that
    code tapes an array and may then write into it in place (an array bound afresh in each pass of
    a loop, then written), trusting its backward sweep to put back what each write overwrote before
    it reads the tape.  A second reverse sweep sees the tape as a value that never changes, which
    would give a wrong number; forward mode over it (``tr.jacfwd(tr.grad(f))``) follows the writes."""
    if steps[k].name not in REVERSE_STEPS or not any(step.name in REVERSE_STEPS for step in steps[:k]):
        return
    found = dataflow.writes_through_views(core.node)
    if found:
        raise TransformError("reverse mode over a derivative whose code writes into an array it has taped (an "
                             "array bound in a loop, then written in place) is not supported", _user_line(core, found[0]),
                             "take the outer derivative in forward mode (tr.jacfwd(tr.grad(f)), tr.hessian(f), "
                             "tr.jvp of tr.grad)")


def custom_rules_as_values(core: cf.CoreFunction) -> cf.CoreFunction:
    """``y = rt.custom_vjp_call(out, ...)`` and ``y = rt.custom_jvp_call(out, ...)`` made ``y = out``.
    A marker only tells a later derivative to apply the user's rule; with no derivative left to
    take, batching or compiling the function needs only the value."""
    core.node = core.node.visit(_CustomRulesAsValues())
    return core


class _CustomRulesAsValues(cst.CSTTransformer):
    """Each custom rule's marker replaced by its ``out``."""

    def leave_Call(self, original, updated):
        prim = cf.primitive_of(updated)
        return updated.args[0].value if prim is not None and prim.name in custom.MARKERS else updated


def apply_step(core: cf.CoreFunction, step: Step) -> cf.CoreFunction:
    """``core`` under one source transform."""
    if step.name in REVERSE_STEPS:
        core = unshadow_rebindings(core)
    return TRANSFORMS[step.name](core, **dict(step.options))


def unshadow_rebindings(core: cf.CoreFunction) -> cf.CoreFunction:
    """A variable bound again at the top level of the body gets a name of its own from there on.

    vmap rebinds every batched argument to its batch-last copy (``x = np.copy(...)``), and
    reverse mode zeroes the cotangent of a variable's earlier binding in the shape of its later
    one: here the batch-last shape, which the batch-first gradient does not add to.  Under a
    name of its own the copy is a variable like any other.  A top-level statement runs once,
    after all before it, so every later use (in loops and branches too) means it or a later one.
    """
    body = list(core.node.body.body)
    bound = set(core.params)
    for k, stmt in enumerate(body):
        name = _bound_name(stmt)
        if name in bound:
            fresh = core.scope.claim(name)
            rebound = stmt.body[0].with_changes(targets=[cst.AssignTarget(cst.Name(fresh))])
            body[k] = stmt.with_changes(body=[rebound])
            body[k + 1:] = [dataflow.renamed(later, {name: fresh}) for later in body[k + 1:]]
            name = fresh
        bound |= {name} if name else _assigned_within(stmt)
    core.node = core.node.with_changes(body=core.node.body.with_changes(body=body))
    return core


def _bound_name(stmt) -> str | None:
    """The variable a top-level ``name = value`` statement binds; None for any other statement."""
    if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(stmt.body[0], cst.Assign):
        return None
    target = stmt.body[0].targets[0].target
    return target.value if isinstance(target, cst.Name) else None


def _assigned_within(stmt) -> set:
    """The variables a loop or branch may bind (loop targets included), for a statement that is one."""
    # every name in it, reads too: renaming a later top-level binding is right either way
    return set() if isinstance(stmt, cst.SimpleStatementLine) else dataflow.all_names(stmt)


def base_name_of(fn) -> str:
    name = getattr(fn, "__name__", "f")
    return "lambda_fn" if name == "<lambda>" else name


def specialize(core: cf.CoreFunction, static: dict) -> cf.CoreFunction:
    """Bake static arguments in: each becomes a module constant numba sees as fixed."""
    params = [p for p in core.node.params.params if p.name.value not in static]
    core.node = core.node.with_changes(params=core.node.params.with_changes(params=params))
    for name, value in static.items():
        core.constants[name] = value
    return core


_build_lock = threading.Lock()
_finished: dict = {}   # (module path, target) -> the finished callable, shared by every caller


def module_path(fn, steps, target: str, static: dict | None, structures: dict | None = None):
    """Where the generated module for this build lives, and the chain it records."""
    chain = f"{describe(steps)} | target={target} | static={sorted((static or {}).items())!r}"
    if structures:
        chain += f" | structures={sorted((k, str(v)) for k, v in structures.items())!r}"
    key = cache.fingerprint(fn, chain)
    return cache.cache_dir() / f"{entry_name(base_name_of(fn), steps)}-{key[:24]}.py", chain


def build(fn, steps, target: str, static: dict | None = None, structures: dict | None = None,
          ranks: dict | None = None):
    """The compiled (or plain Python) function for ``fn`` under ``steps`` on ``target``."""
    backend = backends.get(target)
    entry = entry_name(base_name_of(fn), steps)
    path, chain = module_path(fn, steps, target, static, structures)
    with _build_lock:                       # threads of this process, one at a time
        if (path, target) in _finished and emit.is_intact(path):
            return _finished[path, target]
        with cache.file_lock(path.parent):          # other processes sharing the cache directory
            _write_if_missing(fn, steps, target, static, structures, ranks, backend, path, chain)
            module = emit.load(path)
        # one callable per module: numba compiles it once however many threads call it first
        finished = backend.finish(getattr(module, entry), path)
        if getattr(finished, "python_twin", "") is None:      # (backends/cpu.py) built when first needed
            finished.python_twin = lambda: build(fn, steps, "python", static, structures)
        _finished[path, target] = finished
        return finished


def write_modules(fn, steps, targets, static: dict | None = None, structures: dict | None = None,
                  ranks: dict | None = None) -> dict:
    """Each target's generated module file and entry function, written if the cache lacks it (the
    transforms run once for all targets); nothing is imported or compiled.  A tiered build writes
    its python and cpu modules so, and hands the cpu file to a background compile."""
    entry = entry_name(base_name_of(fn), steps)
    paths = {target: module_path(fn, steps, target, static, structures) for target in targets}
    with _build_lock, cache.file_lock(paths[targets[0]][0].parent):
        missing = [t for t in targets if not emit.is_intact(paths[t][0])]
        if missing:
            chosen = [backends.get(t) for t in missing]
            # each module's text is made before the next backend lowers the (possibly shared) core
            for target, backend, core in zip(missing, chosen, make_cores(fn, steps, static, structures, chosen, ranks=ranks)):
                _write(fn, target, backend, core, *paths[target])
    return {target: (paths[target][0], entry) for target in targets}


def _write_if_missing(fn, steps, target, static, structures, ranks, backend, path, chain) -> None:
    if not emit.is_intact(path):
        _write(fn, target, backend, make_core(fn, steps, static, structures, backend, ranks=ranks), path, chain)


def _write(fn, target, backend, core, path, chain) -> None:
    code, preamble = backend.source(core)
    title = f"{chain.split(' | ')[0]} of {getattr(fn, '__qualname__', core.name)} for target {target}"
    text = emit.module_text(code, title=title, sources=core.sources, constants=core.constants, preamble=preamble)
    emit.write(path, text, emit.array_constants(core.constants))


def generated_source(fn, steps, target: str, static: dict | None = None, structures: dict | None = None) -> str:
    """The text of the generated module (building it if needed)."""
    build(fn, steps, target, static, structures)
    return module_path(fn, steps, target, static, structures)[0].read_text()

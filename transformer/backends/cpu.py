"""The CPU backend: numba ``njit`` of the generated source.

Calls that numba's NumPy support lacks (``np.max(x, axis=-1, keepdims=True)``
and friends) are rewritten first into helpers from ``numba_lowering``, and
exp and tanh into ``numba_vecmath``'s vectorised ones.  A numba typing error
is re-raised naming the user's file and line.

Writing a module (``source``) imports no numba, which takes a tenth of a second
or more to load: a tiered first call (transformer/tiers.py) writes the cpu module
and runs the python tier without it.  ``finish`` loads numba, and with it the
overloads of the helpers generated code calls.
"""
from __future__ import annotations

import functools
import re
import warnings

import libcst as cst

from .. import core_form as cf
from ..emit import MODULE_PREAMBLE, told_at_user_line, user_location_in
from ..errors import CompileError, ConcreteValueError, TransformError, concrete_value_hint
from . import numba_fusion, numba_loops, numba_lowering, numba_parallel, numba_small_arrays, numba_tapes, per_example

NAME = "cpu"
PREAMBLE = (MODULE_PREAMBLE + "from transformer.backends import numba_lowering as nl\n"
            + "from transformer.backends import numba_vecmath as vm   # exp, expm1, tanh, sin, cos, log as SIMD code, not libm calls\n")


def take_last_step(core, step):
    """vmap as the outermost step of per-example code with loops: a compiled loop over examples."""
    if step.name == "vmap" and per_example.loop_wins_on_cpu(core, dict(step.options)):
        return per_example.take_vmap(core, dict(step.options))
    return None


def source(core):
    if isinstance(core, per_example.PerExampleVmap):
        from . import cpu_lanes, cpu_vmap        # numba code of their own (helpers the driver calls)
        one_example = core.scope.claim(f"{core.name}_one_example")
        example_core = cpu_vmap.one_example_core(core, one_example)
        code, preamble = _lowered(example_core)
        code = "@numba.njit(cache=True)\n" + code
        # the same code in SIMD lanes, where it is arithmetic and while loops (cpu_lanes.py)
        lowered = numba_lowering.lower_tapes(numba_lowering.lower(example_core), layouts=False)
        lanes = cpu_lanes.plan(lowered, core.in_axes)
        in_lanes = None
        if lanes is not None:
            in_lanes = core.scope.claim(f"{core.name}_in_lanes")
            code += ('\n\n@numba.njit(cache=True, error_model="numpy")\n'
                     + cpu_lanes.lanes_function(lowered, lanes, in_lanes))
            preamble += cpu_lanes.PREAMBLE
        return code + "\n\n" + cpu_vmap.driver(core, one_example, in_lanes), preamble + cpu_vmap.PREAMBLE
    return _lowered(core, check_numbers=True)


def _lowered(core, check_numbers=False):
    """The cpu module's function; where its small arrays as numbers rest on arguments being numbers
    (``check_numbers``: Python calls it, and can take the other), the function kept with its
    arrays follows it (numba_small_arrays.with_arrays_name)."""
    small, checks_numbers = numba_small_arrays.scalarize(core, check_numbers)   # arrays of a few elements -> a number each
    code, preamble = _compiled_form(small)
    if checks_numbers:
        name = numba_small_arrays.with_arrays_name(core.name)
        with_arrays = cf.CoreFunction(**{**vars(core), "node": core.node.with_changes(name=cst.Name(name))})
        code += "\n\n" + _compiled_form(with_arrays)[0]
    return code, preamble


def _compiled_form(core):
    core = numba_lowering.lower_tapes(numba_lowering.lower(core))   # rt.* helpers: typed tapes; overloads do the rest
    core, parallel_import = numba_parallel.lower(core)       # vmap's per-example loops -> prange
    core = numba_loops.split_accumulating_loops(core)        # a gradient's sum and adjoint in loops of their own
    core = numba_fusion.fuse_rows(core)                      # a softmax's five passes -> one loop over rows
    core = numba_fusion.fuse(core)                           # one statement per elementwise expression
    core = numba_fusion.fuse_sums_of_squares(core)           # np.sum(x ** 2, axis): no array of squares
    core = numba_fusion.fuse_added_cotangents(core)          # x_bar + a max's cotangent, in its own pass
    core = numba_fusion.fuse_summed_products(core)           # unbroadcast(a * b, w): no array of products
    core = numba_lowering.vector_math(core)                  # np.exp -> vm.exp: vectorised, still fused
    core = numba_lowering.slice_writes(core)                 # x[1:] = v -> a loop, where numba's write is slow
    core = numba_tapes.merge_tapes(core)                     # tapes pushed together: one tape of tuples
    return core.code(), PREAMBLE + parallel_import


_QUIET_DIRECTORIES: set = set()


def _quiet_performance_advice(directory) -> None:
    """numba's advice about layouts in generated code (np.dot on a transposed
    view, say) concerns code the user did not write and cannot change."""
    if directory not in _QUIET_DIRECTORIES:
        _QUIET_DIRECTORIES.add(directory)
        # warnings name a generated file's "module" by its path without ".py"
        from numba.core.errors import NumbaPerformanceWarning
        warnings.filterwarnings("ignore", category=NumbaPerformanceWarning,
                                module=re.escape(str(directory)))


def load_numba():
    """numba, with the overloads of every helper generated cpu code calls (``rt.*`` and ``nl.*``
    helpers, vectorised math, indexing, special functions and tr.random)."""
    import numba
    from . import cpu_vmap, heap, numba_indexing, numba_random, numba_runtime, numba_special, numba_vecmath  # noqa: F401
    from . import numba_promotion
    numba_lowering.load_helpers()
    numba_promotion.install()           # NumPy's dtype for an int array meeting float32 (numba_promotion.py)
    heap.keep_freed_memory()            # compiled code's large temporaries reuse pages (heap.py)
    return numba


def finish(function, path):
    numba = load_numba()
    from numba.core import errors as numba_errors
    from .numba_promotion import COMPILER
    _quiet_performance_advice(path.parent)
    dispatcher = numba.njit(cache=True, parallel=numba_parallel.is_parallel(function),
                            pipeline_class=COMPILER)(function)
    with_arrays = function.__globals__.get(numba_small_arrays.with_arrays_name(function.__name__))
    if with_arrays is not None:
        with_arrays = numba.njit(cache=True, parallel=numba_parallel.is_parallel(with_arrays),
                                 pipeline_class=COMPILER)(with_arrays)
    running = [dispatcher]

    @functools.wraps(function)
    def compiled(*args):
        try:
            result = running[0](*args)
            return _numpy_scalars(running[0], args, result) if isinstance(result, (float, complex, tuple)) else result
        except (numba_errors.TypingError, numba_errors.LoweringError, numba_errors.UnsupportedError) as err:
            if running[0] is dispatcher and with_arrays is not None and _not_a_number(err):
                running[0] = with_arrays         # an argument it needs as a number is not one: from now on
                return compiled(*args)
            raise _user_error(err, str(path)) from None
        except SystemError as err:
            # an exception raised inside a prange loop reaches Python wrapped in a SystemError
            if isinstance(err.__cause__, Exception):
                raise err.__cause__ from None
            raise
        except (TypeError, ValueError) as err:
            if concrete_value_hint(str(err)) is None:
                raise
            # compiled code raises NumPy's message with no line: run the call as Python to find it
            as_python = compiled.python_twin or (lambda: function)
            raise _found_by_python(as_python, args) or err from None

    def compile_for(signature):
        """Compile for ``signature`` ahead of a call (background_compile.py)."""
        try:
            dispatcher.compile(signature)
        except numba_errors.TypingError as err:
            if with_arrays is None or not _not_a_number(err):
                raise
            with_arrays.compile(signature)

    compiled.dispatcher = dispatcher
    compiled.compile_for = compile_for
    # the same build for the python target, made on first use (staging.build sets it): it says at
    # which line a run-time error of the compiled code was raised.  Without it, this module's own
    # functions run as Python (numba_lowering.py), which finds the line unless vmap's lanes call
    # compiled functions of their own.
    compiled.python_twin = None
    return compiled


def _found_by_python(as_python, args) -> TransformError | None:
    """The error that the call as Python (``as_python()`` makes it) raises for ``args``, told at the
    user's line, where it is a number or truth value asked of an array (the compiled code's error,
    raised again by NumPy)."""
    try:
        as_python()(*args)
    except Exception as err:       # noqa: BLE001  (any other failure: the compiled code's error stands)
        told = told_at_user_line(err)
        return told if isinstance(told, ConcreteValueError) else None
    return None


def _not_a_number(err) -> bool:
    return numba_small_arrays.NOT_A_NUMBER in str(err)


def _numpy_scalars(dispatcher, args, result):
    """numba returns a float32 or float64 scalar as a Python float, where NumPy (and the python
    target) give np.float32 / np.float64: the result's scalars get the type numba typed them as."""
    overloads = dispatcher.overloads
    if len(overloads) == 1:
        compiled = next(iter(overloads.values()))
    else:
        compiled = overloads.get(tuple(dispatcher.typeof_pyval(a) for a in args))
    return result if compiled is None else _as_numpy(result, compiled.signature.return_type)


def _as_numpy(value, numba_type):
    import numba
    if isinstance(value, (float, complex)) and isinstance(numba_type, (numba.types.Float, numba.types.Complex)):
        return numba.np.numpy_support.as_dtype(numba_type).type(value)
    if isinstance(value, tuple) and isinstance(numba_type, numba.types.BaseTuple):
        return tuple(_as_numpy(v, t) for v, t in zip(value, numba_type.types))
    return value


def _user_error(err, generated_file: str) -> CompileError:
    message = re.sub(r"\x1b\[[0-9;]*m", "", str(err))
    location = user_location_in(message, generated_file)
    # numba's first line names its pipeline stage; the next says what failed
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    reasons = [line for line in lines if not line.startswith("Failed in ")] or lines or [message]
    summary = reasons[0]
    if summary.endswith(":") and len(reasons) > 1 and reasons[1].startswith(">>>"):
        summary = f"{summary} {reasons[1][3:].strip()}"
    # a lowering helper's overload says why it refused (e.g. squeeze without axis=)
    specific = re.search(r"raised a specific error:\s*TypingError: (.+)", message)
    if specific:
        summary = f"{summary}: {specific.group(1).strip()}"
    see_code = f"see `transformer show` for the generated code ({generated_file})"
    concrete = concrete_value_hint(summary)
    if concrete:
        return ConcreteValueError(f"numba cannot compile this line: {summary}", location, f"{concrete}; {see_code}")
    return CompileError(f"numba cannot compile this line: {summary}", location, see_code)

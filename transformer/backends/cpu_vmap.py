"""vmap on the CPU target for per-example code with loops: a compiled loop over the examples.

Batched, a data-dependent ``while`` steps the whole batch under a mask until
the slowest example is done, making a temporary array per operation and step.
Compiled, the code as the user wrote it is already scalar machine code; so
when ``vmap`` is the outermost step of a chain compiled for the CPU and the
function is per-example scalar code with loops (``per_example.py`` decides),
the generated module holds the un-batched function, compiled by numba, and a
driver that calls it once per example::

    @numba.njit(cache=True)
    def vmap_f_one_example(x0):          # the user's code, lowered for numba
        ...

    def vmap_f(x0):
        n_examples = len(x0)
        first = vmap_f_one_example(x0[0])            # example 0 fixes the results' dtypes
        result0 = results_like(first, n_examples)
        result0[0] = first
        done = np.zeros(n_examples, np.bool_)
        for example in prange(1, n_examples):
            result0[example] = vmap_f_one_example(x0[example])
            done[example] = True
        for example in range(1, n_examples):     # what a prange thread raised is lost:
            if not done[example]:                # run again here, where it reaches the caller
                result0[example] = vmap_f_one_example(x0[example])
        return result0

The driver is compiled too (``cpu.finish``, with ``parallel=True`` because of
its ``prange``), so the loop costs no Python and runs on every core; nothing
else in the driver is array code for numba's parallel pipeline to rewrite.

Where the code is arithmetic and ``while`` loops, ``cpu_lanes`` writes it a
second time for a group of examples at once, and the driver first asks
whether every argument holds one scalar per example (``x0.ndim == 1``, which
numba knows when it compiles the driver and so keeps one branch): then the
examples go to that function in groups, the groups spread over the cores.
"""
from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import core_form as cf
from . import cpu_lanes, per_example

PREAMBLE = "import numba\nfrom numba import prange\nfrom transformer.backends.cpu_vmap import results_like\n"


def driver(core: per_example.PerExampleVmap, one_example: str, in_lanes: str | None = None) -> str:
    """Source of the function named ``core.name`` that runs ``one_example`` on every example
    (or, with ``in_lanes``, that function of ``cpu_lanes`` on groups of them, where it can)."""
    scope = core.scope
    params = core.params
    batched = [p for p, axis in zip(params, core.in_axes) if axis == 0]
    arity = per_example.return_arity(core.node.body.body)
    example, n_examples, first, item = (scope.claim(n) for n in ("example", "n_examples", "first", "item"))
    results = [scope.claim(f"result{k}") for k in range(arity)]

    def call(index: str) -> str:
        args = [f"{p}[{index}]" if p in batched else p for p in params]
        return f"{one_example}({', '.join(args)})"

    def part(value: str, k: int) -> str:
        return value if arity == 1 else f"{value}[{k}]"

    lines = [f"def {core.name}({', '.join(params)}):",
             "    # strategy: per-example code with loops runs as written, once per example (batched, every",
             "    # step would run for the whole batch under a mask until the slowest example finished)",
             f"    {n_examples} = len({batched[0]})",
             f"    if {n_examples} == 0:",
             "        raise ValueError('vmap over zero examples: this compiled loop learns the results from the first')",
             f"    {first} = {call('0')}   # example 0 fixes the results' dtypes and shapes"]
    lines += [f"    {result} = results_like({part(first, k)}, {n_examples})" for k, result in enumerate(results)]
    if in_lanes is not None:
        lines += _lanes_lines(scope, params, results, n_examples, (example, item), call, part, in_lanes)
    for k, result in enumerate(results):
        lines += [f"    {result}[0] = {part(first, k)}"]
    done = scope.claim("done")

    def one(indent: str) -> list[str]:
        return ([f"{indent}{item} = {call(example)}"]
                + [f"{indent}{result}[{example}] = {part(item, k)}" for k, result in enumerate(results)])

    lines += [f"    {done} = np.zeros({n_examples}, np.bool_)",
              f"    for {example} in prange(1, {n_examples}):   # examples are independent: every core takes some"]
    lines += one("        ") + [f"        {done}[{example}] = True"]
    # numba raises only what the calling thread raises in a prange: an example whose thread
    # stopped at an exception (and those after it in its share) is run again here, where
    # its exception reaches the caller
    lines += [f"    for {example} in range(1, {n_examples}):",
              f"        if not {done}[{example}]:"]
    lines += one("            ")
    returned = results[0] if arity == 1 else "(" + ", ".join(results) + ")"
    lines.append(f"    return {returned}")
    return "\n".join(lines) + "\n"


def _lanes_lines(scope, params, results, n_examples, loop_names, call, part, in_lanes) -> list[str]:
    """The driver's groups of examples in lanes, for arguments of one scalar per example."""
    group, start, stop, size, beyond = (scope.claim(n) for n in ("group", "start", "stop", "per_group", "out_of_range"))
    example, item = loop_names
    lanes = [scope.claim(f"lanes{k}") for k in range(len(results))]
    # numba drops the branch for arrays of other ranks when it compiles the driver
    condition = " and ".join(f"{p}.ndim == 1" for p in params)
    lines = [f"    if {condition}:   # one scalar per example: groups of them in SIMD lanes (see cpu_lanes.py)",
             f"        {size} = group_size({n_examples})   # {cpu_lanes.GROUP_MIN} to {cpu_lanes.GROUP_MAX} examples, about four groups a thread",
             f"        for {group} in prange(({n_examples} + {size} - 1) // {size}):",
             f"            {start} = {group} * {size}",
             f"            {stop} = min({start} + {size}, {n_examples})",
             f"            {beyond}, {', '.join(lanes)} = {in_lanes}({', '.join(f'{p}[{start}:{stop}]' for p in params)})",
             f"            if {beyond}:   # a sin or cos argument beyond the lanes' exact range: one example at a time",
             f"                for {example} in range({start}, {stop}):",
             f"                    {item} = {call(example)}"]
    lines += [f"                    {result}[{example}] = {part(item, k)}" for k, result in enumerate(results)]
    lines.append("            else:")
    lines += [f"                {result}[{start}:{stop}] = {lane}" for result, lane in zip(results, lanes)]
    returned = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    lines.append(f"        return {returned}")
    return lines


def one_example_core(core: per_example.PerExampleVmap, name: str) -> cf.CoreFunction:
    return cf.CoreFunction(node=core.node.with_changes(name=cf.name(name)), scope=core.scope,
                           sources=core.sources, constants=core.constants, functions=core.functions)


# ----------------------------------------------------------------- run time
def results_like(value, count):
    """An empty array for ``count`` results shaped and typed like ``value``, stacked first."""
    value = np.asarray(value)
    return np.empty((count,) + value.shape, value.dtype)


@overload(results_like)
def _results_like(value, count):
    if isinstance(value, (types.Number, types.Boolean)):
        return lambda value, count: np.empty(count, type(value))
    if isinstance(value, types.Array):
        return lambda value, count: np.empty((count,) + value.shape, value.dtype)
    raise TypingError(f"vmap's per-example loop cannot stack a result of type {value}")

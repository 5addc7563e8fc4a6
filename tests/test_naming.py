"""Generated modules' own names never meet a user's: every name a backend's
preamble imports is reserved, and a user variable called so is renamed."""
import ast
import importlib
import pkgutil

import numpy as np
import pytest

import transformer as tr
import transformer.backends
from transformer import emit, naming


def _preambles():
    yield "emit", emit.MODULE_PREAMBLE
    for info in pkgutil.iter_modules(transformer.backends.__path__):
        module = importlib.import_module(f"transformer.backends.{info.name}")
        if isinstance(getattr(module, "PREAMBLE", None), str):
            yield info.name, module.PREAMBLE


def _bound_names(code):
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield (alias.asname or alias.name).split(".")[0]


@pytest.mark.parametrize("module, preamble", [pytest.param(*pair, id=pair[0]) for pair in _preambles()])
def test_every_name_a_preamble_imports_is_reserved(module, preamble):
    assert set(_bound_names(preamble)) <= naming.RESERVED, f"{module}.PREAMBLE imports a name naming.RESERVED lacks"


def clashing_while(group_size, results_like):
    steps = 0
    while group_size > 0.01:
        group_size = group_size * 0.9 + results_like * 0.0
        steps += 1
    return group_size + steps


def clashing_arithmetic(vm, List, prange):
    return np.sin(vm) * List + prange


def test_user_names_that_a_generated_module_imports_are_renamed():
    x = np.linspace(0.5, 2.0, 300)
    # vmap's compiled driver (results_like) and its SIMD lanes (group_size)
    got = tr.jit(tr.vmap(clashing_while))(x, x)
    np.testing.assert_array_equal(got, [clashing_while(a, b) for a, b in zip(x, x)])
    # the CPU target's own modules (vm, List, prange), through grad too
    np.testing.assert_allclose(tr.jit(clashing_arithmetic)(x, x, x), clashing_arithmetic(x, x, x))
    np.testing.assert_allclose(tr.jit(tr.grad(lambda a: np.sum(clashing_arithmetic(a, x, x))))(x), np.cos(x) * x)

"""Named tests of the misc family (nan_to_num, gradient, average, interp, vander, ndtr, log_ndtr,
the tangents of prod and cumprod) and of the refusal of complex arguments, for what the rule
table's rows cannot show."""
import numpy as np
import pytest

import transformer as tr
from transformer.errors import TransformError


def _f(x, y):
    return np.sum(np.sin(x) * y)


_C = np.array([1.0 + 2.0j, 0.5 - 1.0j])
_R = np.array([1.0, 2.0])


@pytest.mark.parametrize("call, name", [
    (lambda: tr.grad(_f)(_C, _R), "x"),
    (lambda: tr.grad(_f, argnums=1)(_R, _C), "y"),
    (lambda: tr.value_and_grad(_f)(_R, _C), "y"),
    (lambda: tr.vjp(_f, _C, _R), "x"),
    (lambda: tr.jvp(_f, (_C, _R), (_C, _R)), "x"),
    (lambda: tr.jvp(_f, (_R, _R), (_C, _R)), "the tangent of x"),
    (lambda: tr.vmap(_f)(_R, _C.astype(np.complex64)), "y"),
    (lambda: tr.vmap(_f, in_axes=(0, None))(_R, 1j), "y"),
    (lambda: tr.jit(_f)(_C, _R), "x"),
    (lambda: tr.jit(_f, target="python")(_R, np.complex128(1j)), "y"),
    (lambda: tr.jit(tr.grad(_f))(_C, _R), "x"),
])
def test_complex_arguments_are_refused_naming_them(call, name):
    with pytest.raises(TransformError, match=rf"argument '{name}' of '_f' is complex") as info:
        call()
    assert "test_misc_functions.py" in str(info.value)      # the function's own file and line


def test_complex_leaf_of_a_pytree_is_refused():
    def loss(params):
        return np.sum(params["w"])
    with pytest.raises(TransformError, match="argument 'params' of .* is complex"):
        tr.grad(loss)({"w": _C, "b": _R})
    assert np.allclose(tr.grad(loss)({"w": _R, "b": _R})["w"], 1.0)   # real pytrees still work

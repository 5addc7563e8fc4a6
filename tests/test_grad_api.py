"""The reverse-mode API: argnums, has_aux, pytrees, vjp, custom_vjp and errors."""
import numpy as np
import pytest

import corpus_extra
import grad_api_cases as cases
import transformer as tr
from oracles import central_difference_grad


def test_argnums_tuple_returns_a_tuple():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    ga, gb = tr.grad(cases.two_args, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b ** 2)
    np.testing.assert_allclose(gb, 2 * a * b)
    assert isinstance(tr.grad(cases.two_args, argnums=(1,))(a, b), tuple)


def test_negative_argnums_counts_from_the_end():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(tr.grad(cases.two_args, argnums=-1)(a, b), 2 * a * b)


def test_has_aux_returns_gradient_and_aux():
    w, x = np.array([0.5, -0.3]), np.array([[1.0, 2.0], [0.5, -1.0]])
    grad, pred = tr.grad(cases.loss_with_aux, has_aux=True)(w, x)
    np.testing.assert_allclose(pred, np.tanh(x @ w))
    np.testing.assert_allclose(grad, central_difference_grad(lambda w: cases.loss_with_aux(w, x)[0], (w,)), rtol=1e-6)
    (value, aux), grad2 = tr.value_and_grad(cases.loss_with_aux, has_aux=True)(w, x)
    np.testing.assert_allclose(value, cases.loss_with_aux(w, x)[0])
    np.testing.assert_allclose(aux, pred)
    np.testing.assert_allclose(grad2, grad)


def test_integer_argument_elsewhere_is_fine():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tr.grad(cases.with_int)(x, 3), 3 * x ** 2)


def test_argnums_at_an_integer_argument_is_a_type_error():
    with pytest.raises(TypeError, match="argument 1 has dtype int"):
        tr.grad(cases.with_int, argnums=1)(np.array([1.0, 2.0]), 3)
    with pytest.raises(TypeError, match="dtype int"):
        tr.grad(cases.with_int)(np.array([1, 2]), 3)


def test_argnums_out_of_range_is_a_value_error():
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        tr.grad(cases.two_args, argnums=2)
    with pytest.raises(TypeError, match="argnums must be an int"):
        tr.grad(cases.two_args, argnums="a")


def test_grad_of_non_scalar_output_names_its_shape():
    with pytest.raises(TypeError, match=r"scalar output.*shape \(3,\)"):
        tr.grad(cases.vector_output)(np.ones(3))


def test_grad_of_tuple_output_is_refused():
    with pytest.raises(TypeError, match="scalar output"):
        tr.grad(cases.pair_output)(np.ones(3))


def test_dict_params_give_dict_gradients():
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2)}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    grads = tr.grad(cases.mlp_loss)(params, x, y)
    assert set(grads) == set(params)
    for key in params:
        def partial(leaf, key=key):
            changed = dict(params)
            changed[key] = leaf
            return cases.mlp_loss(changed, x, y)
        np.testing.assert_allclose(grads[key], central_difference_grad(partial, (params[key],)), rtol=1e-5, atol=1e-8)


def test_list_of_layers_unrolls_and_keeps_structure():
    rng = np.random.default_rng(1)
    layers = [{"W": rng.normal(size=(3, 3)) * 0.5, "b": rng.normal(size=3)} for _ in range(3)]
    x = rng.normal(size=(4, 3))
    grads = tr.grad(cases.layers_loss)(layers, x)
    assert isinstance(grads, list) and len(grads) == 3 and set(grads[0]) == {"W", "b"}
    def partial(w):
        changed = [dict(layer) for layer in layers]
        changed[1]["W"] = w
        return cases.layers_loss(changed, x)
    np.testing.assert_allclose(grads[1]["W"], central_difference_grad(partial, (layers[1]["W"],)), rtol=1e-5)


def test_tuple_params_and_value_and_grad_argnums():
    x = np.array([1.0, -2.0])
    value, (g_ab, g_x) = tr.value_and_grad(cases.tuple_params, argnums=(0, 1))((0.5, 2.0), x)
    assert isinstance(g_ab, tuple)
    np.testing.assert_allclose(value, cases.tuple_params((0.5, 2.0), x))
    np.testing.assert_allclose(g_ab, (np.sum(x), np.sum(x ** 2)))
    np.testing.assert_allclose(g_x, 0.5 + 2 * 2.0 * x)


def test_vjp_of_vector_and_tuple_outputs():
    x = np.array([0.3, -1.0, 2.0])
    out, vjp_fn = tr.vjp(cases.vector_output, x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0)
    (x_bar,) = vjp_fn(np.array([1.0, 0.0, 2.0]))
    np.testing.assert_allclose(x_bar, np.array([1.0, 0.0, 2.0]) * 2.0 * np.cos(x))
    out, vjp_fn = tr.vjp(cases.pair_output, x)
    (x_bar,) = vjp_fn((2.0, np.ones(3)))
    np.testing.assert_allclose(x_bar, 2.0 + 3.0 * np.ones(3))


def test_vjp_fn_refuses_a_wrongly_shaped_cotangent():
    _, vjp_fn = tr.vjp(cases.vector_output, np.ones(3))
    with pytest.raises(ValueError, match="shaped like the output"):
        vjp_fn(np.ones(4))
    _, vjp_fn = tr.vjp(cases.pair_output, np.ones(3))
    with pytest.raises(ValueError, match="shaped like the output"):
        vjp_fn(np.ones(3))


def test_custom_vjp_rules_replace_the_derivative():
    x = np.array([0.5, 2.0, 1e-4])
    np.testing.assert_allclose(tr.grad(corpus_extra.uses_clip_gradient)(x), np.ones(3))
    np.testing.assert_allclose(tr.grad(corpus_extra.uses_safe_log)(x), 2 * x / np.maximum(x * x, 1e-3))
    # called directly, a custom_vjp function is just the function
    np.testing.assert_allclose(corpus_extra.safe_log(x), np.log(x))


def test_a_forward_rule_may_call_its_own_function():
    # it ran into itself ("maximum recursion depth exceeded") before: the call inside the forward
    # rule is the plain function
    x = np.array([0.5, -2.0, 1.5])
    want = central_difference_grad(corpus_extra.uses_softplus, (x,))
    np.testing.assert_allclose(tr.grad(corpus_extra.uses_softplus)(x), want, rtol=1e-7)
    np.testing.assert_allclose(tr.jit(tr.grad(corpus_extra.uses_softplus))(x), want, rtol=1e-7)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_custom_vjp_functions_under_vmap(target):
    # per-example gradients, and the function itself, batched: once no derivative is left to take
    # the custom rule's marker is the value (it was refused: "custom_vjp functions cannot be batched")
    batch = np.array([[0.5, -2.0, 1.5], [0.1, 0.2, -0.3]])
    per_example = tr.jit(tr.vmap(tr.grad(corpus_extra.uses_clip_gradient)), target=target)(batch * 4.0)
    np.testing.assert_allclose(per_example, np.ones((2, 3)))
    per_example = tr.jit(tr.vmap(tr.grad(corpus_extra.uses_softplus)), target=target)(batch)
    np.testing.assert_allclose(per_example, [central_difference_grad(corpus_extra.uses_softplus, (x,))
                                             for x in batch], rtol=1e-7)
    values = tr.jit(tr.vmap(corpus_extra.uses_safe_log), target=target)(batch + 3.0)
    np.testing.assert_allclose(values, [corpus_extra.uses_safe_log(x) for x in batch + 3.0])


def test_a_custom_rule_applies_through_a_transform_inside_the_code():
    # a transform inlined into transformed code keeps the custom rule's marker for the outer grad
    # (an interim build made it a value there, and the gradient came out unclipped: 3 for 1)
    x = np.array([0.5, 2.0, 1e-4])
    np.testing.assert_allclose(tr.grad(corpus_extra.jitted_clip_inside)(x), np.ones(3))


def test_forward_mode_of_a_custom_vjp_function_is_refused_at_its_line():
    # as in JAX: the user's rule is for reverse mode only, and differentiating the forward rule's
    # code instead could disagree with it
    with pytest.raises(tr.TransformError, match=r"corpus_extra\.py:\d+: jvp cannot differentiate rt.custom_vjp_call"):
        tr.jacfwd(corpus_extra.uses_softplus)(np.array([0.5, -2.0, 1.5]))


def test_hessian_of_a_custom_vjp_function_differentiates_its_rules():
    # forward over reverse, as JAX's hessian: jvp of the gradient's code, where the rule's fwd and bwd
    # are plain code (it was refused as forward mode of the custom function itself)
    x = np.array([0.5, -2.0, 1.5])
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    # d2/dx2 of softplus(x) * x, with softplus' = sigmoid (the bwd rule) and sigmoid' = s (1 - s)
    want = np.diag(sigmoid * (1.0 - sigmoid) * x + 2.0 * sigmoid)
    np.testing.assert_allclose(tr.hessian(corpus_extra.uses_softplus)(x), want, rtol=1e-12, atol=1e-12)


def test_decorator_forms_and_lambdas():
    @tr.grad
    def decorated(x):
        return np.sum(x ** 3)
    np.testing.assert_allclose(decorated(np.array([1.0, 2.0])), [3.0, 12.0])
    partial_form = tr.grad(argnums=1)(cases.two_args)
    np.testing.assert_allclose(partial_form(np.ones(2), np.array([1.0, 3.0])), [2.0, 6.0])
    np.testing.assert_allclose(tr.grad(cases.square_lambda)(np.array([1.0, -2.0])), [2.0, -4.0])


def test_float32_gradients_stay_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    assert tr.grad(cases.two_args)(x, x).dtype == np.float32


def test_grad_called_inside_transformed_code_is_inlined():
    w, x = np.full(3, 0.3), np.arange(6.0).reshape(2, 3) / 5
    expected = cases.sgd_step(w, x)              # plain Python: tr.grad runs as a call
    np.testing.assert_allclose(tr.jit(cases.sgd_step)(w, x), expected)
    np.testing.assert_allclose(tr.jit(cases.sgd_step, target="python")(w, x), expected)
    code = tr.show(tr.jit(cases.sgd_step, target="python"))
    # the gradient's sweep is in the caller's code, its cotangent made as the caller's g
    assert "vjp of: return np.sum(np.tanh(x @ w) ** 2)" in code and "g = rt.matmul_vjp_y(" in code
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(tr.jit(cases.second_argument_gradient)(a, b), 4 * a * b)


def test_grad_of_a_function_that_calls_grad():
    x = np.array([0.3, 1.0, -0.7])
    np.testing.assert_allclose(tr.grad(cases.gradient_norm)(x),
                               central_difference_grad(cases.gradient_norm, (x,)), rtol=1e-6)


def test_vmap_of_a_function_that_calls_grad():
    w, xs = np.full(3, 0.3), np.random.default_rng(0).normal(size=(4, 2, 3))
    batched = tr.vmap(cases.sgd_step, in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(batched, np.stack([cases.sgd_step(w, x) for x in xs]))


def test_the_vjp_function_is_transformable_as_in_jax():
    x, y = np.array([0.3, 0.7, -0.2]), np.array([1.0, 2.0, 3.0])
    _, f_vjp = tr.vjp(cases.looped_product, x, y)
    ct = np.array([1.0, -1.0, 0.5])
    want = f_vjp(ct)
    for a, b in zip(tr.jit(f_vjp)(ct), want):              # jit(vjp_fn): compiled, the same numbers
        np.testing.assert_allclose(a, b, rtol=1e-14)
    rows_x, rows_y = tr.vmap(f_vjp)(np.eye(3))              # vmap(vjp_fn): one Jacobian row per cotangent
    np.testing.assert_allclose(rows_x, tr.jacrev(cases.looped_product)(x, y), rtol=1e-12)
    np.testing.assert_allclose(rows_y, tr.jacrev(cases.looped_product, argnums=1)(x, y), rtol=1e-12)
    columns = tr.vmap(f_vjp, in_axes=1, out_axes=1)(np.eye(3))
    np.testing.assert_allclose(columns[0], rows_x.T, rtol=1e-12)


def test_a_dict_output_takes_a_dict_cotangent():
    x = np.array([0.5, -1.0])
    out, f_vjp = tr.vjp(cases.dict_output, x)
    assert set(out) == {"double", "total"}
    (got,) = f_vjp({"double": np.ones(2), "total": 1.0})
    np.testing.assert_allclose(got, 2.0 + 2.0 * x)

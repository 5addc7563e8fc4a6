"""Pytree containers as JAX has them: named tuples, registered dataclasses (with meta fields) and
registered classes, read by attribute inside transformed code; gradients come back as the argument's
own class.  Loops, comprehensions, generator expressions and ``sum`` over structures and over a dict's
items and values are unrolled.  Oracles: central differences and the same code written out."""
from __future__ import annotations

import numpy as np
import pytest

import pytree_cases as case
import transformer as tr
from oracles import central_difference_grad

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 3))


def dense(n_in, n_out):
    return case.Dense(RNG.normal(size=(n_in, n_out)) * 0.5, RNG.normal(size=n_out) * 0.1)


def leafwise_difference(fn, tree, x):
    """Central differences of ``fn(tree, x)`` leaf by leaf, regrouped as ``tree``."""
    leaves, treedef = tr.tree_util.tree_flatten(tree)
    grads = []
    for k in range(len(leaves)):
        def of_leaf(leaf, k=k):
            return fn(tr.tree_util.tree_unflatten(treedef, leaves[:k] + [leaf] + leaves[k + 1:]), x)
        grads.append(central_difference_grad(of_leaf, (np.array(leaves[k], dtype=float),)))   # a number too
    return tr.tree_util.tree_unflatten(treedef, grads)


def assert_same_tree(got, want, rtol=1e-6, atol=1e-9):
    assert tr.tree_util.tree_structure(got) == tr.tree_util.tree_structure(want)
    assert type(got) is type(want)
    for a, b in zip(tr.tree_util.tree_leaves(got), tr.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_named_tuple_argument_read_by_attribute_and_its_gradient_of_its_class(target):
    p = dense(3, 2)
    want = leafwise_difference(case.dense_loss, p, X)
    got = tr.jit(tr.grad(case.dense_loss), target=target)(p, X)
    assert_same_tree(got, want)
    value, grads = tr.value_and_grad(case.dense_loss)(p, X)
    assert value == pytest.approx(case.dense_loss(p, X))
    assert_same_tree(grads, want)


def test_a_registered_dataclass_and_its_meta_fields_as_literals():
    layer = case.Layer(RNG.normal(size=(3, 2)), RNG.normal(size=2))
    assert_same_tree(tr.grad(case.layer_loss)(layer, X), leafwise_difference(case.layer_loss, layer, X))
    for activation, scale in (("tanh", 0.5), ("relu", 2.0)):
        act = case.Activated(RNG.normal(size=(3, 2)), RNG.normal(size=2), activation, scale)
        got = tr.jit(tr.grad(case.activated_loss))(act, X)
        assert_same_tree(got, leafwise_difference(case.activated_loss, act, X))
        assert (got.activation, got.scale) == (activation, scale)       # the meta fields come back as given
        # the meta fields are part of the structure: the branch is decided, not computed
        source = tr.jit(case.activated_loss, target="python").source(act, X)
        assert "activation" not in source.split("def activated_loss")[1].split("\n", 2)[1]


@pytest.mark.parametrize("fn, tree", [(case.box_loss, case.Box(np.array([0.1, 0.2]), np.array([1.0, 2.5]), 3.0)),
                                      (case.affine_loss, case.Affine(np.array([0.5, 1.5, -1.0]), np.array(0.3)))],
                         ids=["register_pytree_node", "register_pytree_node_class"])
def test_registered_classes_read_through_the_attributes_that_hold_their_children(fn, tree):
    x = X[0]
    got = tr.jit(tr.grad(fn))(tree, x)
    want = leafwise_difference(fn, tree, x)
    assert type(got) is type(tree)
    for a, b in zip(tr.tree_util.tree_leaves(got), tr.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_named_tuples_under_vmap_jvp_and_hessian():
    p = dense(3, 2)
    batched = tr.vmap(case.dense_loss, in_axes=(None, 0))(p, np.stack([X, 2 * X]))
    np.testing.assert_allclose(batched, [case.dense_loss(p, X), case.dense_loss(p, 2 * X)])
    hessian = tr.hessian(case.dense_loss)(p, X)
    assert isinstance(hessian, case.Dense) and isinstance(hessian.W, case.Dense)   # output first, as JAX
    bump = 1e-4
    step = case.Dense(p.W, p.b + np.array([bump, 0.0]))
    column = (tr.grad(case.dense_loss)(step, X).b - tr.grad(case.dense_loss)(
        case.Dense(p.W, p.b - np.array([bump, 0.0])), X).b) / (2 * bump)
    np.testing.assert_allclose(hessian.b.b[:, 0], column, rtol=1e-5, atol=1e-8)


def test_a_loop_over_a_list_of_named_tuples_is_unrolled():
    params = [dense(3, 5), dense(5, 4), dense(4, 1)]
    assert tr.jit(case.mlp)(params, X) == pytest.approx(case.mlp_written_out(params, X))
    got = tr.jit(tr.grad(case.mlp))(params, X)
    want = leafwise_difference(case.mlp, params, X)
    assert isinstance(got, list) and all(isinstance(layer, case.Dense) for layer in got)
    assert_same_tree(got, want)


def test_enumerate_over_a_parameter_list():
    params = [(RNG.normal(size=(3, 2)), RNG.normal(size=2)) for _ in range(3)]
    assert_same_tree(tr.jit(tr.grad(case.weighted_by_position))(params, X),
                     leafwise_difference(case.weighted_by_position, params, X))


def test_a_dict_s_items_values_and_keys_and_sum_of_a_generator_expression():
    params = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    assert tr.jit(case.l2_of_dict)(params) == pytest.approx(case.l2_of_dict_written_out(params))
    want = {k: central_difference_grad(lambda v, k=k: case.l2_of_dict_written_out({**params, k: v}), (params[k],))
            for k in params}
    assert_same_tree(tr.jit(tr.grad(case.l2_of_dict))(params), want)
    assert tr.grad(case.keys_of_dict)(params)["W"] == pytest.approx(np.full((3, 2), 2.0))


def test_attributes_a_structure_lacks_are_refused_at_their_line():
    with pytest.raises(tr.TransformError, match=r"the attribute \.V of a Dense, which is none of its children "
                                                r"\(W, b\)") as info:
        tr.grad(case.missing_field)(dense(3, 3), X)
    assert "pytree_cases.py" in str(info.value)
    with pytest.raises(tr.TransformError, match="no attribute of it holds"):
        tr.grad(case.hidden_loss)(case.Hidden(np.ones(3)), X[0])


def test_what_an_unrolled_loop_cannot_do_is_refused_at_its_line():
    params = [(RNG.normal(size=(3, 2)), RNG.normal(size=2)) for _ in range(2)]
    with pytest.raises(tr.TransformError, match="break or continue in a loop over a structure") as info:
        tr.grad(case.breaks_in_a_structure_loop)(params, X)
    assert "pytree_cases.py" in str(info.value)
    with pytest.raises(tr.TransformError, match=r"a loop over \.items\(\) of a value that is not a dict argument"):
        tr.jit(case.items_of_an_array, target="python")(X)


def test_tree_util_outside_transformed_code_takes_every_node_type():
    tree = [case.Dense(np.ones(2), np.zeros(1)), case.Layer(np.ones(3), np.ones(1)),
            case.Activated(np.ones(1), np.ones(1), "relu", 2.0), {"box": case.Box(np.ones(1), np.ones(1), 0.5)}]
    leaves, treedef = tr.tree_util.tree_flatten(tree)
    assert len(leaves) == 8
    doubled = tr.tree_util.tree_map(lambda v: v * 2, tree)
    assert isinstance(doubled[2], case.Activated) and doubled[2].activation == "relu" and doubled[2].scale == 2.0
    assert doubled[3]["box"].weight == 0.5
    np.testing.assert_allclose(doubled[1].W, 2.0)
    assert tr.tree_util.tree_structure(tr.tree_util.tree_unflatten(treedef, leaves)) == treedef
    with pytest.raises(ValueError, match="split the fields"):
        tr.tree_util.register_dataclass(case.Activated, data_fields=["W"], meta_fields=["activation"])


# ------------------------------------------------ structures built in transformed code and returned
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_an_update_returns_a_new_list_of_tuples_as_jax_does(target):
    params = [(RNG.normal(size=(3, 2)), RNG.normal(size=2)), (RNG.normal(size=(2, 1)), RNG.normal(size=1))]
    grads = tr.tree_util.tree_map(lambda v: v * 0 + 1.0, params)
    got = tr.jit(case.sgd_step, target=target)(params, grads)
    assert isinstance(got, list) and all(isinstance(layer, tuple) for layer in got)
    assert_same_tree(got, tr.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_dicts_built_by_a_display_and_a_comprehension(target):
    params = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    assert_same_tree(tr.jit(case.scaled_dict, target=target)(params), {k: v * 2.0 for k, v in params.items()})
    x = RNG.normal(size=3)
    got = tr.jit(case.dict_display, target=target)(x)
    assert set(got) == {"sum", "double"}
    np.testing.assert_allclose(got["double"], 2 * x)
    assert got["sum"] == pytest.approx(np.sum(x))
    np.testing.assert_allclose(tr.grad(case.reads_a_built_dict)(x), 2 * np.sin(x) + 2 * x * np.cos(x))


def test_a_dict_result_under_vmap_keeps_its_keys():
    xs = RNG.normal(size=(4, 3))
    got = tr.vmap(case.dict_display)(xs)
    np.testing.assert_allclose(got["sum"], xs.sum(axis=1))
    np.testing.assert_allclose(got["double"], 2 * xs)


def test_named_tuples_and_dataclasses_built_in_the_code():
    p = dense(3, 2)
    got = tr.jit(case.built_dense)(p)
    assert isinstance(got, case.Dense)
    np.testing.assert_allclose(got.W, 2 * p.W)
    np.testing.assert_allclose(got.b, p.b + 1)
    layer = case.Activated(RNG.normal(size=(3, 2)), RNG.normal(size=2), "relu", 2.0)
    built = tr.jit(case.built_activated)(layer)
    assert isinstance(built, case.Activated) and (built.activation, built.scale) == ("relu", 3.0)
    np.testing.assert_allclose(built.W, 0.5 * layer.W)


# ------------------------------------------------ forward mode and Jacobians of pytrees (issue 21)
def test_jvp_of_pytree_primals_against_differences():
    p, x = dense(3, 2), RNG.normal(size=(4, 3))
    dp, dx = dense(3, 2), RNG.normal(size=(4, 3))
    out, tangent = tr.jvp(case.dense_loss, (p, x), (dp, dx))
    h = 1e-6
    ahead = case.dense_loss(tr.tree_util.tree_map(lambda a, d: a + h * d, p, dp), x + h * dx)
    behind = case.dense_loss(tr.tree_util.tree_map(lambda a, d: a - h * d, p, dp), x - h * dx)
    assert out == pytest.approx(case.dense_loss(p, x))
    assert tangent == pytest.approx((ahead - behind) / (2 * h), rel=1e-6)
    with pytest.raises(ValueError, match="must have its primal's structure"):
        tr.jvp(case.dense_loss, (p, x), ((dp.W, dp.b), dx))


def test_jvp_keeps_the_structure_the_function_returns():
    params = (RNG.normal(size=3), RNG.normal(size=3))
    x = RNG.normal(size=3)
    tangents = ((np.ones(3), np.zeros(3)), np.zeros(3))
    out, tangent = tr.jvp(case.mixed_outputs, (params, x), tangents)
    assert set(out) == set(tangent) == {"scaled", "total"}
    np.testing.assert_allclose(tangent["scaled"], x)           # d(w * x) along dw = 1
    assert tangent["total"] == pytest.approx(0.0)


def test_jacfwd_and_jacrev_of_pytrees_nest_as_jax_does():
    params = (RNG.normal(size=3), RNG.normal(size=3))
    x = RNG.normal(size=3)
    forward = tr.jacfwd(case.mixed_outputs, argnums=(0, 1))(params, x)
    reverse = tr.jacrev(case.mixed_outputs, argnums=(0, 1))(params, x)
    for jac in (forward, reverse):
        # output first (a dict), then the argnums tuple, then the argument's structure (a tuple)
        np.testing.assert_allclose(jac["scaled"][0][0], np.diag(x))
        np.testing.assert_allclose(jac["scaled"][0][1], np.zeros((3, 3)))
        np.testing.assert_allclose(jac["scaled"][1], np.diag(params[0]))
        np.testing.assert_allclose(jac["total"][0][1], np.cos(params[1]) * x)
        np.testing.assert_allclose(jac["total"][1], np.sin(params[1]))
    p = dense(3, 2)
    jac = tr.jacfwd(case.dense_loss)(p, X)
    grad = tr.grad(case.dense_loss)(p, X)
    assert isinstance(jac, case.Dense)
    np.testing.assert_allclose(jac.W, grad.W)
    np.testing.assert_allclose(jac.b, grad.b)


def _layered_params():
    rng = np.random.default_rng(11)
    # the keys out of order: a dict's leaves are in its sorted keys' order, as in JAX
    return {"scale": 0.5, "layers": [{"b": rng.normal(size=4), "W": rng.normal(size=(3, 4))},
                                     {"W": rng.normal(size=(4, 2)), "b": rng.normal(size=2)}]}


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_dict_parameters_through_transforms_inside_a_jitted_step(target):
    # grad, vjp, jvp and vmap inside transformed code take dicts as JAX's do (a dict argument was
    # refused there, "pass a tuple or list", and a dict in a list a loop ran over, "no entry 'W'")
    params, x = _layered_params(), RNG.normal(size=(5, 3))
    grads = leafwise_difference(case.layered_loss, params, x)
    loss, new = tr.jit(case.layered_step, target=target)(params, x)
    np.testing.assert_allclose(loss, case.layered_loss(params, x), rtol=1e-12)
    for layer, old, g in zip(new["layers"], params["layers"], grads["layers"]):
        assert sorted(layer) == ["W", "b"]
        for k in layer:
            np.testing.assert_allclose(layer[k], old[k] - 0.1 * g[k], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(new["scale"], params["scale"] - 0.1 * grads["scale"], rtol=1e-6)
    w_bar, x_bar = tr.jit(case.layered_pullback, target=target)(params, x)
    np.testing.assert_allclose(w_bar, grads["layers"][1]["W"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(x_bar, central_difference_grad(lambda v: case.layered_loss(params, v), (x,)),
                               rtol=1e-6, atol=1e-8)
    along = sum(np.sum(g["W"]) for g in grads["layers"]) + grads["scale"]
    np.testing.assert_allclose(tr.jit(case.layered_push, target=target)(params, x), along, rtol=1e-6)
    xs = RNG.normal(size=(3, 5, 3))
    np.testing.assert_allclose(tr.jit(case.layered_per_example, target=target)(params, xs),
                               [case.layered_loss(params, v) for v in xs], rtol=1e-12)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_tangent_held_in_a_module_tuple(target):
    # the module's tuple is a structure as one written in the call is (it was one constant, and the
    # jvp was refused: "takes 6 arguments here, got 5")
    params, x = (RNG.normal(size=(3, 2)), RNG.normal(size=2)), RNG.normal(size=(4, 3))
    w_bar, b_bar = leafwise_difference(case.pair_loss, params, x)
    want = np.sum(w_bar * case.PAIR_TANGENT[0]) + np.sum(b_bar * case.PAIR_TANGENT[1])
    np.testing.assert_allclose(tr.jit(case.along_a_global_tangent, target=target)(params, x), want, rtol=1e-6)
    x0 = RNG.normal(size=(1, 2))
    np.testing.assert_allclose(tr.jit(case.sum_of_a_global_tuple, target=target)(x0),
                               case.sum_of_a_global_tuple(x0), rtol=1e-12)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_has_aux_at_dict_parameters_inside_a_jitted_step(target):
    # grad and value_and_grad with has_aux inside transformed code at structured arguments were
    # refused ("takes arrays and numbers here"); the aux keeps the dict the function returns
    params, x = _layered_params(), RNG.normal(size=(5, 3))
    grads = leafwise_difference(lambda p, v: case.loss_and_report(p, v)[0], params, x)
    loss, report = case.loss_and_report(params, x)
    got_loss, size, new = tr.jit(case.step_with_aux, target=target)(params, x)
    np.testing.assert_allclose(got_loss, loss, rtol=1e-12)
    np.testing.assert_allclose(size, report["size"], rtol=1e-12)
    np.testing.assert_allclose(new["layers"][1]["W"], params["layers"][1]["W"] - 0.1 * grads["layers"][1]["W"],
                               rtol=1e-6, atol=1e-8)
    b_bar, prediction = tr.jit(case.gradient_with_aux, target=target)(params, x)
    np.testing.assert_allclose(b_bar, grads["layers"][0]["b"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(prediction, report["prediction"], rtol=1e-12)


@pytest.mark.parametrize("target", ["python", "cpu"])
@pytest.mark.parametrize("batched", ["per_example_gradients_with_aux", "per_device_gradients_with_aux"])
def test_per_example_gradients_with_aux_at_dict_parameters_inside_a_jitted_function(target, batched):
    # vmap (and pmap) of grad(has_aux) inside transformed code at structured arguments was
    # refused ("takes arrays and numbers here"); each example's gradient and report, against
    # central differences
    params, xs = _layered_params(), RNG.normal(size=(3, 5, 3))
    w_bar, size = tr.jit(getattr(case, batched), target=target)(params, xs)
    for k, x in enumerate(xs):
        grads = leafwise_difference(lambda p, v: case.loss_and_report(p, v)[0], params, x)
        np.testing.assert_allclose(w_bar[k], grads["layers"][1]["W"], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(size[k], case.loss_and_report(params, x)[1]["size"], rtol=1e-12)


def test_vmap_of_grad_with_aux_keeps_the_aux_structure():
    # the aux's leaves came back stacked into one array, (examples, leaves), where the function
    # returned a dict: its tuple, copied before the backward sweep, read to vmap as one array
    params, xs = _layered_params(), RNG.normal(size=(3, 5, 3))
    per_example = tr.vmap(tr.grad(case.loss_and_report, has_aux=True), in_axes=(None, 0))
    for (_, report) in (per_example(params, xs),
                        tr.vmap(tr.value_and_grad(case.loss_and_report, has_aux=True), in_axes=(None, 0))(params, xs)[0]):
        assert isinstance(report, dict) and sorted(report) == ["prediction", "size"]
        for k, x in enumerate(xs):
            want = case.loss_and_report(params, x)[1]
            np.testing.assert_allclose(report["size"][k], want["size"], rtol=1e-12)
            np.testing.assert_allclose(report["prediction"][k], want["prediction"], rtol=1e-12)


def test_has_aux_from_python_keeps_the_aux_structure():
    # the aux came back as a tuple of its leaves where the function returned a dict
    params, x = _layered_params(), RNG.normal(size=(5, 3))
    (_, report), _ = tr.value_and_grad(case.loss_and_report, has_aux=True)(params, x)
    _, report2 = tr.grad(case.loss_and_report, has_aux=True)(params, x)
    for got in (report, report2):
        assert isinstance(got, dict) and sorted(got) == ["prediction", "size"]
        np.testing.assert_allclose(got["size"], case.loss_and_report(params, x)[1]["size"], rtol=1e-12)


def _descent_written_out(p, rate):
    """Each step's gradient of _energy written by hand (so that the derivative of the whole, by
    central differences, differences no differences)."""
    a, b = p["a"], p["b"]
    for _ in range(3):
        a, b = a - rate * np.cos(a) * b[0], b - rate * (2.0 * b + np.array([np.sum(np.sin(a)), 0.0]))
    return case._energy({"a": a, "b": b})


@pytest.mark.parametrize("fn, written_out", [
    (case.dict_rebuilt_each_pass, case.dict_rebuilt_each_pass_written_out),
    (case.dict_carried_while, case.dict_carried_while_written_out),
    (lambda p: case.descent_by_tree_map(p, 0.1), lambda p: _descent_written_out(p, 0.1)),
], ids=["comprehension", "while", "tree_map"])
def test_a_dict_argument_rebound_in_a_loop(fn, written_out):
    """Each pass reads the dict as the pass before left it (once read as the argument throughout)."""
    p = {"a": np.array([0.3, 0.7]), "b": np.array([1.5, -0.5])}
    np.testing.assert_allclose(tr.jit(fn)(p), written_out(p), rtol=1e-7)
    grads = tr.grad(fn)(p)
    for key in p:
        np.testing.assert_allclose(grads[key], central_difference_grad(
            lambda leaf, key=key: written_out({**p, key: leaf}), (p[key],)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_jacobian_at_a_dict_inside_transformed_code_keeps_its_keys(target):
    """It came back as a tuple of its leaves, so ``jacobian["w"]`` failed to compile."""
    params, x = {"w": np.array([0.5, -1.0, 2.0]), "b": np.array([0.3])}, 1.5
    f = tr.jit(case.jacobian_read_by_key) if target == "cpu" else case.jacobian_read_by_key
    got = f(params, x) if target == "cpu" else tr.jit(f, target="python")(params, x)
    # d(w_i**2 x)/dw_j = 2 w_i x delta_ij; nothing depends on b
    np.testing.assert_allclose(got, np.sum(2.0 * params["w"] * x), rtol=1e-12)

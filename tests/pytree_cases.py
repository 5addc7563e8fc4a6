"""User code for tests/test_pytrees.py (transforms read source): parameters held in named tuples,
registered dataclasses and registered classes, read by attribute; loops, comprehensions and
generator expressions over structures and over a dict's items."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

import transformer as tr


class Dense(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@tr.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Activated:
    W: np.ndarray
    b: np.ndarray
    activation: str = "tanh"
    scale: float = 1.0


tr.tree_util.register_dataclass(Activated, data_fields=["W", "b"], meta_fields=["activation", "scale"])


class Box:
    """A class registered with flatten/unflatten functions: its attributes hold the children."""

    def __init__(self, low, high, weight):
        self.low, self.high, self.weight = low, high, weight


tr.tree_util.register_pytree_node(Box, lambda box: ((box.low, box.high), box.weight),
                                  lambda weight, children: Box(children[0], children[1], weight))


@tr.tree_util.register_pytree_node_class
class Affine:
    """A class registered by its tree_flatten / tree_unflatten methods, as JAX's decorator takes it."""

    def __init__(self, scale, shift):
        self.scale, self.shift = scale, shift

    def tree_flatten(self):
        return (self.scale, self.shift), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


class Hidden:
    """Registered, but flattened into computed children that no attribute holds."""

    def __init__(self, a):
        self.a = a


tr.tree_util.register_pytree_node(Hidden, lambda h: ((h.a * 1.0,), None), lambda aux, children: Hidden(children[0]))


def dense_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def layer_loss(layer, x):
    h = x @ layer.W + layer.b
    return np.sum(np.tanh(h) ** 2)


def activated_loss(layer, x):
    h = (x @ layer.W + layer.b) * layer.scale
    if layer.activation == "tanh":
        h = np.tanh(h)
    else:
        h = np.maximum(h, 0.0)
    return np.sum(h ** 2)


def box_loss(box, x):
    return np.sum((box.high - box.low) ** 2 * box.weight) * np.sum(x * x)


def affine_loss(f, x):
    return np.sum(np.sin(f.scale * x + f.shift))


def hidden_loss(h, x):
    return np.sum(h.a * x)


def missing_field(p, x):
    return np.sum(p.V * x)


def mlp(params, x):
    # a list of named tuples: the loop is unrolled, each pass reading its layer's leaves by name
    h = x
    for layer in params[:-1]:
        h = np.tanh(h @ layer.W + layer.b)
    last = params[-1]
    return np.sum(h @ last.W + last.b)


def mlp_written_out(params, x):
    h = np.tanh(x @ params[0].W + params[0].b)
    h = np.tanh(h @ params[1].W + params[1].b)
    return np.sum(h @ params[2].W + params[2].b)


def weighted_by_position(params, x):
    total = 0.0
    for i, (w, b) in enumerate(params):
        total = total + (i + 1.0) * np.sum(np.sin(x @ w + b))
    return total


def l2_of_dict(params):
    # sum of a generator expression over a dict's values, and a loop over its items
    penalty = sum(np.sum(v * v) for v in params.values())
    for name, value in params.items():
        if name == "W":
            penalty = penalty + np.sum(np.abs(value))
    return penalty


def l2_of_dict_written_out(params):
    return np.sum(params["W"] ** 2) + np.sum(params["b"] ** 2) + np.sum(np.abs(params["W"]))


def keys_of_dict(params):
    total = 0.0
    for key in params:
        total = total + np.sum(params[key] * 2.0)
    return total


def breaks_in_a_structure_loop(params, x):
    total = 0.0
    for w, b in params:
        if np.sum(w) > 0.0:
            break
        total = total + np.sum(x @ w + b)
    return total


def items_of_an_array(x):
    total = 0.0
    for k, v in x.items():
        total = total + v
    return total


def sgd_step(params, grads):
    # the update of a JAX training loop: a new list of tuples, and a new dict
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]


def scaled_dict(params):
    return {name: value * 2.0 for name, value in params.items()}


def dict_display(x):
    out = {"sum": np.sum(x), "double": x * 2.0}
    return out


def built_dense(p):
    return case_dense(p.W * 2.0, b=p.b + 1.0)


def built_activated(layer):
    return Activated(layer.W * 0.5, layer.b, activation=layer.activation, scale=3.0)


def reads_a_built_dict(x):
    parts = {"a": x * 2.0, "b": np.sin(x)}
    return np.sum(parts["a"] * parts["b"])


case_dense = Dense


def mixed_outputs(params, x):
    # a dict output, of a tuple argument and an array
    w, b = params
    return {"scaled": w * x, "total": np.sum(np.sin(b) * x)}


# ------------------------------------------- dict parameters, as a JAX training step writes them
def layered_loss(params, x):
    # a dict holding a list of dicts: each layer's dict is reached through the loop over the list
    h = x
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h ** 2) + params["scale"] * np.sum(h)


def layered_step(params, x):
    loss, grads = tr.value_and_grad(layered_loss)(params, x)
    layers = [{k: layer[k] - 0.1 * g[k] for k in layer} for layer, g in zip(params["layers"], grads["layers"])]
    return loss, {"layers": layers, "scale": params["scale"] - 0.1 * grads["scale"]}


def layered_pullback(params, x):
    _, pull = tr.vjp(layered_loss, params, x)
    grads, x_bar = pull(1.0)
    return grads["layers"][1]["W"], x_bar


def layered_push(params, x):
    along = {"layers": [{"W": np.ones_like(layer["W"]), "b": np.zeros_like(layer["b"])} for layer in params["layers"]],
             "scale": 1.0}
    return tr.jvp(layered_loss, (params, x), (along, np.zeros_like(x)))[1]


def layered_per_example(params, xs):
    return tr.vmap(layered_loss, in_axes=(None, 0))(params, xs)


def pair_loss(params, x):
    w, b = params
    return np.sum(np.tanh(x @ w + b) ** 2)


# a module's tuple of arrays: a structure as a tuple written in the code is
PAIR_TANGENT = (np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.5, -0.25]))


def along_a_global_tangent(params, x):
    return tr.jvp(pair_loss, (params, x), (PAIR_TANGENT, np.zeros_like(x)))[1]


def sum_of_a_global_tuple(x):
    total = 0.0
    for entry in PAIR_TANGENT:
        total = total + np.sum(entry * x[0])
    return total


def loss_and_report(params, x):
    h = x
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h ** 2), {"prediction": h, "size": np.sum(np.abs(h))}


def step_with_aux(params, x):
    # JAX's training step: the loss's aux (a dict) beside the gradients, inside the jitted step
    (loss, report), grads = tr.value_and_grad(loss_and_report, has_aux=True)(params, x)
    layers = [{k: layer[k] - 0.1 * g[k] for k in layer} for layer, g in zip(params["layers"], grads["layers"])]
    return loss, report["size"], {"layers": layers, "scale": params["scale"]}


def gradient_with_aux(params, x):
    grads, report = tr.grad(loss_and_report, has_aux=True)(params, x)
    return grads["layers"][0]["b"], report["prediction"]


def per_example_gradients_with_aux(params, xs):
    # one gradient and one report per example: vmap of grad(has_aux) at dict parameters
    grads, report = tr.vmap(tr.grad(loss_and_report, has_aux=True), in_axes=(None, 0))(params, xs)
    return grads["layers"][1]["W"], report["size"]


def per_device_gradients_with_aux(params, xs):
    # the same under pmap: one gradient and one report per device
    grads, report = tr.pmap(tr.grad(loss_and_report, has_aux=True), in_axes=(None, 0))(params, xs)
    return grads["layers"][1]["W"], report["size"]


# A structured argument rebound in a loop: each pass reads the structure as the last pass left it.
def dict_rebuilt_each_pass(p):
    for _ in range(3):
        p = {k: v * 0.9 + np.sin(v) for k, v in p.items()}
    return np.sum(p["a"] ** 2) + np.sum(p["b"])


def dict_rebuilt_each_pass_written_out(p):
    a, b = p["a"], p["b"]
    for _ in range(3):
        a, b = a * 0.9 + np.sin(a), b * 0.9 + np.sin(b)
    return np.sum(a ** 2) + np.sum(b)


def dict_carried_while(p):
    count = 0
    while np.sum(p["a"]) < 10.0:
        p = {"a": p["a"] * 2.0, "b": p["b"] + 1.0}
        count += 1
    return np.sum(p["a"]) + np.sum(p["b"]) * count


def dict_carried_while_written_out(p):
    a, b, count = p["a"], p["b"], 0
    while np.sum(a) < 10.0:
        a, b, count = a * 2.0, b + 1.0, count + 1
    return np.sum(a) + np.sum(b) * count


def _energy(q):
    return np.sum(np.sin(q["a"]) * q["b"][0]) + np.sum(q["b"] ** 2)


def descent_by_tree_map(p, rate):
    for _ in range(3):
        g = tr.grad(_energy)(p)
        p = tr.tree_util.tree_map(lambda leaf, d: leaf - rate * d, p, g)
    return _energy(p)


def squared_weight(params, x):
    return params["w"] ** 2 * x


def jacobian_read_by_key(params, x):
    """A Jacobian at a dict argument, taken inside transformed code and read by its keys."""
    jacobian = tr.jacrev(squared_weight)(params, x)
    return np.sum(jacobian["w"]) + np.sum(jacobian["b"])

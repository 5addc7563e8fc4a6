"""User functions for the pmap tests (real files: transforms read source)."""
import numpy as np

import transformer as tr
from transformer import lax


def scale_shift(x, w):
    return np.tanh(x * w) + 1.0


def normalize_rows(x):
    return x / lax.psum(np.sum(x), "i")


def centered(x):
    return x - lax.pmean(x, "i")


def extremes(x):
    return lax.pmax(np.max(x), "i") - lax.pmin(np.min(x), "i")


def gather_and_index(x):
    everyone = lax.all_gather(x, "i")
    me = lax.axis_index("i")
    return everyone[me] * 2.0 + me


def collective_in_loop(x):
    total = 0.0
    for k in range(3):
        if k % 2 == 0:
            total = total + lax.psum(np.sum(x) * k, "i")
        else:
            x = x - lax.pmean(x, "i")
    while total < 100.0:
        total = total + lax.psum(1.0, "i")
    return total + np.sum(x)


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def replicated_total(w, x):
    return lax.psum(np.sum(np.tanh(x * w)), "i")


def wrong_axis(x):
    return lax.psum(x, "j")


def fails_on_device_one(x):
    k = 1 // (lax.axis_index("i") - 1)      # device 1 divides by zero
    return lax.psum(x * k, "i")


def ragged(x):
    mine = x[:lax.axis_index("i") + 1]      # device d holds d + 1 elements
    return lax.psum(mine, "i")


def data_parallel_loss(w, x, y):
    """The loss at pmean(w): w is replicated so the value is loss(w); the adjoint of
    pmean averages the devices' gradients (a data-parallel step's gradient)."""
    return loss(lax.pmean(w, "i"), x, y)


def elementwise_loss(w, x, y):
    return np.mean((np.tanh(x * w) - y) ** 2)


def data_parallel_elementwise_loss(w, x, y):
    """data_parallel_loss without a matmul (the CUDA target has no lowering for dot's adjoint)."""
    return elementwise_loss(lax.pmean(w, "i"), x, y)


def one_sided(x):
    total = 0.0
    if lax.axis_index("i") == 0:
        total = lax.psum(np.sum(x), "i")      # device 1 never gets here
    return x + total


# ------------------------------------------------------------------ ppermute
RING = ((0, 1), (1, 0))       # a module constant: perm is known when the code is written


def ring_shift(x):
    return lax.ppermute(x, "i", RING)


def send_right_only(x):
    return lax.ppermute(np.sum(x), axis_name="i", perm=[(0, 1)])     # device 0 receives zeros


def ring_in_loop(x):
    """Passes along the ring in a loop and under a branch that depends on the device."""
    total = x * 0.0
    for k in range(3):
        x = lax.ppermute(x, "i", ((0, 1), (1, 0)))
        if lax.axis_index("i") == 0:
            total = total + x * (k + 1)
        else:
            total = total - x
    return total


def ring_loss(w, x):
    """A device's loss reads its neighbour's activations: gradients must travel back."""
    y = np.tanh(x * w)
    for k in range(2):
        y = lax.ppermute(y, "i", RING) * w + y
    return np.sum(y * y)


def ring_total(w, x):
    return lax.psum(ring_loss(w, x), "i")


def bad_perm(x):
    return lax.ppermute(x, "i", ((0, 1), (1, 1)))


def perm_from_data(x):
    k = int(x[0] > 0.0)
    return lax.ppermute(x, "i", ((0, k), (1, 1 - k)))


# ------------------------------------------------------------------ MPI program
# test_pmap_mpi.py runs this file under `mpiexec -n 2 python pmap_cases.py OUT_DIR SCENARIO...`;
# each rank writes OUT_DIR/SCENARIO-RANK.txt: a JSON result, or the error it caught
# (files, because two processes printing to one pipe can interleave their lines).
COLLECTIVE_CASES = (normalize_rows, centered, extremes, gather_and_index, collective_in_loop)


def mpi_inputs(rank):
    """Rank r's shard of the stacked test input (leading axis 1: this rank's one device)."""
    return np.arange(6.0).reshape(2, 3)[rank:rank + 1] * (1.0 + rank)


def train_inputs(rank):
    rng = np.random.default_rng(rank)
    return np.full(3, 0.3), rng.random((1, 4, 3)), rng.random((1, 4))


def _mpi_scenario(scenario, rank):
    if scenario == "collectives":
        found = {f.__name__: tr.pmap(f, axis_name="i", backend="mpi")(mpi_inputs(rank)).tolist()
                 for f in COLLECTIVE_CASES}
        found["devices"] = [repr(d) for d in tr.devices("mpi")]
        return found
    if scenario == "train_step":
        w, x, y = train_inputs(rank)
        local = tr.pmap(tr.jit(tr.grad(loss)), in_axes=(None, 0, 0), backend="mpi")
        mean = tr.pmap(tr.jit(tr.grad(data_parallel_loss)), axis_name="i", in_axes=(None, 0, 0), backend="mpi")
        return {"local": local(w, x, y).tolist(), "mean": mean(w, x, y).tolist()}
    if scenario == "ppermute":
        x = mpi_inputs(rank)
        w = np.array([0.3, -0.2, 0.5])
        return {"ring_shift": tr.pmap(ring_shift, axis_name="i", backend="mpi")(x).tolist(),
                "send_right_only": tr.pmap(send_right_only, axis_name="i", backend="mpi")(x).tolist(),
                "ring_in_loop": tr.pmap(ring_in_loop, axis_name="i", backend="mpi")(x).tolist(),
                "grad": tr.pmap(tr.grad(ring_loss), axis_name="i", in_axes=(None, 0),
                                backend="mpi")(w, x).tolist()}
    if scenario == "shapes_differ":
        return tr.pmap(centered, axis_name="i", backend="mpi")(np.ones((1, 2 + rank))).tolist()
    if scenario == "ragged":
        return tr.pmap(ragged, axis_name="i", backend="mpi")(np.ones((1, 3))).tolist()
    if scenario == "rank_fails":
        return tr.pmap(fails_on_device_one, axis_name="i", backend="mpi")(np.ones((1, 3))).tolist()
    raise SystemExit(f"unknown scenario {scenario!r}")


def _mpi_main(out_dir, scenarios):
    import json
    from pathlib import Path
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    for scenario in scenarios:
        try:
            text = json.dumps(_mpi_scenario(scenario, rank))
        except ValueError as err:
            text = f"caught {type(err).__name__}: {err}"
        (Path(out_dir) / f"{scenario}-{rank}.txt").write_text(text)


if __name__ == "__main__":
    import sys
    _mpi_main(sys.argv[1], sys.argv[2:])


RING_OF_FOUR = ((0, 1), (1, 2), (2, 3), (3, 0))


def ring_of_four(x):
    return lax.ppermute(x, "i", RING_OF_FOUR)


def dict_of_results(x):
    return {"b": x * 2.0, "a": x + 1.0}


def nested_results(x):
    return {"p": (x, x * 2.0), "q": [x * 3.0]}


def powered(x, n, mode):
    """pmap's static_broadcasted_argnums: ``n`` and ``mode`` are constants the code is specialised on."""
    y = x ** n
    if mode == "sum":
        y = lax.psum(y, "i")
    return y

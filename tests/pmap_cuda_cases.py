"""pmap(backend="cuda") on numba's CUDA simulator, run as a script by test_pmap_cuda.py.

The simulator shows ONE GPU, so the public API maps one device; the driver
threads and the host-staged collectives between devices are exercised by
running two shards on GPU 0 through ``cuda_devices.run`` (two host threads,
one per shard, each with GPU 0 current) — the same code path N real GPUs take.
Each case prints one JSON line: {"case": name, "outcome": "ok" | traceback}.
"""
import json
import os
import sys
import traceback

import numpy as np

import pmap_cases as cases
import transformer as tr
from transformer import lax
from oracles import central_difference_grad

X1 = np.arange(3.0).reshape(1, 3) + 1.0
X2 = np.arange(6.0).reshape(2, 3) * np.array([[1.0], [2.0]]) / 10.0
W = np.array([0.3, -0.2, 0.5])


def on_two_shards(fn, args_per_device, in_axes=0):
    """``fn``'s pmap shard on two devices that share GPU 0 (see the module docstring)."""
    from transformer.backends import cuda_devices
    pmapped = tr.pmap(fn, axis_name="i", in_axes=in_axes, backend="cuda")
    pmapped.shard.compiled(*args_per_device[0])      # built once, as Pmapped.__call__ does
    return cuda_devices.run(pmapped.shard, args_per_device, [0, 0])


def case_devices_lists_the_simulated_gpu():
    assert [repr(d) for d in tr.devices("cuda")] == ["CUDADevice(id=0)"]


def case_collectives_on_one_gpu_match_vmap():
    for fn in cases.COLLECTIVE_CASES:
        found = tr.pmap(fn, axis_name="i", backend="cuda")(X1)
        assert np.allclose(found, tr.vmap(fn, axis_name="i")(X1)), fn.__name__


def case_two_devices_collectives_in_loops_and_branches():
    for fn in cases.COLLECTIVE_CASES:
        found = np.stack(on_two_shards(fn, [(X2[0],), (X2[1],)]))
        assert np.allclose(found, tr.vmap(fn, axis_name="i")(X2)), fn.__name__


def case_two_devices_ppermute_ring_and_loop():
    assert np.array_equal(np.stack(on_two_shards(cases.ring_shift, [(X2[0],), (X2[1],)])), X2[::-1])
    found = np.stack(on_two_shards(cases.ring_in_loop, [(X2[0],), (X2[1],)]))
    assert np.allclose(found, tr.pmap(cases.ring_in_loop, axis_name="i")(X2))     # 2 local CPU devices


def case_two_devices_data_parallel_gradient_with_pmean():
    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal(3), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5))
    y = rng.standard_normal((2, 5, 3))
    found = on_two_shards(tr.grad(cases.data_parallel_elementwise_loss), [(w, x[d], y[d]) for d in (0, 1)],
                          in_axes=(None, 0, 0))
    full_batch = central_difference_grad(lambda v: cases.elementwise_loss(v, x, y), (w,))
    assert np.allclose(found, [full_batch, full_batch], atol=1e-6)


def reads_past_its_end_on_device_one(x):
    v = x[lax.axis_index("i") * 3]           # x has 3 elements: device 1 reads x[3]
    return lax.psum(x * v, "i")              # device 0 waits here meanwhile


def case_a_failing_device_ends_every_device():
    try:
        on_two_shards(reads_past_its_end_on_device_one, [(X2[0],), (X2[1],)])
    except IndexError as err:
        assert "(raised on pmap device 1)" in err.__notes__
    else:
        raise AssertionError("no error")


def case_unmapped_arguments_and_a_mean_over_one_device():
    found = tr.pmap(cases.scale_shift, in_axes=(0, None), backend="cuda")(X1, 0.5)
    assert np.allclose(found, np.tanh(X1 * 0.5) + 1.0)
    assert np.allclose(tr.pmap(cases.centered, axis_name="i", backend="cuda")(X1), 0.0)


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


if __name__ == "__main__":
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run me with NUMBA_ENABLE_CUDASIM=1 (see test_pmap_cuda.py)"
    os.environ["TRANSFORMER_CPU_DEVICES"] = "2"
    import simulator
    with simulator.launches_recorded():               # for tests/test_pmap_cuda.py's PTX check
        for name, case in CASES.items():
            try:
                case()
                outcome = "ok"
            except Exception:
                outcome = traceback.format_exc()
            print(json.dumps({"case": name, "outcome": outcome}))
            sys.stdout.flush()

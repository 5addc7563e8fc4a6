"""pmap on MPI: real processes under ``mpiexec -n 2``, each with a timeout.

The program is tests/pmap_cases.py run as a script: each rank prints one line
per scenario.  Skipped only when mpi4py or numba-mpi cannot be imported (the
``mpi`` extra is not installed); a missing mpiexec beside them is a failure.
"""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")
pytest.importorskip("numba_mpi")

import pmap_cases as cases  # noqa: E402
import transformer as tr  # noqa: E402

PROGRAM = Path(cases.__file__).resolve()


def mpiexec() -> str:
    """The mpiexec the mpich wheel installs beside this Python's scripts."""
    found = Path(sysconfig.get_path("scripts")) / "mpiexec"
    assert found.exists(), f"mpi4py is installed but there is no {found}: pip install mpich"
    return str(found)


def run_ranks(out_dir, *scenarios, timeout=400):
    return subprocess.run([mpiexec(), "-n", "2", sys.executable, str(PROGRAM), str(out_dir), *scenarios],
                          capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
                          cwd=PROGRAM.parent)


def lines_by_rank(out_dir, scenario):
    return {rank: (out_dir / f"{scenario}-{rank}.txt").read_text() for rank in (0, 1)}


@pytest.fixture(scope="module")
def agreeing_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("mpi")
    result = run_ranks(out_dir, "collectives", "train_step", "ppermute", "shapes_differ", "ragged")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out_dir


def test_collectives_over_two_ranks_match_vmap(agreeing_run):
    stacked = np.concatenate([cases.mpi_inputs(r) for r in (0, 1)])
    per_rank = {r: json.loads(text) for r, text in lines_by_rank(agreeing_run, "collectives").items()}
    assert per_rank[0]["devices"] == ["MPIDevice(id=0)", "MPIDevice(id=1)"]
    for fn in cases.COLLECTIVE_CASES:
        expected = tr.vmap(fn, axis_name="i")(stacked)
        found = np.concatenate([np.asarray(per_rank[r][fn.__name__]) for r in (0, 1)])
        assert np.allclose(found, expected), fn.__name__


def test_data_parallel_gradient_over_two_ranks(agreeing_run):
    per_rank = {r: json.loads(text) for r, text in lines_by_rank(agreeing_run, "train_step").items()}
    shards = [cases.train_inputs(r) for r in (0, 1)]
    local = [tr.grad(cases.loss)(w, x[0], y[0]) for w, x, y in shards]
    for r in (0, 1):
        assert np.allclose(per_rank[r]["local"], [local[r]])
        assert np.allclose(per_rank[r]["mean"], [(local[0] + local[1]) / 2])


def test_ppermute_over_two_ranks(agreeing_run):
    per_rank = {r: json.loads(text) for r, text in lines_by_rank(agreeing_run, "ppermute").items()}
    x = [cases.mpi_inputs(r)[0] for r in (0, 1)]
    assert np.array_equal(per_rank[0]["ring_shift"], [x[1]]) and np.array_equal(per_rank[1]["ring_shift"], [x[0]])
    assert per_rank[0]["send_right_only"] == [0.0] and per_rank[1]["send_right_only"] == [x[0].sum()]
    stacked = np.stack(x)
    local = {"ring_in_loop": tr.pmap(cases.ring_in_loop, axis_name="i"),      # 2 local CPU devices
             "grad": tr.pmap(tr.grad(cases.ring_loss), axis_name="i", in_axes=(None, 0))}
    expected = {"ring_in_loop": local["ring_in_loop"](stacked),
                "grad": local["grad"](np.array([0.3, -0.2, 0.5]), stacked)}
    for name, want in expected.items():
        found = np.concatenate([np.asarray(per_rank[r][name]) for r in (0, 1)])
        assert np.allclose(found, want), name


def test_shapes_that_differ_across_ranks_raise_on_every_rank(agreeing_run):
    for text in lines_by_rank(agreeing_run, "shapes_differ").values():
        assert text.startswith("caught ValueError: pmap on MPI needs the same argument shapes"), text
    for text in lines_by_rank(agreeing_run, "ragged").values():
        assert text.startswith("caught CollectiveMismatch: pmap ranks reached a collective with different"), text


def test_a_rank_that_fails_alone_ends_the_job_with_its_error(tmp_path):
    result = run_ranks(tmp_path, "rank_fails", timeout=300)     # a hang would time out and fail the test
    assert result.returncode != 0
    assert "ZeroDivisionError" in result.stderr
    assert "rank 1 failed alone; aborting every rank" in result.stderr
    assert not list(tmp_path.iterdir())                          # no rank returned a result

"""The CUDA target: each case of tests/cuda_cases.py must pass on numba's simulator,
and every kernel those cases launch must compile with the real CUDA compiler.

The cases run together in ONE subprocess with NUMBA_ENABLE_CUDASIM=1 (set
there before numba.cuda is imported), so the simulator never leaks into the
other tests; each case is reported here as its own test, with its traceback.
The same run records every kernel launch; each recorded kernel is then
compiled to PTX by NVVM and assembled by ptxas for Hopper (sm_90) and Ampere
(sm_80), with no GPU (see tests/simulator.py and transformer/backends/cuda_ptx.py).
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cuda_cases
import simulator


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    launches = tmp_path_factory.mktemp("cuda") / "launches.jsonl"
    return simulator.run_cases(Path(cuda_cases.__file__), timeout=1200, launches=launches)


@pytest.mark.parametrize("case", sorted(cuda_cases.CASES))
def test_cuda_case(case, simulated):
    assert case in simulated.outcomes, f"case {case} did not report (the run stopped early?)"
    assert simulated.outcomes[case] == "ok", simulated.outcomes[case]


@pytest.mark.parametrize("cc", ["9.0", "8.0"])
def test_every_kernel_the_cases_launch_compiles_to_ptx(cc, simulated):
    compiled = simulator.ptx_outcomes(simulated.launches, cc)
    kernels = {record["kernel"] for record in compiled}
    # the kinds of kernel the target writes or launches must all be among them
    for expected in ("chain_fused0_kernel", "vmap_damped_kernel", "vmap_grad_loop_loss_kernel",
                     "matmul_float64", "matmul_float32", "reduce_per_output", "reduce_chunks", "gather"):
        assert expected in kernels, f"{expected} was not launched: {sorted(kernels)}"
    assert len([k for k in kernels if k.endswith("_of_fused0_kernel")]) >= 60, "every elementwise primitive"
    refused = [record["outcome"] for record in compiled if record["outcome"] != "ok"]
    assert not refused, "\n\n".join(refused)
    assembled = [record for record in compiled if record["registers"] is not None]
    assert len(assembled) == len(compiled), "ptxas (from numba-cuda[cu12]'s toolkit wheels) did not run"
    assert all(record["spill_bytes"] == 0 for record in compiled), [r for r in compiled if r["spill_bytes"]]


def test_importing_transformer_does_not_import_numba_cuda():
    code = "import transformer, sys; print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def replaces_infinities(x):
    return np.nan_to_num(x * 2.0)


def test_a_primitive_device_code_cannot_call_is_refused_at_the_users_line():
    import transformer as tr
    with pytest.raises(tr.TransformError) as err:
        tr.jit(replaces_infinities, target="cuda").source(np.ones(3))
    assert "np.nan_to_num has no lowering on the cuda target" in str(err.value)
    assert f"test_cuda.py:{replaces_infinities.__code__.co_firstlineno + 1}" in str(err.value)

"""pmap(backend="cuda"): each case of tests/pmap_cuda_cases.py must pass on numba's simulator.

As in test_cuda.py, the cases run together in ONE subprocess with
NUMBA_ENABLE_CUDASIM=1 (set before numba.cuda is imported), so the simulator
never leaks into the other tests; each case is reported here as its own test,
and every kernel the run launched is compiled to PTX by the real compiler.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pmap_cuda_cases
import simulator


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    launches = tmp_path_factory.mktemp("pmap_cuda") / "launches.jsonl"
    return simulator.run_cases(Path(pmap_cuda_cases.__file__), timeout=900, launches=launches)


@pytest.mark.parametrize("case", sorted(pmap_cuda_cases.CASES))
def test_pmap_cuda_case(case, simulated):
    assert case in simulated.outcomes, f"case {case} did not report (the run stopped early?)"
    assert simulated.outcomes[case] == "ok", simulated.outcomes[case]


def test_every_kernel_of_the_device_code_compiles_to_ptx_for_sm_90(simulated):
    compiled = simulator.ptx_outcomes(simulated.launches, "9.0")
    assert any("_fused" in record["kernel"] for record in compiled), [r["kernel"] for r in compiled]
    refused = [record["outcome"] for record in compiled if record["outcome"] != "ok"]
    assert not refused, "\n\n".join(refused)


def test_without_a_gpu_or_the_simulator_cuda_devices_are_refused_clearly():
    code = ("import transformer as tr\n"
            "from numba import cuda\n"
            "if cuda.is_available():\n"
            "    print('a GPU is here')\n"
            "else:\n"
            "    try:\n"
            "        tr.devices('cuda')\n"
            "    except RuntimeError as err:\n"
            "        print(err)\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith(("no CUDA GPU is available for pmap(backend='cuda')", "a GPU is here")), out.stdout

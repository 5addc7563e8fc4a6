"""pmap(backend="cuda"): each case of tests/pmap_cuda_cases.py must pass on numba's simulator.

As in test_cuda.py, the cases run together in ONE subprocess with
NUMBA_ENABLE_CUDASIM=1 (set before numba.cuda is imported), so the simulator
never leaks into the other tests; each case is reported here as its own test.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pmap_cuda_cases
import simulator


@pytest.fixture(scope="module")
def outcomes():
    return simulator.outcomes_of(Path(pmap_cuda_cases.__file__), timeout=900)


@pytest.mark.parametrize("case", sorted(pmap_cuda_cases.CASES))
def test_pmap_cuda_case(case, outcomes):
    assert case in outcomes, f"case {case} did not report (the run stopped early?)"
    assert outcomes[case] == "ok", outcomes[case]


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

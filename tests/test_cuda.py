"""The CUDA target on numba's simulator: each case of tests/cuda_cases.py must pass.

The cases run together in ONE subprocess with NUMBA_ENABLE_CUDASIM=1 (set
there before numba.cuda is imported), so the simulator never leaks into the
other tests; each case is reported here as its own test, with its traceback.
"""
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_cases
import simulator


@pytest.fixture(scope="module")
def outcomes():
    return simulator.outcomes_of(Path(cuda_cases.__file__), timeout=1200)


@pytest.mark.parametrize("case", sorted(cuda_cases.CASES))
def test_cuda_case(case, outcomes):
    assert case in outcomes, f"case {case} did not report (the run stopped early?)"
    assert outcomes[case] == "ok", outcomes[case]


def test_importing_transformer_does_not_import_numba_cuda():
    code = "import transformer, sys; print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""The CUDA target on numba's simulator: each case of tests/cuda_cases.py must pass.

The cases run together in ONE subprocess with NUMBA_ENABLE_CUDASIM=1 (set
there before numba.cuda is imported), so the simulator never leaks into the
other tests; each case is reported here as its own test, with its traceback.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_cases

CASES_FILE = Path(cuda_cases.__file__)


@pytest.fixture(scope="module")
def outcomes():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    run = subprocess.run([sys.executable, str(CASES_FILE)], capture_output=True, text=True, env=env,
                         timeout=1200, cwd=CASES_FILE.parent)
    found = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            found[record["case"]] = record["outcome"]
    assert found, f"the simulator run reported nothing:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return found


@pytest.mark.parametrize("case", sorted(cuda_cases.CASES))
def test_cuda_case(case, outcomes):
    assert case in outcomes, f"case {case} did not report (the run stopped early?)"
    assert outcomes[case] == "ok", outcomes[case]


def test_importing_transformer_does_not_import_numba_cuda():
    code = "import transformer, sys; print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

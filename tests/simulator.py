"""Running a file of CUDA cases on numba's simulator, in a process of its own.

NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported, and once set
it stays for the life of the process; so the cases run together in ONE
subprocess, each printing a JSON line ``{"case": ..., "outcome": ...}``, and
the simulator never leaks into the other tests.
"""
import json
import os
import subprocess
import sys
from pathlib import Path


def outcomes_of(cases_file: Path, timeout: int) -> dict:
    """case name -> "ok" or its traceback, for every case the run reported."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    run = subprocess.run([sys.executable, str(cases_file)], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=cases_file.parent)
    found = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            found[record["case"]] = record["outcome"]
    assert found, f"the simulator run reported nothing:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return found

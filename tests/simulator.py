"""Running a file of CUDA cases on numba's simulator, in a process of its own,
and compiling every kernel it launched with the real CUDA compiler.

NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported, and once set
it stays for the life of the process; so the cases run together in ONE
subprocess, each printing a JSON line ``{"case": ..., "outcome": ...}``, and
the simulator never leaks into the other tests.

The simulator runs kernels as Python, so it proves values, not that a GPU
would run the code.  While the cases run, each kernel launch is recorded
(``cuda_ptx.recording_launches``: the kernel, its argument types, the user
line); ``ptx_outcomes`` then compiles each recorded kernel to PTX in a
process without the simulator, with numba-cuda's NVVM (no GPU needed).
"""
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

LAUNCHES_VARIABLE = "TRANSFORMER_CUDA_LAUNCHES"      # where the cases write their launch records


class SimulatorRun:
    def __init__(self, outcomes: dict, launches: Path):
        self.outcomes = outcomes        # case name -> "ok" or its traceback
        self.launches = launches        # the launch records (JSON lines)


def run_cases(cases_file: Path, timeout: int, launches: Path) -> SimulatorRun:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", **{LAUNCHES_VARIABLE: str(launches)})
    run = subprocess.run([sys.executable, str(cases_file)], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=cases_file.parent)
    found = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            found[record["case"]] = record["outcome"]
    assert found, f"the simulator run reported nothing:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    assert launches.exists(), f"the simulator run recorded no launches:\n{run.stderr[-3000:]}"
    return SimulatorRun(found, launches)


@contextlib.contextmanager
def launches_recorded():
    """In a case file run by ``run_cases``: record the kernel launches of the cases run inside."""
    path = os.environ.get(LAUNCHES_VARIABLE)
    if not path:
        yield
        return
    from transformer.backends import cuda_ptx
    with cuda_ptx.recording_launches() as found:
        yield
    cuda_ptx.write_launches(found, path)


def ptx_outcomes(launches: Path, cc: str, timeout: int = 600) -> list[dict]:
    """Each recorded kernel compiled to PTX for compute capability ``cc`` (e.g. "9.0"), and assembled
    by ptxas: one record per kernel, ``outcome`` "ok" or the compiler's refusal naming the user line."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run([sys.executable, "-m", "transformer.backends.cuda_ptx", str(launches), "--cc", cc],
                         capture_output=True, text=True, env=env, timeout=timeout)
    assert run.returncode == 0, f"compiling to PTX stopped:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]

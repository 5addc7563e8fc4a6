"""The heap policy for compiled code's temporaries (transformer/backends/heap.py): applied once numba
loads, on glibc, unless the environment turns it off."""
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")

_SCRIPT = ("from transformer.backends import cpu, heap; cpu.load_numba(); "
           "print(heap.keep_freed_memory())")


@pytest.mark.parametrize("setting, applied", [(None, "True"), ("0", "False"), ("1", "True")])
def test_policy_follows_the_environment(setting, applied):
    env = {k: v for k, v in os.environ.items() if k != "TRANSFORMER_KEEP_FREED_MEMORY"}
    if setting is not None:
        env["TRANSFORMER_KEEP_FREED_MEMORY"] = setting
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [applied]

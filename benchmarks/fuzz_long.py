"""The long differential-fuzzing run: many more random programs than CI.

    python benchmarks/fuzz_long.py            # 5000 programs across every property
    python benchmarks/fuzz_long.py 20000 -k grad

It runs tests/test_fuzz.py with TRANSFORMER_FUZZ_EXAMPLES set (randomized,
not the fixed CI examples), shares the budget across properties in the CI
proportions, and prints each failing program.  Turn every failure into a
named test in tests/regressions/.
"""
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def main(argv):
    total = argv[0] if argv and argv[0].isdigit() else "5000"
    extra = argv[1:] if argv and argv[0].isdigit() else argv
    env = dict(os.environ, TRANSFORMER_FUZZ_EXAMPLES=total)
    command = [sys.executable, "-m", "pytest", "-q", str(TESTS / "test_fuzz.py"), "-p", "no:cacheprovider",
               "--hypothesis-show-statistics", *extra]
    print(f"fuzzing {total} programs: {' '.join(command)}", flush=True)
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

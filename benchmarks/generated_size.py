"""How much code the derivative transforms write: generated lines per source line.

    python benchmarks/generated_size.py

For each function of tests/corpus_composition.py, counts the statements of
the user's function (its body: no blank, comment or docstring lines) and of
the generated function under grad, jvp and hessian (forward over reverse,
the function tr.show(tr.hessian(f)) shows), and prints the ratios.  Runs on
the python target: nothing is compiled.
"""
from __future__ import annotations

import inspect
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("TRANSFORMER_CACHE_DIR", tempfile.mkdtemp(prefix="generated_size-"))

import corpus_composition as corpus  # noqa: E402
import transformer as tr  # noqa: E402


def code_lines(text: str, skip_header: bool) -> int:
    """Lines of code in a function's text (the body only: the def line and header are not counted)."""
    lines = [line.strip() for line in text.splitlines()]
    if skip_header:           # from the generated module keep the function, less its def line
        start = next(i for i, line in enumerate(lines) if line.startswith("def "))
        lines = lines[start + 1:]
    else:
        lines = lines[next(i for i, line in enumerate(lines) if line.startswith("def ")) + 1:]
    return sum(1 for line in lines if line and not line.startswith(("#", '"""')))


def main():
    rows = []
    for fn, args in corpus.SCALAR_CASES[:2] + corpus.ARRAY_CASES:
        if any(fn is r[0] for r in rows):
            continue
        source = code_lines(inspect.getsource(fn), skip_header=False)
        sizes = {}
        for label, transformed in (("grad", tr.grad(fn)), ("jvp", None), ("hessian", tr.hessian(fn))):
            if label == "jvp":
                from transformer.staging import Step
                from transformer.transformed import Transformed
                transformed = Transformed.of(fn).then(Step("jvp", ()))
            sizes[label] = code_lines(transformed.source(*args) if label == "hessian" else transformed.source(),
                                      skip_header=True)
        rows.append((fn, source, sizes))
    print(f"{'function':<18}{'source':>7}{'grad':>7}{'jvp':>7}{'hessian':>9}{'hessian/source':>16}")
    for fn, source, sizes in rows:
        print(f"{fn.__name__:<18}{source:>7}{sizes['grad']:>7}{sizes['jvp']:>7}{sizes['hessian']:>9}"
              f"{sizes['hessian'] / source:>15.1f}x")
    total_source = sum(r[1] for r in rows)
    total = {k: sum(r[2][k] for r in rows) for k in ("grad", "jvp", "hessian")}
    print(f"{'total':<18}{total_source:>7}{total['grad']:>7}{total['jvp']:>7}{total['hessian']:>9}"
          f"{total['hessian'] / total_source:>15.1f}x")
    print("(user-function statements are counted after inlining nothing: helpers a function calls add "
          "generated lines the ratio charges to it)")


if __name__ == "__main__":
    main()

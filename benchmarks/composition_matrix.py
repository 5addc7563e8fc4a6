"""Print the composition matrix: each ordered pair outer(inner) of the ten transforms, for each
function tests/test_composition_matrix.py sweeps, as that test runs it, marked works (right against
the oracle), refused (a TransformError that is not a compile failure, or a TypeError that says what
is refused: grad of a non-scalar as JAX's, the Hessian of a tuple output, a Jacobian's own function
given a tuple) or FAILS (a wrong number, a compile failure or another exception), with the counts.
The tuple-argument function's second table is printed too, though the test leaves it out.

    python benchmarks/composition_matrix.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_composition_matrix as matrix   # noqa: E402

import transformer as tr                   # noqa: E402


REFUSALS = ("scalar output", "returning a tuple is not supported", "takes arrays and numbers",
            "apply jvp to the function before", "pytree arguments work when")


def cell(outer, inner, g, x, function) -> str:
    try:
        matrix.assert_pair(outer, inner, g, x, function)
    except tr.CompileError:
        return "FAILS"
    except tr.TransformError:
        return "refused"
    except (TypeError, ValueError) as error:     # the refusals that say what is refused and why
        return "refused" if any(words in str(error) for words in REFUSALS) else "FAILS"
    except Exception:       # noqa: BLE001  (a wrong number, or any other exception, fails the cell)
        return "FAILS"
    return "works"


def table(title, inners, function) -> dict:
    counts = {"works": 0, "refused": 0, "FAILS": 0}
    print(f"\n{title}, of the {function} function\n" + "outer \\ inner".ljust(14)
          + "".join(name[:9].ljust(10) for name in inners))
    for outer in matrix.TRANSFORMS:
        row = []
        for inner, (g, x) in inners.items():
            mark = cell(outer, inner, g, x, function)
            counts[mark] += 1
            row.append(mark.ljust(10))
        print(outer.ljust(14) + "".join(row))
    print("counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return counts


def main():
    failed = 0
    for function, (fn, _, _) in matrix.FUNCTIONS.items():
        fn = matrix.case.f_tree if function == "tree" else fn      # the user's function, of a tuple
        inside = {name: (matrix.case.INNER[function][name], matrix.point(name, function))
                  for name in matrix.TRANSFORMS}
        again = {name: (make(fn), matrix.point(name, function)) for name, make in matrix.API_INNER.items()}
        first = table("inner transform applied inside a function, outer transform applied to that function",
                      inside, function)
        second = table("outer transform applied to the inner transform's function", again, function)
        failed += first["FAILS"] + second["FAILS"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

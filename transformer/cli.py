"""The ``transformer`` command: look at the code the transforms write.

    transformer show model.py:loss --apply "jit(grad(f, argnums=1))" --passes
    transformer show model.py:step --target cuda --ptx --args "float64[1000, 3], float64"
    transformer check model.py
    transformer cache info | clear

``--apply`` is read with the ``ast`` module, never evaluated: only the known
transform names, the name ``f`` and literal arguments are accepted.  Mistakes
on the command line (a missing file or function, an ``--apply`` that does not
parse) are one line on stderr and exit code 2; a function the transformer
refuses is one line naming the user's file and line, and exit code 1.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import functools
import importlib.util
import inspect
import os
import sys
import textwrap
from pathlib import Path

# Transforms --apply may name, whether or not this version implements them yet.
TRANSFORM_NAMES = ("jit", "grad", "value_and_grad", "jvp", "vmap", "pmap",
                   "hessian", "jacfwd", "jacrev", "hvp")
USAGE_ERROR = 2
REFUSED = 1


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit code 2."""


# ------------------------------------------------------------ loading user code
def load_module(path_text: str):
    """Import a user's .py file as a module (its directory goes on sys.path for its imports)."""
    path = Path(path_text)
    if path.suffix != ".py":
        raise UsageError(f"{path_text}: expected a Python file ending in .py")
    if not path.is_file():
        raise UsageError(f"{path_text}: no such file")
    path = path.resolve()
    sys.path.insert(0, str(path.parent))
    name = path.stem if path.stem not in sys.modules else f"_transformer_cli_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # the user's module failed at import time; say why, briefly
        raise UsageError(f"{path_text}: importing it failed: {type(err).__name__}: {_first_line(err)}") from None
    return module


def split_target(spec: str) -> tuple[str, str | None]:
    """``model.py:loss`` -> ("model.py", "loss"); ``model.py`` -> ("model.py", None)."""
    file_part, sep, func = spec.rpartition(":")
    if not sep or not all(part.isidentifier() for part in func.split(".")):
        return spec, None
    return file_part, func


def find_function(module, dotted: str, file_text: str):
    value = module
    for part in dotted.split("."):
        if not hasattr(value, part):
            raise UsageError(f"{file_text}: no function named {dotted!r}")
        value = getattr(value, part)
    if not callable(value):
        raise UsageError(f"{file_text}: {dotted!r} is a {type(value).__name__}, not a function")
    return value


def functions_in(module) -> list:
    """Functions defined in the module's own file (plain or decorated), in source order."""
    found = []
    for name, value in vars(module).items():
        base = getattr(value, "__transformer_fn__", value)
        code = getattr(base, "__code__", None)
        if code is not None and Path(code.co_filename).resolve() == Path(module.__file__).resolve() \
                and not name.startswith("_"):
            found.append((code.co_firstlineno, name, value))
    return [(name, value) for _, name, value in sorted(found, key=lambda item: item[0])]


# ------------------------------------------------------------------- --apply
def apply_expression(text: str, f):
    """Apply the transforms named by ``text`` (e.g. "jit(grad(f, argnums=1))") to ``f``."""
    import transformer

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise UsageError(f"--apply {text!r} is not a Python expression: {err.msg}") from None

    def build(node):
        if isinstance(node, ast.Name) and node.id == "f":
            return f
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise UsageError(f"--apply: expected f or a transform call like grad(f), got {ast.unparse(node)!r}")
        name = node.func.id
        if name not in TRANSFORM_NAMES:
            raise UsageError(f"--apply: unknown transform {name!r}; known: {', '.join(TRANSFORM_NAMES)}")
        if not hasattr(transformer, name):
            raise UsageError(f"--apply: {name} is not implemented in transformer {transformer.__version__} yet")
        if not node.args:
            raise UsageError(f"--apply: {name}() needs the function as its first argument")
        inner = build(node.args[0])
        args = [_literal(arg, name) for arg in node.args[1:]]
        kwargs = {kw.arg: _literal(kw.value, name) for kw in node.keywords if kw.arg is not None}
        if any(kw.arg is None for kw in node.keywords):
            raise UsageError(f"--apply: {name}(**...) is not accepted; write the keywords out")
        try:
            return getattr(transformer, name)(inner, *args, **kwargs)
        except (TypeError, ValueError) as err:
            raise UsageError(f"--apply: {ast.unparse(node)}: {_first_line(err)}") from None

    return build(tree.body)


def _literal(node, transform: str):
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise UsageError(f"--apply: {transform}() arguments after the function must be literals, "
                         f"got {ast.unparse(node)!r}") from None


# --------------------------------------------------------------------- show
def command_show(args) -> int:
    from . import backends, show

    file_text, func_name = split_target(args.target_spec)
    if func_name is None:
        raise UsageError(f"{args.target_spec}: name the function as FILE.py:FUNC")
    module = load_module(file_text)
    user_fn = find_function(module, func_name, file_text)
    transformed = apply_expression(args.apply, user_fn) if args.apply else user_fn
    if not hasattr(transformed, "__transformer_fn__") and not inspect.isfunction(transformed):
        raise UsageError(f"--apply {args.apply!r} does not return a function, so there is no code to show")
    if getattr(transformed, "static_argnums", ()):
        raise UsageError("--apply: static_argnums are baked in from call-time values, which show does not have; "
                         "call tr.show(jitted, *args) with a call's arguments from Python instead")
    target = args.target or getattr(transformed, "target", None) or "python"
    if args.ptx:
        return show_ptx(args, target)
    if target not in backends.targets():
        raise UsageError(f"target {target!r} is not available in this version; "
                         f"available: {', '.join(backends.targets())}")

    generated = show(transformed, target=target)
    if args.passes:
        text = passes_text(transformed, target) + stage_header("generated module") + generated
    elif args.diff:
        text = diff_text(transformed, generated)
    else:
        text = generated
    write_code(text, color=use_color(args), lexer="diff" if args.diff and not args.passes else "python")
    return 0


# ---------------------------------------------------------------- show --ptx
def show_ptx(args, target: str) -> int:
    """The PTX of every kernel the function launches for ``--args``, as NVVM compiles it (no GPU needed).

    Two processes, since numba's simulator is set for a process's whole life: one runs the
    function on the simulator with example arguments and records each kernel launch, the other
    compiles each recorded kernel with the real compiler (see ``backends/cuda_ptx``)."""
    import subprocess
    import tempfile

    if target != "cuda":
        raise UsageError("--ptx shows the kernels of the cuda target: add --target cuda")
    if args.args is None:
        raise UsageError("--ptx needs --args: the arguments to compile for, e.g. --args \"float64[1000, 3], 2.0\" "
                         "(an array is DTYPE[SHAPE], filled with fixed random values; a number is itself)")
    example_arguments(args.args)                 # a mistake in --args is reported here, in one line
    with tempfile.TemporaryDirectory(prefix="transformer-ptx-") as directory:
        launches = Path(directory) / "launches.jsonl"
        script = ("import sys; from transformer import cli; "
                  "sys.exit(cli.record_launches(*sys.argv[1:]))")
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        run = subprocess.run([sys.executable, "-c", script, args.target_spec, args.apply or "f", args.args,
                              str(launches)], capture_output=True, text=True, env=env)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            return run.returncode
        env.pop("NUMBA_ENABLE_CUDASIM")
        run = subprocess.run([sys.executable, "-m", "transformer.backends.cuda_ptx", str(launches),
                              "--cc", args.cc, "--ptx"], capture_output=True, text=True, env=env)
        sys.stderr.write(run.stderr)
        write_code(run.stdout, color=False)
        return run.returncode


def example_arguments(text: str) -> list:
    """``"float64[100, 3], float32[7], 2.0, 5"`` -> arrays of those dtypes and shapes (fixed random
    values: data-dependent loops in the function run the same way every time) and the numbers."""
    import numpy as np

    try:
        items = ast.parse(f"({text},)", mode="eval").body.elts
    except SyntaxError:
        raise UsageError(f"--args {text!r}: expected DTYPE[SHAPE] or numbers, separated by commas") from None
    rng = np.random.default_rng(0)
    values = []
    for item in items:
        if isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name):
            try:
                dtype = np.dtype(item.value.id)
                shape = ast.literal_eval(item.slice)
            except (TypeError, ValueError):
                raise UsageError(f"--args: {ast.unparse(item)!r} is not DTYPE[SHAPE]") from None
            shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
            if dtype.kind == "f":
                values.append(rng.standard_normal(shape).astype(dtype))
            elif dtype.kind in "iu":
                values.append(rng.integers(1, 10, size=shape).astype(dtype))
            elif dtype.kind == "b":
                values.append(rng.random(shape) > 0.5)
            else:
                raise UsageError(f"--args: {dtype} arrays are not taken by the cuda target")
            continue
        try:
            values.append(ast.literal_eval(item))
        except ValueError:
            raise UsageError(f"--args: {ast.unparse(item)!r} is neither DTYPE[SHAPE] nor a number") from None
    return values


def record_launches(target_spec: str, apply: str, args_text: str, out: str) -> int:
    """(On the simulator, in a process of its own.)  Run the function and record its kernel launches."""
    import transformer
    from .backends import cuda_ptx

    def record():
        file_text, func_name = split_target(target_spec)
        user_fn = find_function(load_module(file_text), func_name, file_text)
        transformed = apply_expression(apply, user_fn)
        jitted = transformed if getattr(transformed, "target", None) == "cuda" else \
            transformer.jit(transformed, target="cuda")
        with cuda_ptx.recording_launches() as found:
            jitted(*example_arguments(args_text))
        cuda_ptx.write_launches(found, out)
        return 0

    return reported(record)


def stage_header(title: str) -> str:
    return f"\n# ==== {title} " + "=" * max(4, 60 - len(title)) + "\n"


def passes_text(transformed, target: str) -> str:
    """The code after each stage of the pipeline, as staging runs it."""
    from . import fence, source, staging
    from .normalize import normalize

    base = getattr(transformed, "__transformer_fn__", transformed)
    steps = tuple(getattr(transformed, "steps", ()))
    user = source.load(base)
    parts = [stage_header(f"source  [{user.short_filename}:{user.first_line}]"), user_source(base)]
    fence.check(user)
    parts += [stage_header("fence"), "# OK: nothing outside the supported subset\n"]
    core = normalize(base)
    parts += [stage_header("core form (normalize)"), core.code()]
    for step in steps:
        core = staging.apply_step(core, step)
        parts += [stage_header(f"after {step}"), core.code()]
    if target == "cpu":
        from .backends import numba_lowering
        parts += [stage_header("numba lowering (cpu)"), numba_lowering.lower(core).code()]
    return "".join(parts)


def user_source(fn) -> str:
    return textwrap.dedent(inspect.getsource(getattr(fn, "__transformer_fn__", fn)))


def diff_text(transformed, generated: str) -> str:
    base = getattr(transformed, "__transformer_fn__", transformed)
    before = user_source(base).splitlines(keepends=True)
    after = generated.splitlines(keepends=True)
    start = 0  # the module's header comments and imports would only be noise in a diff
    while start < len(after) and (after[start].startswith(("#", "import ", "from ")) or not after[start].strip()):
        start += 1
    name = os.path.basename(base.__code__.co_filename)
    return "".join(difflib.unified_diff(before, after[start:], fromfile=f"{name} ({base.__name__})",
                                        tofile="generated (header and imports left out)"))


def use_color(args) -> bool:
    return not args.no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()


def write_code(text: str, *, color: bool, lexer: str = "python") -> None:
    """Print code, highlighted by pygments when it is installed and stdout is a terminal."""
    if color:
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import DiffLexer, PythonLexer
        except ImportError:
            pass
        else:
            text = highlight(text, DiffLexer() if lexer == "diff" else PythonLexer(), TerminalFormatter())
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# -------------------------------------------------------------------- check
def command_check(args) -> int:
    import transformer
    from .errors import TransformError
    from .normalize import normalize
    from .transforms import INTERNAL, TRANSFORMS

    file_text, func_name = split_target(args.target_spec)
    module = load_module(file_text)
    if func_name is not None:
        functions = [(func_name, find_function(module, func_name, file_text))]
    else:
        functions = functions_in(module)
        if not functions:
            raise UsageError(f"{file_text}: defines no functions")
    from .backends import numba_lowering

    any_refused = False
    for name, fn in functions:
        base = getattr(fn, "__transformer_fn__", fn)
        print(f"{name}  [{os.path.basename(base.__code__.co_filename)}:{base.__code__.co_firstlineno}]")
        try:
            normalize(base)
        except TransformError as err:
            any_refused = True
            print(f"  refused   {err}")
            continue
        print("  ok        fence and core form")
        checks = [("jit: lowers for numba (numba checks types at the first call)",
                   lambda: numba_lowering.lower(normalize(base)))]
        # internal steps (pmap_shard, pick) are parts of public transforms, checked through those
        checks += [(step_name, functools.partial(transform_with_defaults, step_name, base))
                   for step_name in sorted(TRANSFORMS) if step_name not in INTERNAL]
        for label, attempt in checks:
            try:
                attempt()
            except TransformError as err:
                any_refused = True
                print(f"  refused   {label}: {err}")
            except Exception as err:  # a bug in transformer, not in the user's code: report it, go on
                any_refused = True
                print(f"  error     {label}: {type(err).__name__}: {_first_line(err)} "
                      f"(a transformer bug; please report it)")
            else:
                print(f"  ok        {label}")
    missing = [name for name in TRANSFORM_NAMES if not hasattr(transformer, name)]
    if missing:
        print(f"\nnot in transformer {transformer.__version__} yet: {', '.join(missing)}")
    return REFUSED if any_refused else 0


def transform_with_defaults(step_name: str, base):
    """The core form of ``base`` under one registered transform, with the public API's defaults.

    ``tr.vmap(f)`` fills in options (``in_axes=0``) the registry entry needs, so
    the public function is used where it returns a transformed function;
    where it needs values instead (``jvp(f, primals, tangents)``), the
    registry entry runs with its own defaults.
    """
    import transformer
    from . import staging
    from .normalize import normalize
    from .transforms import TRANSFORMS

    public = getattr(transformer, step_name, None)
    try:
        steps = getattr(public(base), "steps", None) if public else None
    except TypeError:
        steps = None
    if steps:
        return staging.make_core(base, steps)
    return TRANSFORMS[step_name](normalize(base))


# -------------------------------------------------------------------- cache
def command_cache(args) -> int:
    from . import cache

    directory = cache.cache_dir()
    modules = generated_modules(directory)
    if args.action == "info":
        files = [p for stem in modules for p in files_of(directory, stem)]
        size = sum(p.stat().st_size for p in files)
        print(f"directory:          {directory}")
        print(f"generated modules:  {len(modules)}")
        print(f"files (with .npz and numba's compiled cache): {len(files)}, {size / 1024:.1f} KiB")
        print("set TRANSFORMER_CACHE_DIR to use another directory")
    else:
        removed = 0
        for stem in modules:
            for path in files_of(directory, stem):
                path.unlink()
                removed += 1
        print(f"removed {removed} files of {len(modules)} generated modules from {directory}")
    return 0


def generated_modules(directory: Path) -> list[str]:
    """Stems of the files transformer wrote here: only those, so that a cache
    directory pointed somewhere shared never loses anyone else's files."""
    stems = []
    for path in sorted(directory.glob("*.py")):
        with path.open(errors="replace") as handle:
            if handle.readline().startswith("# Generated by transformer"):
                stems.append(path.stem)
    return stems


def files_of(directory: Path, stem: str) -> list[Path]:
    """A generated module, its array constants, and what Python and numba cached for it."""
    files = [directory / f"{stem}.py", directory / f"{stem}.npz"]
    files += sorted((directory / "__pycache__").glob(f"{stem}.*"))
    return [p for p in files if p.is_file()]


# --------------------------------------------------------------------- main
def parser() -> argparse.ArgumentParser:
    from . import __version__

    top = argparse.ArgumentParser(
        prog="transformer",
        description="See the code that transformer's jit/grad/vmap/... write for plain NumPy functions.",
        epilog="Run `transformer COMMAND --help` for each command.")
    top.add_argument("--version", action="version", version=f"transformer {__version__}")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)

    show = commands.add_parser(
        "show", help="print the generated source of a function",
        description="Print the generated source of FUNC in FILE.py, after the transforms in --apply.",
        epilog='example: transformer show model.py:loss --apply "jit(grad(f, argnums=1))" --passes')
    show.add_argument("target_spec", metavar="FILE.py:FUNC")
    show.add_argument("--apply", metavar="EXPR",
                      help="transforms to apply to the function, which is named f, e.g. "
                           "\"jit(grad(f, argnums=1))\"; arguments after f must be literals")
    show.add_argument("--target", choices=("cpu", "cuda", "python"),
                      help="backend to generate for (default: the target of jit in --apply, else python)")
    show.add_argument("--passes", action="store_true",
                      help="print the code after each stage: source, fence, core form, each transform, "
                           "numba lowering, generated module")
    show.add_argument("--diff", action="store_true", help="print a unified diff from the user's source")
    show.add_argument("--ptx", action="store_true",
                      help="with --target cuda: print the PTX of each kernel the function launches for --args, "
                           "compiled by numba-cuda's NVVM (no GPU needed), with ptxas's register count")
    show.add_argument("--args", metavar="ARGS",
                      help="for --ptx: the arguments to compile for, e.g. \"float64[1000, 3], 2.0\"")
    show.add_argument("--cc", default="9.0", help="for --ptx: compute capability (default 9.0, i.e. sm_90)")
    show.add_argument("--no-color", action="store_true", help="never highlight (it is off anyway when not a terminal)")
    show.set_defaults(run=command_show)

    check = commands.add_parser(
        "check", help="tell which transforms apply to each function in a file",
        description="For each function in FILE.py (or just FUNC), say whether it passes the fence and "
                    "normalizes, whether it lowers for numba, and which registered transforms accept it; "
                    "a refusal is printed with its file:line. numba's own type checks need argument "
                    "types, so they happen when the jitted function is first called. "
                    "Exit code 1 if anything is refused.")
    check.add_argument("target_spec", metavar="FILE.py[:FUNC]")
    check.set_defaults(run=command_check)

    cache_cmd = commands.add_parser(
        "cache", help="show or clear the directory of generated modules",
        description="The generated modules live in a per-user cache directory "
                    "(~/.cache/transformer unless TRANSFORMER_CACHE_DIR is set). "
                    "`clear` removes only files transformer wrote.")
    cache_cmd.add_argument("action", choices=("info", "clear"))
    cache_cmd.set_defaults(run=command_cache)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    return reported(lambda: args.run(args))


def reported(command) -> int:
    """Run a command; a usage mistake or a refusal is one line on stderr and its exit code."""
    from .errors import TransformError

    try:
        return command()
    except UsageError as err:
        print(f"transformer: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except TransformError as err:
        print(f"transformer: refused: {_first_line(err)}", file=sys.stderr)
        return REFUSED


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


if __name__ == "__main__":
    sys.exit(main())

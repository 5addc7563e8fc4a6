"""JAX names transformer does not have, and what a JAX program uses here instead.

A JAX program run with ``import transformer as jax`` meets these first as an AttributeError on the
module (``jax.lax.dynamic_slice``); each module's ``__getattr__`` answers with the hint, so the
user reads what to write, not only that the name is missing.
"""
from __future__ import annotations

# module ("" for transformer itself) -> name -> what to use instead
INSTEAD: dict[str, dict[str, str]] = {
    "": {
        "numpy": "import numpy as np: transformer transforms NumPy code itself (jax.numpy becomes numpy)",
        "scipy": "import scipy.special: its erf, erfc, erfinv, gammaln, digamma, polygamma, logsumexp and "
                 "ndtr are transformer primitives",
        "make_jaxpr": "transformer shows generated Python source instead: tr.show(f) or `transformer show`",
        "eval_shape": "call the function on small arrays of the shapes you want, or read the shapes in "
                      "tr.show(f)'s source",
        "ShapeDtypeStruct": "pass example arrays (np.zeros(shape, dtype)) where JAX takes a ShapeDtypeStruct",
        "named_call": "name a helper function instead: generated code names each user line",
        "debug": "print outside the transformed function (tr.jit(f, target='python') runs as plain NumPy, "
                 "where a breakpoint works)",
        "profiler": "time calls with time.perf_counter; benchmarks/ compares against JAX side by side",
        "shard_map": "use tr.pmap with tr.lax collectives (psum, pmean, all_gather, ppermute)",
        "pure_callback": "make the call outside the transformed function and pass its result in",
        "disable_jit": "use tr.jit(f, target='python'): the same transforms, run as plain NumPy",
    },
    "lax": {
        "dynamic_slice": "index with a slice: x[start:start + size] (its size must not depend on the data)",
        "dynamic_update_slice": "write into a copy: y = np.copy(x); y[start:start + n] = update "
                                "(or x.at[start:start + n].set(update))",
        "dynamic_index_in_dim": "index the array: x[i]",
        "associative_scan": "write the loop (for i in range(1, n): y[i] = op(y[i - 1], x[i])), or np.cumsum/np.cumprod",
        "reduce": "use np.sum, np.prod, np.max or np.min with axis=",
        "conv_general_dilated": "write the convolution with np.einsum or slices; np.convolve works for 1-D",
        "dot_general": "use np.einsum or np.tensordot",
        "batch_matmul": "use @ (np.matmul), which broadcasts batch dimensions",
        "div": "use x / y for floating point; lax.div rounds an integer quotient toward zero, which "
               "(x - np.fmod(x, y)) // y gives",
        "top_k": "use np.sort or np.argsort and a slice",
        "psum_scatter": "use lax.psum",
        "all_to_all": "use lax.all_gather and index the result",
    },
    "nn": {
        "initializers": "initialise with tr.random (normal, uniform) scaled as the initializer would",
        "dot_product_attention": "write it: tr.nn.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(d)) @ v",
    },
    "random": {
        "truncated_normal": "draw tr.random.normal and clip, or redraw outside the transformed function",
        "gamma": "draw it outside transformed code with NumPy's Generator (its numbers will differ from JAX's)",
        "beta": "draw it outside transformed code with NumPy's Generator (its numbers will differ from JAX's)",
        "dirichlet": "draw it outside transformed code with NumPy's Generator (its numbers will differ from JAX's)",
        "multivariate_normal": "use L @ tr.random.normal(key, (n,)) + mean with L = np.linalg.cholesky(cov)",
    },
}


def missing(module: str, name: str) -> AttributeError:
    """The AttributeError for ``transformer.<module>.<name>``: with the hint when JAX has the name."""
    where = "transformer" + (f".{module}" if module else "")
    hint = INSTEAD.get(module, {}).get(name)
    if hint is None:
        return AttributeError(f"module {where!r} has no attribute {name!r}")
    jax_name = "jax" + (f".{module}" if module else "") + f".{name}"
    return AttributeError(f"module {where!r} has no attribute {name!r} ({jax_name} in JAX): {hint}")

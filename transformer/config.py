"""``tr.config.update``, as JAX's ``jax.config.update``, for the flags a JAX program sets before it
runs.  transformer computes in NumPy's dtypes: float64 unless the arrays are float32, which is what
``jax_enable_x64=True`` asks of JAX; with False, pass float32 arrays to compute in float32."""
from __future__ import annotations

_ACCEPTED = {
    "jax_enable_x64": "transformer keeps NumPy's dtypes (float64 by default, float32 stays float32)",
    "jax_platform_name": "tr.jit(f) runs on the CPU; tr.jit(f, target='cuda') on a GPU",
    "jax_platforms": "tr.jit(f) runs on the CPU; tr.jit(f, target='cuda') on a GPU",
    "jax_debug_nans": "check results with np.isnan outside the transformed function",
    "jax_default_matmul_precision": "matrix products are computed in the arrays' own precision",
}

values: dict = {}


def update(name: str, value) -> None:
    """Record a JAX flag.  The flags above are accepted (each is what transformer does anyway, or has
    no meaning here); any other is refused, naming it."""
    if name not in _ACCEPTED:
        raise ValueError(f"transformer has no configuration flag {name!r}; the JAX flags it accepts are "
                         f"{', '.join(sorted(_ACCEPTED))}")
    values[name] = value


def read(name: str):
    """The value a flag was last given (None if never)."""
    return values.get(name)

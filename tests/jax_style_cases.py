"""User code for the JAX-name tests of tests/test_jax_programs.py (transforms read source)."""
import numpy as np

import transformer as jax
from transformer import lax


def takes_a_dynamic_slice(x):
    return np.sum(lax.dynamic_slice(x, (1,), (2,)))


def uses_relu6(x):
    return np.sum(jax.nn.relu6(x))

"""GradBench's ``lse``: log-sum-exp of a long vector, shifted by its maximum so exp cannot overflow."""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(n=6),
    "n1280000": dict(n=1_280_000),
}
WRT = (0,)


def inputs(n, seed=0):
    return (np.random.default_rng(seed).normal(size=n),)


def objective(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top

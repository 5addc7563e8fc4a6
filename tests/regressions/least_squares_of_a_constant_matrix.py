"""User functions of tests/regressions/test_least_squares_of_a_constant_matrix.py (transforms read source)."""
import numpy as np

DESIGN = np.cos(np.arange(24.0).reshape(8, 3))      # a fixed 8 x 3 design matrix


def fit(y):
    coefficients, residuals, rank, singular = np.linalg.lstsq(DESIGN, np.sin(y), rcond=None)
    return np.sum(coefficients ** 2) + np.sum(residuals) + np.sum(singular)

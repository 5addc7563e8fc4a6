import numpy as np


def sine_then_masked_write(x, mask):
    y = x + x
    t = np.sin(y)          # read before the write below...
    y[mask] = 0.0
    return t + y           # ...and used after it


def sine_then_row_write(x):
    y = x + x
    t = np.sin(y)
    y[1:] = x[:-1]
    return t + y

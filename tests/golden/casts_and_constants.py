def casts_and_constants(x):
    # y = x.astype(np.float32)   [frontend_cases.py:46]
    y = rt.astype(x, np.float32)
    # return np.float64(y) * np.pi + math.e   [frontend_cases.py:47]
    _t0 = rt.astype(y, np.float64)
    _t1 = _t0 * np.pi
    _t2 = _t1 + math.e
    return _t2

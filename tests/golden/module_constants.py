def module_constants(x):
    # return x * SCALE + OFFSETS[0] + np.sum(WEIGHTS * x)   [frontend_cases.py:184]
    _t0 = x * SCALE
    _t1 = OFFSETS[0]
    _t2 = _t0 + _t1
    _t3 = WEIGHTS * x
    _t4 = np.sum(_t3)
    _t5 = _t2 + _t4
    return _t5

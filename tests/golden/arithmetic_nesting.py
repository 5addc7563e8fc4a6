def arithmetic_nesting(x, y):
    # return (x * 2 + y) / (1 - x ** 2) - np.exp(-x)   [frontend_cases.py:24]
    _t0 = x * 2
    _t1 = _t0 + y
    _t2 = x ** 2
    _t3 = 1 - _t2
    _t4 = _t1 / _t3
    _t5 = -x
    _t6 = np.exp(_t5)
    _t7 = _t4 - _t6
    return _t7

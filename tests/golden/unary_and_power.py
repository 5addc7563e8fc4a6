def unary_and_power(x):
    # return -x ** 2 + +x - (-1.5)   [frontend_cases.py:28]
    _t0 = x ** 2
    _t1 = -_t0
    _t2 = +x
    _t3 = _t1 + _t2
    _t4 = _t3 - -1.5
    return _t4

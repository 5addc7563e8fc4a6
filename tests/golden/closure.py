def closure(x):
    # return x ** power + shift   [frontend_cases.py:191]
    _t0 = x ** power
    _t1 = _t0 + shift
    return _t1

def ternary(x):
    # return x if x > 0 else -x   [frontend_cases.py:82]
    _t1 = x > 0
    if _t1:
        _t0 = x
    else:
        _t0 = -x
    return _t0

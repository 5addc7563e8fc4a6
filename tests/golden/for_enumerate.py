def for_enumerate(x):
    # total = 0.0   [frontend_cases.py:118]
    total = 0.0
    # for i, v in enumerate(x):   [frontend_cases.py:119]
    _t0 = len(x)
    for i in range(_t0):
        v = x[i]
        # total += i * v   [frontend_cases.py:120]
        _t1 = i * v
        total = total + _t1
    # return total   [frontend_cases.py:121]
    return total

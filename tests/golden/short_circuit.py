def short_circuit(x, y):
    # both = x > 0 and y > 0   [frontend_cases.py:76]
    _t0 = x > 0
    if _t0:
        _t0 = y > 0
    both = _t0
    # either = x > 0 or y > 0   [frontend_cases.py:77]
    _t1 = x > 0
    _t2 = not _t1
    if _t2:
        _t1 = y > 0
    either = _t1
    # return both, either   [frontend_cases.py:78]
    return (both, either)

def tuple_unpacking(x, y):
    # a, b = x, y   [frontend_cases.py:61]
    a = x
    b = y
    # a, b = b, a   [frontend_cases.py:62]
    _t0 = a
    a = b
    b = _t0
    # pair = (a * 2, b)   [frontend_cases.py:63]
    _t1 = a * 2
    pair = (_t1, b)
    # first, second = pair   [frontend_cases.py:64]
    first = pair[0]
    second = pair[1]
    # return first - second   [frontend_cases.py:65]
    _t2 = first - second
    return _t2

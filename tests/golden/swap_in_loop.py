def swap_in_loop(n):
    # a, b = 0, 1   [frontend_cases.py:213]
    a = 0
    b = 1
    # for _ in range(n):   [frontend_cases.py:214]
    for _ in range(n):
        # a, b = b, a + b   [frontend_cases.py:215]
        _t0 = a + b
        a = b
        b = _t0
    # return a   [frontend_cases.py:216]
    return a

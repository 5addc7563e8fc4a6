def if_elif_else(x):
    # if x > 1:   [frontend_cases.py:86]
    _t0 = x > 1
    if _t0:
        # y = x * 2   [frontend_cases.py:87]
        y = x * 2
    else:
        # elif x > 0:   [frontend_cases.py:88]
        _t1 = x > 0
        if _t1:
            # y = x + 1   [frontend_cases.py:89]
            y = x + 1
        else:
            # y = 0.0   [frontend_cases.py:91]
            y = 0.0
    # return y   [frontend_cases.py:92]
    return y

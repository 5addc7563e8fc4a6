def early_return(x):
    # if x < 0:   [frontend_cases.py:96]
    _t0 = x < 0
    if _t0:
        # return 0.0   [frontend_cases.py:97]
        return 0.0
    # y = x * 3   [frontend_cases.py:98]
    y = x * 3
    # return y   [frontend_cases.py:99]
    return y

def for_range(x, n):
    # total = 0.0   [frontend_cases.py:104]
    total = 0.0
    # for i in range(1, n, 2):   [frontend_cases.py:105]
    for i in range(1, n, 2):
        # total += x[i]   [frontend_cases.py:106]
        _t0 = x[i]
        total = total + _t0
    # return total   [frontend_cases.py:107]
    return total

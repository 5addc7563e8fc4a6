def for_break(x):
    # total = 0.0   [frontend_cases.py:143]
    total = 0.0
    # for i in range(10):   [frontend_cases.py:144]
    for i in range(10):
        # if total > 5.0:   [frontend_cases.py:145]
        _t0 = total > 5.0
        if _t0:
            # break   [frontend_cases.py:146]
            break
        # total += x   [frontend_cases.py:147]
        total = total + x
    # return total   [frontend_cases.py:148]
    return total

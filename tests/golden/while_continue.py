def while_continue(x, n):
    # i = 0   [frontend_cases.py:132]
    i = 0
    # total = 0.0   [frontend_cases.py:133]
    total = 0.0
    # while i < n and total < 100.0:   [frontend_cases.py:134]
    _t0 = i < n
    if _t0:
        _t0 = total < 100.0
    while _t0:
        # i += 1   [frontend_cases.py:135]
        i = i + 1
        # if i % 2 == 0:   [frontend_cases.py:136]
        _t1 = i % 2
        _t2 = _t1 == 0
        if _t2:
            # continue   [frontend_cases.py:137]
            # again: while i < n and total < 100.0:   [frontend_cases.py:134]
            _t0 = i < n
            if _t0:
                _t0 = total < 100.0
            continue
        # total += x * i   [frontend_cases.py:138]
        _t3 = x * i
        total = total + _t3
        # again: while i < n and total < 100.0:   [frontend_cases.py:134]
        _t0 = i < n
        if _t0:
            _t0 = total < 100.0
    # return total   [frontend_cases.py:139]
    return total

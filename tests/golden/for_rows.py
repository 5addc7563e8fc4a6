def for_rows(m, w):
    # out = 0.0   [frontend_cases.py:111]
    out = 0.0
    # for row in m:   [frontend_cases.py:112]
    _t0 = len(m)
    for row_index in range(_t0):
        row = m[row_index]
        # out += row @ w   [frontend_cases.py:113]
        _t1 = row @ w
        out = out + _t1
    # return out   [frontend_cases.py:114]
    return out

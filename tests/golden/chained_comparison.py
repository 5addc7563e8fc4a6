def chained_comparison(x, lo, hi):
    # if lo < x < hi:   [frontend_cases.py:70]
    _t0 = lo < x
    if _t0:
        _t0 = x < hi
    if _t0:
        # return x   [frontend_cases.py:71]
        return x
    # return lo   [frontend_cases.py:72]
    return lo

def for_zip(x, y):
    # total = 0.0   [frontend_cases.py:125]
    total = 0.0
    # for a, b in zip(x, y):   [frontend_cases.py:126]
    _t0 = len(x)
    _t1 = len(y)
    _t2 = np.minimum(_t0, _t1)
    for zip_index in range(_t2):
        a = x[zip_index]
        b = y[zip_index]
        # total += a * b   [frontend_cases.py:127]
        _t3 = a * b
        total = total + _t3
    # return total   [frontend_cases.py:128]
    return total

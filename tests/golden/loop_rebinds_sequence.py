def loop_rebinds_sequence(x):
    # total = 0.0   [frontend_cases.py:205]
    total = 0.0
    # for v in x:   [frontend_cases.py:206]
    _t0 = x
    _t1 = len(_t0)
    for v_index in range(_t1):
        v = _t0[v_index]
        # x = x * 2.0   [frontend_cases.py:207]
        x = x * 2.0
        # total += v   [frontend_cases.py:208]
        total = total + v
    # return total + np.sum(x)   [frontend_cases.py:209]
    _t2 = np.sum(x)
    _t3 = total + _t2
    return _t3

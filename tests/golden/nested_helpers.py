def nested_helpers(x):
    # return _outer_helper(x)   [frontend_cases.py:171]
    # w = _inner_helper(v) + 1   [frontend_cases.py:166]
    # return np.sin(v) * 2   [frontend_cases.py:162]
    _t0 = np.sin(x)
    _t1 = _t0 * 2
    outer_helper_w = _t1 + 1
    # return _inner_helper(w)   [frontend_cases.py:167]
    # return np.sin(v) * 2   [frontend_cases.py:162]
    _t2 = np.sin(outer_helper_w)
    _t3 = _t2 * 2
    # return _outer_helper(x)   [frontend_cases.py:171]
    return _t3

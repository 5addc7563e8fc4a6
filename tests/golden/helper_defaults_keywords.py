def helper_defaults_keywords(x):
    # return _scaled(x) + _scaled(x, shift=1.0) + _scaled(x, 3.0)   [frontend_cases.py:158]
    # out = v * factor   [frontend_cases.py:153]
    scaled_out = x * 2.0
    # return out + shift   [frontend_cases.py:154]
    _t0 = scaled_out + 0.0
    # return _scaled(x) + _scaled(x, shift=1.0) + _scaled(x, 3.0)   [frontend_cases.py:158]
    # out = v * factor   [frontend_cases.py:153]
    scaled_out_1 = x * 2.0
    # return out + shift   [frontend_cases.py:154]
    _t1 = scaled_out_1 + 1.0
    # return _scaled(x) + _scaled(x, shift=1.0) + _scaled(x, 3.0)   [frontend_cases.py:158]
    _t2 = _t0 + _t1
    # out = v * factor   [frontend_cases.py:153]
    scaled_out_2 = x * 3.0
    # return out + shift   [frontend_cases.py:154]
    _t3 = scaled_out_2 + 0.0
    # return _scaled(x) + _scaled(x, shift=1.0) + _scaled(x, 3.0)   [frontend_cases.py:158]
    _t4 = _t2 + _t3
    return _t4

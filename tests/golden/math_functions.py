def math_functions(x):
    # return math.sin(x) + math_sin(x) + math.sqrt(x) + math.pi   [frontend_cases.py:180]
    _t0 = np.sin(x)
    _t1 = np.sin(x)
    _t2 = _t0 + _t1
    _t3 = np.sqrt(x)
    _t4 = _t2 + _t3
    _t5 = _t4 + math.pi
    return _t5

def aliases(x):
    # return xp.sin(x) + numpy.sin(x) + sin(x) + np.sin(x)   [frontend_cases.py:176]
    _t0 = np.sin(x)
    _t1 = np.sin(x)
    _t2 = _t0 + _t1
    _t3 = np.sin(x)
    _t4 = _t2 + _t3
    _t5 = np.sin(x)
    _t6 = _t4 + _t5
    return _t6

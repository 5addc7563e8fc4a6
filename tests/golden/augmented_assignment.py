def augmented_assignment(x, y):
    # z = x.copy()   [frontend_cases.py:52]
    z = np.copy(x)
    # z += y   [frontend_cases.py:53]
    z = z + y
    # z[0] *= 2.0   [frontend_cases.py:54]
    _t0 = z[0]
    _t1 = _t0 * 2.0
    z[0] = _t1
    # z[1:3] -= y[0]   [frontend_cases.py:55]
    _t2 = y[0]
    _t3 = z[1:3]
    _t4 = _t3 - _t2
    z[1:3] = _t4
    # z[-1] **= 2   [frontend_cases.py:56]
    _t5 = z[-1]
    _t6 = _t5 ** 2
    z[-1] = _t6
    # return z   [frontend_cases.py:57]
    return z

def methods_to_functions(x):
    # rows = x.shape[0]   [frontend_cases.py:33]
    _t0 = np.shape(x)
    rows = _t0[0]
    # total = x.sum(axis=1)   [frontend_cases.py:34]
    total = np.sum(x, axis=1)
    # flipped = x.T   [frontend_cases.py:35]
    flipped = np.transpose(x)
    # flat = x.reshape(rows * x.shape[1], 1)   [frontend_cases.py:36]
    _t1 = np.shape(x)
    _t2 = _t1[1]
    _t3 = rows * _t2
    flat = np.reshape(x, (_t3, 1))
    # return total, flipped, flat, x.mean()   [frontend_cases.py:37]
    _t4 = np.mean(x)
    return (total, flipped, flat, _t4)

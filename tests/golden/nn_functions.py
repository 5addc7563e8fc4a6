def nn_functions(x):
    # return tr.nn.softmax(x) + tr.nn.relu(x)   [frontend_cases.py:201]
    # shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))   (nn.py:177)
    _t0 = np.max(x, axis=-1, keepdims=True)
    _t1 = x - _t0
    softmax_shifted = np.exp(_t1)
    # return shifted / np.sum(shifted, axis=axis, keepdims=True)   (nn.py:178)
    _t2 = np.sum(softmax_shifted, axis=-1, keepdims=True)
    _t3 = softmax_shifted / _t2
    # return tr.nn.softmax(x) + tr.nn.relu(x)   [frontend_cases.py:201]
    # return np.where(x > 0.0, x, 0.0)   (nn.py:14)
    _t4 = x > 0.0
    _t5 = np.where(_t4, x, 0.0)
    _t6 = _t3 + _t5
    return _t6

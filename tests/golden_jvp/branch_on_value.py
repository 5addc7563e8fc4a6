def jvp_branch_on_value(x, x_dot):
    # if np.sum(x) > 0:   [corpus_forward.py:164]
    _t0 = np.sum(x)
    _t1 = _t0 > 0
    if _t1:
        # y = np.sin(x)   [corpus_forward.py:165]
        y = np.sin(x)
        # jvp of: y = np.sin(x)   [corpus_forward.py:165]
        _t7 = np.cos(x)
        y_dot = _t7 * x_dot
    else:
        # y = x * x   [corpus_forward.py:167]
        y = x * x
        # jvp of: y = x * x   [corpus_forward.py:167]
        _t4 = x_dot * x
        _t5 = x * x_dot
        y_dot = _t4 + _t5
    # return y * 2.0   [corpus_forward.py:168]
    _t2 = y * 2.0
    # jvp of: return y * 2.0   [corpus_forward.py:168]
    _t2_dot = y_dot * 2.0
    return (_t2, _t2_dot)

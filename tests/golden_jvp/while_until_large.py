def jvp_while_until_large(x, x_dot):
    # s = 0.1   [corpus_forward.py:196]
    s = 0.1
    # jvp of: s = 0.1   [corpus_forward.py:196]
    s_dot = 0.0
    # steps = 0   [corpus_forward.py:197]
    steps = 0
    # while s < 10.0:   [corpus_forward.py:198]
    _t0 = s < 10.0
    while _t0:
        # s = s * 1.5 + np.sum(x * x)   [corpus_forward.py:199]
        _t1 = s * 1.5
        # jvp of: s = s * 1.5 + np.sum(x * x)   [corpus_forward.py:199]
        _t1_dot = s_dot * 1.5
        _t2 = x * x
        _t8 = x_dot * x
        _t9 = x * x_dot
        _t2_dot = _t8 + _t9
        _t3 = np.sum(_t2)
        _t3_dot = np.sum(_t2_dot)
        s = _t1 + _t3
        s_dot = _t1_dot + _t3_dot
        # steps += 1   [corpus_forward.py:200]
        steps = steps + 1
        # again: while s < 10.0:   [corpus_forward.py:198]
        _t0 = s < 10.0
    # return s * steps   [corpus_forward.py:201]
    _t4 = s * steps
    # jvp of: return s * steps   [corpus_forward.py:201]
    _t4_dot = s_dot * steps
    return (_t4, _t4_dot)

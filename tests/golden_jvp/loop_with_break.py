def jvp_loop_with_break(x, x_dot):
    # acc = 1.0   [corpus_forward.py:205]
    acc = 1.0
    # jvp of: acc = 1.0   [corpus_forward.py:205]
    acc_dot = 0.0
    # for i in range(x.shape[0]):   [corpus_forward.py:206]
    _t0 = np.shape(x)
    _t1 = _t0[0]
    for i in range(_t1):
        # if x[i] > 0.9:   [corpus_forward.py:207]
        _t2 = x[i]
        _t3 = _t2 > 0.9
        if _t3:
            # break   [corpus_forward.py:208]
            break
        # acc = acc * (1.0 + x[i])   [corpus_forward.py:209]
        _t4 = x[i]
        # jvp of: acc = acc * (1.0 + x[i])   [corpus_forward.py:209]
        _t4_dot = x_dot[i]
        _t5 = 1.0 + _t4
        _t5_dot = _t4_dot
        _t7 = acc_dot * _t5
        _t8 = acc * _t5_dot
        acc_dot = _t7 + _t8
        acc = acc * _t5
    # return acc   [corpus_forward.py:210]
    return (acc, acc_dot)

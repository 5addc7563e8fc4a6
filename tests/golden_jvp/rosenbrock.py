def jvp_rosenbrock(x, x_dot):
    # total = 0.0   [corpus_forward.py:233]
    total = 0.0
    # jvp of: total = 0.0   [corpus_forward.py:233]
    total_dot = 0.0
    # for i in range(x.shape[0] - 1):   [corpus_forward.py:234]
    _t0 = np.shape(x)
    _t1 = _t0[0]
    _t2 = _t1 - 1
    for i in range(_t2):
        # total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2   [corpus_forward.py:235]
        _t3 = i + 1
        _t4 = x[_t3]
        # jvp of: total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2   [corpus_forward.py:235]
        _t4_dot = x_dot[_t3]
        _t5 = x[i]
        _t5_dot = x_dot[i]
        _t6 = _t5 ** 2
        _t15 = 2 * _t5
        _t6_dot = _t15 * _t5_dot
        _t7 = _t4 - _t6
        _t7_dot = _t4_dot - _t6_dot
        _t8 = _t7 ** 2
        _t25 = 2 * _t7
        _t8_dot = _t25 * _t7_dot
        _t9 = 100.0 * _t8
        _t9_dot = 100.0 * _t8_dot
        _t10 = x[i]
        _t10_dot = x_dot[i]
        _t11 = 1.0 - _t10
        _t11_dot = -_t10_dot
        _t12 = _t11 ** 2
        _t38 = 2 * _t11
        _t12_dot = _t38 * _t11_dot
        _t13 = _t9 + _t12
        _t13_dot = _t9_dot + _t12_dot
        total = total + _t13
        total_dot = total_dot + _t13_dot
    # return total   [corpus_forward.py:236]
    return (total, total_dot)

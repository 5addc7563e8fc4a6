def jvp_squares_into(x, x_dot):
    # out = np.zeros(x.shape[0])   [corpus_forward.py:141]
    _t0 = np.shape(x)
    _t1 = _t0[0]
    out = np.zeros(_t1)
    # jvp of: out = np.zeros(x.shape[0])   [corpus_forward.py:141]
    out_dot = np.zeros_like(out)
    # for i in range(x.shape[0]):   [corpus_forward.py:142]
    _t2 = np.shape(x)
    _t3 = _t2[0]
    for i in range(_t3):
        # out[i] = x[i] ** 2   [corpus_forward.py:143]
        _t4 = x[i]
        # jvp of: out[i] = x[i] ** 2   [corpus_forward.py:143]
        _t4_dot = x_dot[i]
        _t5 = _t4 ** 2
        _t7 = 2 * _t4
        _t5_dot = _t7 * _t4_dot
        out[i] = _t5
        out_dot[i] = _t5_dot
    # return out   [corpus_forward.py:144]
    return (out, out_dot)

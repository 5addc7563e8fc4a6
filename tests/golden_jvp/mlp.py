def jvp_mlp(x, w1, w2, x_dot, w1_dot, w2_dot):
    # hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t0 = w1 @ x
    # jvp of: hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t8 = w1_dot @ x
    _t9 = w1 @ x_dot
    _t0_dot = _t8 + _t9
    # return np.where(x > 0.0, x, 0.0)   (nn.py:14)
    _t1 = _t0 > 0.0
    hidden = np.where(_t1, _t0, 0.0)
    hidden_dot = np.where(_t1, _t0_dot, 0.0)
    # return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t3 = w2 @ hidden
    # jvp of: return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t12 = w2_dot @ hidden
    _t13 = w2 @ hidden_dot
    _t3_dot = _t12 + _t13
    # return 1.0 / (1.0 + np.exp(-x))   (nn.py:18)
    _t4 = -_t3
    _t4_dot = -_t3_dot
    _t5 = np.exp(_t4)
    _t5_dot = _t5 * _t4_dot
    _t6 = 1.0 + _t5
    _t6_dot = _t5_dot
    _t7 = 1.0 / _t6
    _t19 = _t7 * _t6_dot
    _t20 = _t19 / _t6
    _t7_dot = -_t20
    return (_t7, _t7_dot)

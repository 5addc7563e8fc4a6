def jvp_mlp(x, w1, w2, x_dot, w1_dot, w2_dot):
    # hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t0 = w1 @ x
    # jvp of: hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t7 = w1_dot @ x
    _t8 = w1 @ x_dot
    _t0_dot = _t7 + _t8
    # return np.maximum(x, 0.0)   (nn.py:11)
    _t1 = np.maximum(_t0, 0.0)
    _t10 = _t0 > 0.0
    _t11 = _t0_dot * _t10
    _t12 = 0.5 * _t0_dot
    _t13 = _t0 == 0.0
    _t14 = _t12 * _t13
    _t1_dot = _t11 + _t14
    # hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    hidden = _t1
    # jvp of: hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    hidden_dot = _t1_dot
    # return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t2 = w2 @ hidden
    # jvp of: return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t23 = w2_dot @ hidden
    _t24 = w2 @ hidden_dot
    _t2_dot = _t23 + _t24
    # return 1.0 / (1.0 + np.exp(-x))   (nn.py:15)
    _t3 = -_t2
    _t3_dot = -_t2_dot
    _t4 = np.exp(_t3)
    _t4_dot = _t4 * _t3_dot
    _t5 = 1.0 + _t4
    _t5_dot = _t4_dot
    _t6 = 1.0 / _t5
    _t30 = _t6 * _t5_dot
    _t31 = _t30 / _t5
    _t6_dot = -_t31
    return (_t6, _t6_dot)

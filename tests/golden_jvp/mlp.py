def jvp_mlp(x, w1, w2, x_dot, w1_dot, w2_dot):
    # hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t0 = w1 @ x
    # jvp of: hidden = tr.nn.relu(w1 @ x)   [corpus_forward.py:282]
    _t13 = w1_dot @ x
    _t14 = w1 @ x_dot
    _t0_dot = _t13 + _t14
    # return np.where(x > 0.0, x, 0.0)   (nn.py:14)
    _t1 = _t0 > 0.0
    hidden = np.where(_t1, _t0, 0.0)
    hidden_dot = np.where(_t1, _t0_dot, 0.0)
    # return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t3 = w2 @ hidden
    # jvp of: return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    _t17 = w2_dot @ hidden
    _t18 = w2 @ hidden_dot
    _t3_dot = _t17 + _t18
    # return lax.logistic(x)   (nn.py:18)
    # decay = np.exp(np.where(x >= 0, -x, x))     # exp(-|x|), with -|x|'s derivative everywhere   (lax.py:298)
    _t4 = _t3 >= 0
    _t5 = -_t3
    _t5_dot = -_t3_dot
    _t6 = np.where(_t4, _t5, _t3)
    _t6_dot = np.where(_t4, _t5_dot, _t3_dot)
    logistic_decay = np.exp(_t6)
    logistic_decay_dot = logistic_decay * _t6_dot
    # return np.where(x >= 0, 1.0 / (1.0 + decay), decay / (1.0 + decay))   (lax.py:299)
    _t7 = _t3 >= 0
    _t8 = 1.0 + logistic_decay
    _t8_dot = logistic_decay_dot
    _t9 = 1.0 / _t8
    _t25 = _t9 * _t8_dot
    _t26 = _t25 / _t8
    _t9_dot = -_t26
    _t10 = 1.0 + logistic_decay
    _t10_dot = logistic_decay_dot
    _t11 = logistic_decay / _t10
    _t29 = logistic_decay_dot / _t10
    _t30 = _t11 * _t10_dot
    _t31 = _t30 / _t10
    _t11_dot = _t29 - _t31
    _t12 = np.where(_t7, _t9, _t11)
    _t12_dot = np.where(_t7, _t9_dot, _t11_dot)
    # return tr.nn.sigmoid(w2 @ hidden)   [corpus_forward.py:283]
    return (_t12, _t12_dot)

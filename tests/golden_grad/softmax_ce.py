def grad_softmax_ce(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # p = tr.nn.softmax(x)   [corpus_grad.py:150]
    # shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))   (nn.py:177)
    _t0 = np.max(x, axis=-1, keepdims=True)
    _t1 = x - _t0
    softmax_shifted = np.exp(_t1)
    # return shifted / np.sum(shifted, axis=axis, keepdims=True)   (nn.py:178)
    _t2 = np.sum(softmax_shifted, axis=-1, keepdims=True)
    p = softmax_shifted / _t2
    # return -np.sum(np.log(p) * np.array([0.2, 0.3, 0.5]))   [corpus_grad.py:151]
    _t4 = np.log(p)
    _t5 = np.asarray((0.2, 0.3, 0.5))
    _t6 = _t4 * _t5
    _t7 = np.sum(_t6)
    _t8 = -_t7
    # backward sweep: cotangents flow from the output back to the inputs
    _t28 = rt.scalar_seed(_t8)
    # vjp of: return -np.sum(np.log(p) * np.array([0.2, 0.3, 0.5]))   [corpus_grad.py:151]
    _t9 = -_t28
    _t10 = rt.expand_to(_t9, _t6, axis=None, keepdims=False)
    _t11 = _t10 * _t5
    _t12 = rt.unbroadcast(_t11, _t4)
    _t15 = _t12 / p
    p_bar = _t15
    # vjp of: p = tr.nn.softmax(x)   [corpus_grad.py:150]
    _t16 = p_bar / _t2
    _t17 = rt.unbroadcast(_t16, softmax_shifted)
    _t18 = -p_bar
    _t19 = _t18 * p
    _t20 = _t19 / _t2
    _t21 = rt.unbroadcast(_t20, _t2)
    softmax_shifted_bar = _t17
    _t22 = rt.expand_to(_t21, softmax_shifted, axis=-1, keepdims=True)
    softmax_shifted_bar = softmax_shifted_bar + _t22
    _t23 = softmax_shifted_bar * softmax_shifted
    _t24 = rt.unbroadcast(_t23, x)
    _t25 = rt.unbroadcast(_t23, _t0)
    _t26 = -_t25
    x_bar = _t24
    _t27 = rt.extremum_vjp(_t26, x, _t0, axis=-1, keepdims=True)
    x_bar = x_bar + _t27
    return x_bar

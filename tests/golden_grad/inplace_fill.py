def grad_inplace_fill(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # y = np.zeros(4)   [corpus_grad.py:230]
    y = np.zeros(4)
    # for i in range(4):   [corpus_grad.py:231]
    for i in range(4):
        # y[i] = x[i] * x[i]   [corpus_grad.py:232]
        _t0 = x[i]
        _t1 = x[i]
        _t2 = _t0 * _t1
        y[i] = _t2
    # return np.sum(y * x)   [corpus_grad.py:233]
    _t3 = y * x
    _t4 = np.sum(_t3)
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    y_bar = rt.zeros_like(y)
    _t26 = rt.scalar_seed(_t4)
    # vjp of: return np.sum(y * x)   [corpus_grad.py:233]
    _t7 = rt.expand_to(_t26, _t3, axis=None, keepdims=False)
    _t8 = _t7 * x
    _t9 = rt.unbroadcast(_t8, y)
    _t10 = _t7 * y
    _t11 = rt.unbroadcast(_t10, x)
    y_bar = y_bar + _t9
    x_bar = x_bar + _t11
    # vjp of: for i in range(4):   [corpus_grad.py:231]
    for i in range(3, -1, -1):
        # recompute this iteration's values instead of taping them
        _t0 = x[i]
        _t1 = x[i]
        _t13 = y_bar[i]
        _t14 = rt.copy(_t13)
        _t15 = rt.unbroadcast(_t14, _t2)
        y_bar[i] = 0.0
        _t16 = _t15 * _t1
        _t17 = rt.unbroadcast(_t16, _t0)
        _t18 = _t15 * _t0
        _t19 = rt.unbroadcast(_t18, _t1)
        _t20 = x_bar[i]
        _t21 = _t20 + _t19
        x_bar[i] = _t21
        _t22 = x_bar[i]
        _t23 = _t22 + _t17
        x_bar[i] = _t23
    return x_bar

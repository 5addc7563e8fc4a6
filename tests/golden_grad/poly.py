def grad_poly(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # return np.sum(3.0 * x ** 3 - 2.0 * x ** 2 + x - 5.0)   [corpus_grad.py:28]
    _t0 = x ** 3
    _t1 = 3.0 * _t0
    _t2 = x ** 2
    _t3 = 2.0 * _t2
    _t4 = _t1 - _t3
    _t5 = _t4 + x
    _t6 = _t5 - 5.0
    _t7 = np.sum(_t6)
    # backward sweep: cotangents flow from the output back to the inputs
    _t43 = rt.scalar_seed(_t7)
    # vjp of: return np.sum(3.0 * x ** 3 - 2.0 * x ** 2 + x - 5.0)   [corpus_grad.py:28]
    _t8 = rt.expand_to(_t43, _t6, axis=None, keepdims=False)
    _t9 = rt.unbroadcast(_t8, _t5)
    _t12 = rt.unbroadcast(_t9, _t4)
    _t13 = rt.unbroadcast(_t9, x)
    x_bar = _t13
    _t14 = rt.unbroadcast(_t12, _t1)
    _t15 = -_t12
    _t16 = rt.unbroadcast(_t15, _t3)
    _t19 = _t16 * 2.0
    _t20 = rt.unbroadcast(_t19, _t2)
    _t21 = _t20 * 2
    _t24 = _t21 * x
    _t25 = rt.unbroadcast(_t24, x)
    x_bar = x_bar + _t25
    _t32 = _t14 * 3.0
    _t33 = rt.unbroadcast(_t32, _t0)
    _t34 = _t33 * 3
    _t36 = x ** 2
    _t37 = _t34 * _t36
    _t38 = rt.unbroadcast(_t37, x)
    x_bar = x_bar + _t38
    return x_bar

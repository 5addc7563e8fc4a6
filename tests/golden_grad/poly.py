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
    _t47 = rt.scalar_seed(_t7)
    # vjp of: return np.sum(3.0 * x ** 3 - 2.0 * x ** 2 + x - 5.0)   [corpus_grad.py:28]
    _t8 = rt.expand_to(_t47, _t6, axis=None, keepdims=False)
    x_bar = _t8
    _t16 = -_t8
    _t19 = _t16 * 2.0
    _t24 = _t19 * 2
    _t26 = _t24 * x
    x_bar = x_bar + _t26
    _t34 = _t8 * 3.0
    _t39 = _t34 * 3
    _t40 = x ** 2
    _t41 = _t39 * _t40
    x_bar = x_bar + _t41
    return x_bar

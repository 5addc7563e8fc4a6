def grad_helper_calls(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # return np.sum(_helper_square(x) + _helper_affine(x, 3.0))   [corpus_grad.py:444]
    # return v * v   [corpus_grad.py:432]
    _t0 = x * x
    # return np.sum(_helper_square(x) + _helper_affine(x, 3.0))   [corpus_grad.py:444]
    # return v * scale + shift   [corpus_grad.py:436]
    _t1 = x * 3.0
    _t2 = _t1 + 0.5
    _t3 = _t0 + _t2
    _t4 = np.sum(_t3)
    # backward sweep: cotangents flow from the output back to the inputs
    _t18 = rt.scalar_seed(_t4)
    # vjp of: return v * scale + shift   [corpus_grad.py:436]
    _t5 = rt.expand_to(_t18, _t3, axis=None, keepdims=False)
    _t10 = _t5 * 3.0
    x_bar = _t10
    # vjp of: return v * v   [corpus_grad.py:432]
    _t14 = _t5 * x
    _t16 = _t5 * x
    x_bar = x_bar + _t14
    x_bar = x_bar + _t16
    return x_bar

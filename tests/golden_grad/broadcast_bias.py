def grad_broadcast_bias(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # b = np.array([1.0, -2.0, 0.5])   [corpus_grad.py:108]
    b = np.asarray((1.0, -2.0, 0.5))
    # return np.sum((x + b) ** 2)   [corpus_grad.py:109]
    _t0 = x + b
    _t1 = _t0 ** 2
    _t2 = np.sum(_t1)
    # backward sweep: cotangents flow from the output back to the inputs
    _t17 = rt.scalar_seed(_t2)
    # vjp of: return np.sum((x + b) ** 2)   [corpus_grad.py:109]
    _t3 = rt.expand_to(_t17, _t1, axis=None, keepdims=False)
    _t7 = _t3 * 2
    _t9 = _t7 * _t0
    _t15 = rt.unbroadcast(_t9, x)
    x_bar = _t15
    return x_bar

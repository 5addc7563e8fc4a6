def grad_sin_sum(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # return np.sum(np.sin(x))   [corpus_grad.py:24]
    _t0 = np.sin(x)
    _t1 = np.sum(_t0)
    # backward sweep: cotangents flow from the output back to the inputs
    _t5 = rt.scalar_seed(_t1)
    # vjp of: return np.sum(np.sin(x))   [corpus_grad.py:24]
    _t2 = rt.expand_to(_t5, _t0, axis=None, keepdims=False)
    _t3 = np.cos(x)
    _t4 = _t2 * _t3
    x_bar = _t4
    return x_bar

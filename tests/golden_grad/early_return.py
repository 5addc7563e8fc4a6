def grad_early_return(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    _returned = False
    # if x[0] > 0:   [corpus_grad.py:354]
    _t0 = x[0]
    _t1 = _t0 > 0
    if _t1:
        # return np.sum(x * 2.0)   [corpus_grad.py:355]
        _t2 = x * 2.0
        _t3 = np.sum(_t2)
        _result = _t3
        _returned = True
    _t5 = not _returned
    if _t5:
        # y = x * x   [corpus_grad.py:356]
        y = x * x
        # return np.sum(y)   [corpus_grad.py:357]
        _t4 = np.sum(y)
        _result = _t4
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    _t18 = rt.scalar_seed(_result)
    _result_bar = _t18
    # vjp of: if x[0] > 0:   [corpus_grad.py:354]
    if _t5:
        # vjp of: return np.sum(y)   [corpus_grad.py:357]
        _t6 = _result_bar
        _result_bar = rt.zeros_like(_result_bar)
        _t7 = rt.expand_to(_t6, y, axis=None, keepdims=False)
        y_bar = _t7
        # vjp of: y = x * x   [corpus_grad.py:356]
        _t8 = y_bar * x
        _t10 = y_bar * x
        x_bar = x_bar + _t8
        x_bar = x_bar + _t10
    if _t1:
        # vjp of: return np.sum(x * 2.0)   [corpus_grad.py:355]
        _t13 = rt.expand_to(_result_bar, _t2, axis=None, keepdims=False)
        _t14 = _t13 * 2.0
        x_bar = x_bar + _t14
    return x_bar

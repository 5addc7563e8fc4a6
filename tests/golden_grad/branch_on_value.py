def grad_branch_on_value(x):
    y_stack = rt.stack()
    # forward sweep: the original computation, recording what the backward sweep needs
    # if np.sum(x) > 0:   [corpus_grad.py:261]
    _t0 = np.sum(x)
    _t1 = _t0 > 0
    if _t1:
        # y = x * 2.0   [corpus_grad.py:262]
        y = x * 2.0
        y_stack = rt.push(y_stack, y)
    else:
        # y = np.exp(x)   [corpus_grad.py:264]
        y = np.exp(x)
        y_stack = rt.push(y_stack, y)
    # return np.sum(y * x)   [corpus_grad.py:265]
    _t2 = y * x
    _t3 = np.sum(_t2)
    # backward sweep: cotangents flow from the output back to the inputs
    _t14 = rt.scalar_seed(_t3)
    # vjp of: return np.sum(y * x)   [corpus_grad.py:265]
    _t4 = rt.expand_to(_t14, _t2, axis=None, keepdims=False)
    y = rt.top(y_stack)
    _t5 = _t4 * x
    _t7 = _t4 * y
    y_bar = _t5
    x_bar = _t7
    # vjp of: if np.sum(x) > 0:   [corpus_grad.py:261]
    if _t1:
        # vjp of: y = x * 2.0   [corpus_grad.py:262]
        y = rt.pop(y_stack)
        _t9 = y_bar * 2.0
        x_bar = x_bar + _t9
    else:
        # vjp of: y = np.exp(x)   [corpus_grad.py:264]
        y = rt.pop(y_stack)
        _t13 = y_bar * y
        x_bar = x_bar + _t13
    return x_bar

def grad_shifted_rates(x):
    y_stack = rt.stack()
    _t2_stack = rt.stack()
    # forward sweep: the original computation, recording what the backward sweep needs
    # y = np.sin(x)   [corpus_grad.py:760]
    y = np.sin(x)
    y_stack = rt.push(y_stack, y)
    # for _ in range(2):   [corpus_grad.py:761]
    for _ in range(2):
        # z = np.empty_like(y)   [corpus_grad.py:762]
        z = np.empty_like(y)
        # z[0] = x[0]   [corpus_grad.py:763]
        _t0 = x[0]
        z[0] = _t0
        # z[1:] = x[1:] * y[:-1]   [corpus_grad.py:764]
        _t1 = x[1:]
        _t2 = y[:-1]
        _t2_stack = rt.push(_t2_stack, _t2)
        _t3 = _t1 * _t2
        z[1:] = _t3
        # y = y + 0.5 * z   [corpus_grad.py:765]
        _t4 = 0.5 * z
        y = y + _t4
        y_stack = rt.push(y_stack, y)
    # return np.sum(y ** 2)   [corpus_grad.py:766]
    _t5 = y ** 2
    _t6 = np.sum(_t5)
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    y_bar = rt.zeros_like(y)
    _t43 = rt.scalar_seed(_t6)
    # vjp of: return np.sum(y ** 2)   [corpus_grad.py:766]
    _t7 = rt.expand_to(_t43, _t5, axis=None, keepdims=False)
    y = rt.top(y_stack)
    _t11 = _t7 * 2
    _t12 = y
    _t13 = _t11 * _t12
    y_bar = y_bar + _t13
    # vjp of: for _ in range(2):   [corpus_grad.py:761]
    for _ in range(1, -1, -1):
        # recompute this iteration's values instead of taping them
        _t1 = x[1:]
        # vjp of: y = y + 0.5 * z   [corpus_grad.py:765]
        _t19 = rt.pop(y_stack)
        _t20 = y_bar
        _t21 = y_bar
        y = rt.top(y_stack)
        y_bar = rt.zeros_like(y)
        y_bar = y_bar + _t20
        _t24 = _t21 * 0.5
        z_bar = _t24
        # vjp of: z[1:] = x[1:] * y[:-1]   [corpus_grad.py:764]
        _t26 = z_bar[1:]
        _t2 = rt.top(_t2_stack)
        _t27 = _t26 * _t2
        _t29 = _t26 * _t1
        _t2 = rt.pop(_t2_stack)
        _t31 = y_bar[:-1]
        _t32 = _t31 + _t29
        y_bar[:-1] = _t32
        _t33 = x_bar[1:]
        _t34 = _t33 + _t27
        x_bar[1:] = _t34
        # vjp of: z[0] = x[0]   [corpus_grad.py:763]
        _t35 = z_bar[0]
        _t36 = rt.unbroadcast(_t35, _t0)
        _t37 = x_bar[0]
        _t38 = _t37 + _t36
        x_bar[0] = _t38
    # vjp of: y = np.sin(x)   [corpus_grad.py:760]
    y = rt.pop(y_stack)
    _t41 = np.cos(x)
    _t42 = y_bar * _t41
    x_bar = x_bar + _t42
    return x_bar

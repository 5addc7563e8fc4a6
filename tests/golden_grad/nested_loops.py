def grad_nested_loops(x):
    s_stack = rt.stack()
    # forward sweep: the original computation, recording what the backward sweep needs
    # s = 0.0   [corpus_grad.py:370]
    s = 0.0
    s_stack = rt.push(s_stack, s)
    # for i in range(3):   [corpus_grad.py:371]
    for i in range(3):
        # for j in range(3):   [corpus_grad.py:372]
        for j in range(3):
            # s = s + x[i, j] * (i - j)   [corpus_grad.py:373]
            _t0 = x[i, j]
            _t1 = i - j
            _t2 = _t0 * _t1
            s = s + _t2
            s_stack = rt.push(s_stack, s)
    # return s * s   [corpus_grad.py:374]
    _t3 = s * s
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    _t21 = rt.scalar_seed(_t3)
    # vjp of: return s * s   [corpus_grad.py:374]
    s = rt.top(s_stack)
    _t4 = _t21 * s
    _t6 = _t21 * s
    s_bar = _t4
    s_bar = s_bar + _t6
    # vjp of: for i in range(3):   [corpus_grad.py:371]
    for i in range(2, -1, -1):
        # vjp of: for j in range(3):   [corpus_grad.py:372]
        for j in range(2, -1, -1):
            _t1 = i - j
            # vjp of: s = s + x[i, j] * (i - j)   [corpus_grad.py:373]
            _t8 = rt.pop(s_stack)
            s = rt.top(s_stack)
            _t9 = rt.unbroadcast(s_bar, s)
            _t10 = rt.unbroadcast(s_bar, _t2)
            s_bar = _t9
            _t11 = _t10 * _t1
            _t15 = x_bar[i, j]
            _t16 = _t15 + _t11
            x_bar[i, j] = _t16
    # vjp of: s = 0.0   [corpus_grad.py:370]
    s = rt.pop(s_stack)
    return x_bar

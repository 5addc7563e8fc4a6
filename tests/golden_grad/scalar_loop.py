def grad_scalar_loop(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # s = 0.0   [corpus_grad.py:285]
    s = 0.0
    # for i in range(len(x)):   [corpus_grad.py:286]
    _t0 = len(x)
    x_bar = rt.zeros_like(x)
    # both sweeps in one loop: each iteration's adjoint only adds into gradients, so it runs right after the iteration, not in a second loop backwards
    for i in range(_t0):
        # s = s + x[i] * x[i] * (i + 1)   [corpus_grad.py:287]
        _t1 = x[i]
        _t2 = x[i]
        _t3 = _t1 * _t2
        _t4 = i + 1
        _t5 = _t3 * _t4
        s = s + _t5
        # vjp of this iteration; the cotangent it carries is grad's seed in every iteration
        _t22 = rt.scalar_seed(s)
        s_bar = _t22
        _t7 = rt.unbroadcast(s_bar, _t5)
        _t8 = _t7 * _t4
        _t12 = _t8 * _t2
        _t13 = rt.unbroadcast(_t12, _t1)
        _t14 = _t8 * _t1
        _t15 = rt.unbroadcast(_t14, _t2)
        _t16 = x_bar[i]
        _t17 = _t16 + _t15
        x_bar[i] = _t17
        _t18 = x_bar[i]
        _t19 = _t18 + _t13
        x_bar[i] = _t19
    # grad's check that the output is a scalar, also when the loop ran no iteration
    _t22 = rt.scalar_seed(s)
    return x_bar

def grad_rosenbrock(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # s = 0.0   [corpus_grad.py:292]
    s = 0.0
    # for i in range(len(x) - 1):   [corpus_grad.py:293]
    _t0 = len(x)
    _t1 = _t0 - 1
    x_bar = rt.zeros_like(x)
    # both sweeps in one loop: each iteration's adjoint only adds into gradients, so it runs right after the iteration, not in a second loop backwards
    for i in range(_t1):
        # s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2   [corpus_grad.py:294]
        _t2 = i + 1
        _t3 = x[_t2]
        _t4 = x[i]
        _t5 = _t4 ** 2
        _t6 = _t3 - _t5
        _t7 = _t6 ** 2
        _t8 = 100.0 * _t7
        _t9 = x[i]
        _t10 = 1 - _t9
        _t11 = _t10 ** 2
        _t12 = _t8 + _t11
        s = s + _t12
        # vjp of this iteration; the cotangent it carries is grad's seed in every iteration
        _t68 = rt.scalar_seed(s)
        s_bar = _t68
        _t14 = rt.unbroadcast(s_bar, _t12)
        _t15 = rt.unbroadcast(_t14, _t8)
        _t16 = rt.unbroadcast(_t14, _t11)
        _t20 = _t16 * 2
        _t22 = _t20 * _t10
        _t30 = -_t22
        _t31 = x_bar[i]
        _t32 = _t31 + _t30
        x_bar[i] = _t32
        _t35 = _t15 * 100.0
        _t40 = _t35 * 2
        _t42 = _t40 * _t6
        _t48 = rt.unbroadcast(_t42, _t3)
        _t49 = rt.unbroadcast(_t42, _t5)
        _t50 = -_t49
        _t54 = _t50 * 2
        _t56 = _t54 * _t4
        _t62 = x_bar[i]
        _t63 = _t62 + _t56
        x_bar[i] = _t63
        _t64 = x_bar[_t2]
        _t65 = _t64 + _t48
        x_bar[_t2] = _t65
    # grad's check that the output is a scalar, also when the loop ran no iteration
    _t68 = rt.scalar_seed(s)
    return x_bar

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
        _t71 = rt.scalar_seed(s)
        s_bar = _t71
        _t14 = rt.unbroadcast(s_bar, _t12)
        _t15 = rt.unbroadcast(_t14, _t8)
        _t16 = rt.unbroadcast(_t14, _t11)
        _t20 = _t16 * 2
        _t23 = _t20 * _t10
        _t24 = rt.unbroadcast(_t23, _t10)
        _t30 = -_t24
        _t31 = rt.unbroadcast(_t30, _t9)
        _t32 = x_bar[i]
        _t33 = _t32 + _t31
        x_bar[i] = _t33
        _t36 = _t15 * 100.0
        _t37 = rt.unbroadcast(_t36, _t7)
        _t41 = _t37 * 2
        _t44 = _t41 * _t6
        _t45 = rt.unbroadcast(_t44, _t6)
        _t50 = rt.unbroadcast(_t45, _t3)
        _t51 = -_t45
        _t52 = rt.unbroadcast(_t51, _t5)
        _t56 = _t52 * 2
        _t59 = _t56 * _t4
        _t60 = rt.unbroadcast(_t59, _t4)
        _t65 = x_bar[i]
        _t66 = _t65 + _t60
        x_bar[i] = _t66
        _t67 = x_bar[_t2]
        _t68 = _t67 + _t50
        x_bar[_t2] = _t68
    # grad's check that the output is a scalar, also when the loop ran no iteration
    _t71 = rt.scalar_seed(s)
    return x_bar

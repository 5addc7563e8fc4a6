def grad_rosenbrock_slices(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)   [corpus_grad.py:755]
    _t0 = x[1:]
    _t1 = x[:-1]
    _t2 = _t1 ** 2
    _t3 = _t0 - _t2
    _t4 = _t3 ** 2
    _t5 = 100.0 * _t4
    _t6 = x[:-1]
    _t7 = 1.0 - _t6
    _t8 = _t7 ** 2
    _t9 = _t5 + _t8
    _t10 = np.sum(_t9)
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    _t63 = rt.scalar_seed(_t10)
    # vjp of: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)   [corpus_grad.py:755]
    _t11 = rt.expand_to(_t63, _t9, axis=None, keepdims=False)
    _t17 = _t11 * 2
    _t19 = _t17 * _t7
    _t27 = -_t19
    _t28 = x_bar[:-1]
    _t29 = _t28 + _t27
    x_bar[:-1] = _t29
    _t32 = _t11 * 100.0
    _t37 = _t32 * 2
    _t39 = _t37 * _t3
    _t47 = -_t39
    _t51 = _t47 * 2
    _t53 = _t51 * _t1
    _t59 = x_bar[:-1]
    _t60 = _t59 + _t53
    x_bar[:-1] = _t60
    _t61 = x_bar[1:]
    _t62 = _t61 + _t39
    x_bar[1:] = _t62
    return x_bar

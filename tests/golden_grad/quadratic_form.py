def grad_quadratic_form(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # a = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])   [corpus_grad.py:168]
    a = np.asarray(((2.0, 0.5, 0.0), (0.5, 1.0, 0.3), (0.0, 0.3, 3.0)))
    # return np.dot(x, np.dot(a, x))   [corpus_grad.py:169]
    _t0 = np.dot(a, x)
    _t1 = np.dot(x, _t0)
    # backward sweep: cotangents flow from the output back to the inputs
    _t6 = rt.scalar_seed(_t1)
    # vjp of: return np.dot(x, np.dot(a, x))   [corpus_grad.py:169]
    _t2 = rt.dot_vjp_x(_t6, x, _t0)
    _t3 = rt.dot_vjp_y(_t6, x, _t0)
    x_bar = _t2
    _t5 = rt.dot_vjp_y(_t3, a, x)
    x_bar = x_bar + _t5
    return x_bar

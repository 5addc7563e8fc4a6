def grad_rnn(x):
    h_stack = rt.stack()
    _t1_stack = rt.stack()
    # forward sweep: the original computation, recording what the backward sweep needs
    # w = np.array([[0.5, -0.2], [0.3, 0.4]])   [corpus_grad.py:399]
    w = np.asarray(((0.5, -0.2), (0.3, 0.4)))
    # h = np.zeros(2)   [corpus_grad.py:400]
    h = np.zeros(2)
    h_stack = rt.push(h_stack, h)
    # for t in range(len(x)):   [corpus_grad.py:401]
    _t0 = len(x)
    for t in range(_t0):
        # h = np.tanh(np.dot(w, h) + x[t])   [corpus_grad.py:402]
        _t1 = np.dot(w, h)
        _t1_stack = rt.push(_t1_stack, _t1)
        _t2 = x[t]
        _t3 = _t1 + _t2
        h = np.tanh(_t3)
        h_stack = rt.push(h_stack, h)
    # return np.sum(h)   [corpus_grad.py:403]
    _t4 = np.sum(h)
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    _t17 = rt.scalar_seed(_t4)
    # vjp of: return np.sum(h)   [corpus_grad.py:403]
    h = rt.top(h_stack)
    _t5 = rt.expand_to(_t17, h, axis=None, keepdims=False)
    h_bar = _t5
    # vjp of: for t in range(len(x)):   [corpus_grad.py:401]
    _t15 = _t0 - 1
    for t in range(_t15, -1, -1):
        # vjp of: h = np.tanh(np.dot(w, h) + x[t])   [corpus_grad.py:402]
        h = rt.pop(h_stack)
        _t6 = h * h
        _t7 = 1.0 - _t6
        _t8 = h_bar * _t7
        _t1 = rt.top(_t1_stack)
        _t9 = rt.unbroadcast(_t8, _t1)
        _t10 = rt.unbroadcast(_t8, _t2)
        _t11 = x_bar[t]
        _t12 = _t11 + _t10
        x_bar[t] = _t12
        _t1 = rt.pop(_t1_stack)
        h = rt.top(h_stack)
        _t14 = rt.dot_vjp_y(_t9, w, h)
        h_bar = _t14
    # vjp of: h = np.zeros(2)   [corpus_grad.py:400]
    h = rt.pop(h_stack)
    return x_bar

def grad_break_loop(x):
    _t5_stack = rt.stack()
    # s = 0.0   [corpus_grad.py:336]
    s = 0.0
    # for i in range(len(x)):   [corpus_grad.py:337]
    _t0 = len(x)
    _broke = False
    i_trips = 0
    for i in range(_t0):
        i_trips = i_trips + 1
        _skip = False
        # if s > 2.0:   [corpus_grad.py:338]
        _t1 = s > 2.0
        if _t1:
            # break   [corpus_grad.py:339]
            _broke = True
            _skip = True
        _t5 = not _skip
        _t5_stack = rt.push(_t5_stack, _t5)
        if _t5:
            # s = s + x[i] * x[i]   [corpus_grad.py:340]
            _t2 = x[i]
            _t3 = x[i]
            _t4 = _t2 * _t3
            s = s + _t4
        if _broke:
            break
    # return s   [corpus_grad.py:341]
    _result = s
    # backward sweep: cotangents flow from the output back to the inputs
    x_bar = rt.zeros_like(x)
    _t21 = rt.scalar_seed(_result)
    _result_bar = _t21
    # vjp of: return s   [corpus_grad.py:341]
    s_bar = _result_bar
    # vjp of: for i in range(len(x)):   [corpus_grad.py:337]
    _t16 = i_trips - 1
    for i in range(_t16, -1, -1):
        # vjp of: if s > 2.0:   [corpus_grad.py:338]
        _t5 = rt.top(_t5_stack)
        if _t5:
            # recompute this iteration's values instead of taping them
            _t2 = x[i]
            _t3 = x[i]
            # vjp of: s = s + x[i] * x[i]   [corpus_grad.py:340]
            _t6 = rt.unbroadcast(s_bar, s)
            _t7 = rt.unbroadcast(s_bar, _t4)
            s_bar = _t6
            _t8 = _t7 * _t3
            _t9 = rt.unbroadcast(_t8, _t2)
            _t10 = _t7 * _t2
            _t11 = rt.unbroadcast(_t10, _t3)
            _t12 = x_bar[i]
            _t13 = _t12 + _t11
            x_bar[i] = _t13
            _t14 = x_bar[i]
            _t15 = _t14 + _t9
            x_bar[i] = _t15
        _t5 = rt.pop(_t5_stack)
    return x_bar

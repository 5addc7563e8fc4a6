def grad_while_data_dependent(x):
    # forward sweep: the original computation, recording what the backward sweep needs
    # s = x   [corpus_grad.py:320]
    s = x
    # while s < 10.0:   [corpus_grad.py:321]
    _t0 = s < 10.0
    while_trips = 0
    while _t0:
        while_trips = while_trips + 1
        # s = s * 1.5 + 0.1   [corpus_grad.py:322]
        _t1 = s * 1.5
        s = _t1 + 0.1
        # again: while s < 10.0:   [corpus_grad.py:321]
        _t0 = s < 10.0
    # backward sweep: cotangents flow from the output back to the inputs
    _t9 = rt.scalar_seed(s)
    s_bar = _t9
    # vjp of: while s < 10.0:   [corpus_grad.py:321]
    for iteration in range(while_trips):
        # vjp of: s = s * 1.5 + 0.1   [corpus_grad.py:322]
        _t2 = s_bar
        _t4 = _t2 * 1.5
        s_bar = _t4
    # vjp of: s = x   [corpus_grad.py:320]
    x_bar = s_bar
    return x_bar

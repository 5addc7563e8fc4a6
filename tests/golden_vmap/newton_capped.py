def newton_capped(a):
    _t7 = np.shape(a)
    batch_size = _t7[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t8 = np.moveaxis(a, 0, -1)
    a = np.copy(_t8)
    y_next_fresh = True
    _returned = False
    # vmap of: y = a   [corpus_vmap.py:334]
    y = a
    # vmap of: steps = 0   [corpus_vmap.py:335]
    _t9 = np.full((batch_size,), 0)
    steps = _t9
    _t10 = np.full((batch_size,), False)
    _broke = _t10
    # vmap of: while True:   [corpus_vmap.py:336]
    # strategy: the condition differs per example: loop while any example is active
    active = np.full((batch_size,), True)
    any_active = np.any(active)
    while any_active:
        _t11 = np.full((batch_size,), False)
        _skip = _t11
        # vmap of: y_next = 0.5 * (y + a / y)   [corpus_vmap.py:337]
        _t0 = a / y
        _t1 = y + _t0
        _t12 = 0.5 * _t1
        # y_next is first given a value inside a loop whose passes differ per example
        if y_next_fresh:
            y_next = _t12
            y_next_fresh = False
        else:
            y_next = np.where(active, _t12, y_next)
        # vmap of: steps += 1   [corpus_vmap.py:338]
        _t13 = steps + 1
        steps = np.where(active, _t13, steps)
        # vmap of: if abs(y_next - y) < 1e-12 or steps >= 50:   [corpus_vmap.py:339]
        _t3 = y_next - y
        _t4 = np.abs(_t3)
        _t2 = _t4 < 1e-12
        _t5 = _t2 == 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t15 = _t5 != 0
        _t16 = np.logical_and(active, _t15)
        _t17 = steps >= 50
        _t2 = np.where(_t16, _t17, _t2)
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t18 = _t2 != 0
        _t19 = np.logical_and(active, _t18)
        # vmap of: break   [corpus_vmap.py:340]
        _broke = np.where(_t19, True, _broke)
        _skip = np.where(_t19, True, _skip)
        _t6 = _skip == 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t21 = _t6 != 0
        _t22 = np.logical_and(active, _t21)
        # vmap of: y = y_next   [corpus_vmap.py:341]
        y = np.where(_t22, y_next, y)
        _t23 = _broke == 0
        active = np.logical_and(active, _t23)
        any_active = np.any(active)
    # vmap of: return y_next, steps   [corpus_vmap.py:342]
    _result = (y_next, steps)
    _returned = True
    _t24 = _result[0]
    _t25 = _result[1]
    _t26 = np.moveaxis(_t24, -1, 0)
    _t27 = np.moveaxis(_t25, -1, 0)
    return (_t26, _t27)

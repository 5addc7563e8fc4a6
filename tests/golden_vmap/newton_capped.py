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
        _t14 = np.shape(_t2)
        not_batched_one_each = rt.truth_value_per_example(_t14)
        _t5 = _t2 == 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t16 = _t5 != 0
        _t17 = np.logical_and(active, _t16)
        _t18 = steps >= 50
        _t2 = np.where(_t17, _t18, _t2)
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t19 = np.shape(_t2)
        truth_per_example_one_each = rt.truth_value_per_example(_t19)
        _t21 = _t2 != 0
        _t22 = np.logical_and(active, _t21)
        # vmap of: break   [corpus_vmap.py:340]
        _broke = np.where(_t22, True, _broke)
        _skip = np.where(_t22, True, _skip)
        _t6 = _skip == 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t24 = _t6 != 0
        _t25 = np.logical_and(active, _t24)
        # vmap of: y = y_next   [corpus_vmap.py:341]
        y = np.where(_t25, y_next, y)
        _t26 = _broke == 0
        active = np.logical_and(active, _t26)
        any_active = np.any(active)
    # vmap of: return y_next, steps   [corpus_vmap.py:342]
    _result = (y_next, steps)
    _returned = True
    _t27 = _result[0]
    _t28 = _result[1]
    _t29 = np.moveaxis(_t27, -1, 0)
    _t30 = np.moveaxis(_t28, -1, 0)
    return (_t29, _t30)

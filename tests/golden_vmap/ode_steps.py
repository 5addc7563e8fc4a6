def ode_steps(x0):
    _t5 = np.shape(x0)
    batch_size = _t5[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t6 = np.moveaxis(x0, 0, -1)
    x0 = np.copy(_t6)
    # vmap of: x = x0   [corpus_vmap.py:114]
    x = x0
    # vmap of: t = 0.0   [corpus_vmap.py:115]
    _t7 = np.full((batch_size,), 0.0)
    t = _t7
    # vmap of: while x > 0.01:   [corpus_vmap.py:116]
    _t0 = x > 0.01
    # strategy: the condition differs per example: loop while any example is active
    _t8 = np.shape(_t0)
    truth_per_example_one_each = rt.truth_value_per_example(_t8)
    _t10 = _t0 != 0
    active = _t10
    any_active = np.any(active)
    while any_active:
        # vmap of: x = x - 0.1 * x * (1.0 + math.sin(t))   [corpus_vmap.py:117]
        _t1 = 0.1 * x
        _t2 = np.sin(t)
        _t3 = 1.0 + _t2
        _t4 = _t1 * _t3
        _t11 = x - _t4
        x = np.where(active, _t11, x)
        # vmap of: t = t + 0.1   [corpus_vmap.py:118]
        _t12 = t + 0.1
        t = np.where(active, _t12, t)
        # vmap of: again: while x > 0.01:   [corpus_vmap.py:116]
        _t13 = x > 0.01
        _t0 = np.where(active, _t13, _t0)
        _t14 = np.shape(_t0)
        truth_per_example_one_each_1 = rt.truth_value_per_example(_t14)
        _t16 = _t0 != 0
        active = np.logical_and(active, _t16)
        any_active = np.any(active)
    # vmap of: return t   [corpus_vmap.py:119]
    _t17 = np.moveaxis(t, -1, 0)
    return _t17

def first_positive(x):
    _t4 = np.shape(x)
    batch_size = _t4[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t5 = np.moveaxis(x, 0, -1)
    x = np.copy(_t5)
    _result_fresh = True
    _t6 = np.full((batch_size,), False)
    _returned = _t6
    # vmap of: for i in range(len(x)):   [corpus_vmap.py:300]
    _t0 = len(x)
    # strategy: examples leave this loop at different passes: mask the ones that left
    active = np.full((batch_size,), True)
    any_active = np.any(active)
    for i in range(_t0):
        _t7 = np.full((batch_size,), False)
        _skip = _t7
        # vmap of: if x[i] > 0:   [corpus_vmap.py:301]
        _t1 = x[i, :]
        _t2 = _t1 > 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t8 = _t2 != 0
        _t9 = np.logical_and(active, _t8)
        # _result is first given a value inside a loop whose passes differ per example
        if _result_fresh:
            # vmap of: return i   [corpus_vmap.py:302]
            _t10 = np.asarray(i)
            _t11 = np.expand_dims(_t10, -1)
            _t12 = np.shape(i)
            _t13 = _t12 + (batch_size,)
            _t14 = np.broadcast_to(_t11, _t13)
            _t15 = np.copy(_t14)
            _result = _t15
            _result_fresh = False
        else:
            _t16 = rt.align_batch(i)
            _result = np.where(_t9, _t16, _result)
        _returned = np.where(_t9, True, _returned)
        _skip = np.where(_t9, True, _skip)
        _t17 = _returned == 0
        active = np.logical_and(active, _t17)
        any_active = np.any(active)
        _t18 = not any_active
        if _t18:
            break
    _t3 = _returned == 0
    # strategy: the condition differs per example: run both branches, keep each example's own
    _t19 = _t3 != 0
    # vmap of: return -1   [corpus_vmap.py:303]
    _result = np.where(_t19, -1, _result)
    _returned = np.where(_t19, True, _returned)
    _t20 = np.moveaxis(_result, -1, 0)
    return _t20

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
        _t8 = np.full((batch_size,), False)
        _skip = _t8
        # vmap of: if x[i] > 0:   [corpus_vmap.py:301]
        _t1 = x[i, :]
        _t2 = _t1 > 0
        # strategy: the condition differs per example: run both branches, keep each example's own
        _t9 = np.shape(_t2)
        truth_per_example_one_each = rt.truth_value_per_example(_t9)
        _t11 = _t2 != 0
        _t12 = np.logical_and(active, _t11)
        # _result is first given a value inside a loop whose passes differ per example
        if _result_fresh:
            # vmap of: return i   [corpus_vmap.py:302]
            _t13 = np.asarray(i)
            _t14 = np.expand_dims(_t13, -1)
            _t15 = np.shape(i)
            _t16 = _t15 + (batch_size,)
            _t17 = np.broadcast_to(_t14, _t16)
            _t18 = np.copy(_t17)
            _result = _t18
            _result_fresh = False
        else:
            _t19 = rt.align_batch(i)
            _result = np.where(_t12, _t19, _result)
        _returned = np.where(_t12, True, _returned)
        _skip = np.where(_t12, True, _skip)
        _t20 = _returned == 0
        active = np.logical_and(active, _t20)
        any_active = np.any(active)
        _t21 = not any_active
        if _t21:
            break
    _t3 = _returned == 0
    # strategy: the condition differs per example: run both branches, keep each example's own
    _t23 = _t3 != 0
    # _result may have no value yet: its store in a loop runs only where a condition holds
    if _result_fresh:
        # vmap of: return -1   [corpus_vmap.py:303]
        _t24 = np.full((batch_size,), -1)
        _result = _t24
        _result_fresh = False
    else:
        _result = np.where(_t23, -1, _result)
    _returned = np.where(_t23, True, _returned)
    _t25 = np.moveaxis(_result, -1, 0)
    return _t25

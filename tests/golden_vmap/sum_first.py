def sum_first(x, k):
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t1 = np.moveaxis(x, 0, -1)
    x = np.copy(_t1)
    _t2 = np.moveaxis(k, 0, -1)
    k = np.copy(_t2)
    _t3 = np.shape(x)
    batch_size = _t3[-1]
    # vmap of: total = 0.0   [corpus_vmap.py:55]
    _t4 = np.asarray(0.0)
    _t5 = np.expand_dims(_t4, -1)
    _t6 = np.shape(0.0)
    _t7 = _t6 + (batch_size,)
    _t8 = np.broadcast_to(_t5, _t7)
    _t9 = np.copy(_t8)
    total = _t9
    # vmap of: for i in range(k):   [corpus_vmap.py:56]
    # strategy: the bounds differ per example: count per example while any is active
    _t10 = np.asarray(0)
    _t11 = np.expand_dims(_t10, -1)
    _t12 = np.shape(0)
    _t13 = _t12 + (batch_size,)
    _t14 = np.broadcast_to(_t11, _t13)
    _t15 = np.copy(_t14)
    i_next = np.copy(_t15)
    _t16 = 1 > 0
    _t17 = i_next < k
    _t18 = i_next > k
    _t19 = np.where(_t16, _t17, _t18)
    active = _t19
    any_active = np.any(active)
    while any_active:
        i = i_next
        # vmap of: total = total + x[i]   [corpus_vmap.py:57]
        _t20 = x[..., 0]
        _t21 = i[..., 0]
        _t22 = _t20[_t21]
        _t23 = np.asarray(_t22)
        _t24 = np.expand_dims(_t23, -1)
        _t25 = np.shape(_t22)
        _t26 = _t25 + (batch_size,)
        _t27 = np.broadcast_to(_t24, _t26)
        _t28 = np.copy(_t27)
        # strategy: a loop over the examples: indices that differ per example: each example indexes its own row
        for example in range(1, batch_size):
            _t29 = x[..., example]
            _t30 = i[..., example]
            _t31 = _t29[_t30]
            _t28[..., example] = _t31
        _t0 = _t28
        _t32 = total + _t0
        total = np.where(active, _t32, total)
        i_next = i_next + 1
        _t33 = 1 > 0
        _t34 = i_next < k
        _t35 = i_next > k
        _t36 = np.where(_t33, _t34, _t35)
        active = np.logical_and(active, _t36)
        any_active = np.any(active)
    # vmap of: return total   [corpus_vmap.py:58]
    _t37 = np.moveaxis(total, -1, 0)
    return _t37

def sum_first(x, k):
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t1 = np.moveaxis(x, 0, -1)
    x = np.copy(_t1)
    _t2 = np.moveaxis(k, 0, -1)
    k = np.copy(_t2)
    _t3 = np.shape(x)
    batch_size = _t3[-1]
    # vmap of: total = 0.0   [corpus_vmap.py:55]
    _t4 = np.full((batch_size,), 0.0)
    total = _t4
    # vmap of: for i in range(k):   [corpus_vmap.py:56]
    # strategy: the loop index differs per example: count per example while any is active
    _t5 = np.full((batch_size,), 0)
    i_next = np.copy(_t5)
    _t6 = 1 > 0
    _t7 = i_next < k
    _t8 = i_next > k
    _t9 = np.where(_t6, _t7, _t8)
    active = _t9
    any_active = np.any(active)
    while any_active:
        i = i_next
        # vmap of: total = total + x[i]   [corpus_vmap.py:57]
        _t10 = x[..., 0]
        _t11 = i[..., 0]
        _t12 = _t10[_t11]
        _t13 = np.asarray(_t12)
        _t14 = np.expand_dims(_t13, -1)
        _t15 = np.shape(_t12)
        _t16 = _t15 + (batch_size,)
        _t17 = np.broadcast_to(_t14, _t16)
        _t18 = np.copy(_t17)
        # strategy: a loop over the examples: indices that differ per example: each example indexes its own row
        for example in rt.parallel_range(1, batch_size):
            _t19 = x[..., example]
            _t20 = i[..., example]
            _t21 = _t19[_t20]
            _t18[..., example] = _t21
        _t0 = _t18
        _t22 = total + _t0
        total = np.where(active, _t22, total)
        i_next = i_next + 1
        _t23 = 1 > 0
        _t24 = i_next < k
        _t25 = i_next > k
        _t26 = np.where(_t23, _t24, _t25)
        active = np.logical_and(active, _t26)
        any_active = np.any(active)
    # vmap of: return total   [corpus_vmap.py:58]
    _t27 = np.moveaxis(total, -1, 0)
    return _t27

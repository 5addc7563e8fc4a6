def sum_first(x, k):
    # loops over the examples and products read them as rows of the batch-first argument (contiguous)
    x_rows = x
    _t1 = np.shape(x)
    batch_size = _t1[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t3 = np.moveaxis(k, 0, -1)
    k = np.copy(_t3)
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
        _t10 = np.moveaxis(i, -1, 0)
        _t11 = np.copy(_t10)
        _t12 = x_rows[0]
        _t13 = _t11[0]
        _t14 = _t12[_t13]
        _t15 = np.asarray(_t14)
        _t16 = np.shape(_t14)
        _t17 = (batch_size,) + _t16
        _t18 = np.broadcast_to(_t15, _t17)
        _t19 = np.copy(_t18)
        # strategy: a loop over the examples (batch axis first: rows are contiguous): indices that differ per example: each example indexes its own row
        for example in rt.parallel_range(1, batch_size):
            _t20 = x_rows[example]
            _t21 = _t11[example]
            _t22 = _t20[_t21]
            _t19[example] = _t22
        _t23 = np.moveaxis(_t19, 0, -1)
        _t24 = np.copy(_t23)
        _t0 = _t24
        _t25 = total + _t0
        total = np.where(active, _t25, total)
        i_next = i_next + 1
        _t26 = 1 > 0
        _t27 = i_next < k
        _t28 = i_next > k
        _t29 = np.where(_t26, _t27, _t28)
        active = np.logical_and(active, _t29)
        any_active = np.any(active)
    # vmap of: return total   [corpus_vmap.py:58]
    _t30 = np.moveaxis(total, -1, 0)
    return _t30

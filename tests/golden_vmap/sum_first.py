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
    _t5 = np.shape(k)
    number_per_example_one_each = rt.number_per_example(_t5)
    # strategy: the loop index differs per example: count per example while any is active
    _t6 = np.full((batch_size,), 0)
    i_next = np.copy(_t6)
    _t7 = 1 > 0
    _t8 = i_next < k
    _t9 = i_next > k
    _t10 = np.where(_t7, _t8, _t9)
    active = _t10
    any_active = np.any(active)
    while any_active:
        i = i_next
        # vmap of: total = total + x[i]   [corpus_vmap.py:57]
        _t11 = np.moveaxis(i, -1, 0)
        _t12 = np.copy(_t11)
        _t13 = x_rows[0]
        _t14 = _t12[0]
        _t15 = _t13[_t14]
        _t16 = np.asarray(_t15)
        _t17 = np.shape(_t15)
        _t18 = (batch_size,) + _t17
        _t19 = np.broadcast_to(_t16, _t18)
        _t20 = np.copy(_t19)
        # strategy: a loop over the examples (batch axis first: rows are contiguous): indices that differ per example: each example indexes its own row
        for example in rt.parallel_range(1, batch_size):
            _t21 = x_rows[example]
            _t22 = _t12[example]
            _t23 = _t21[_t22]
            _t20[example] = _t23
        _t24 = np.moveaxis(_t20, 0, -1)
        _t25 = np.copy(_t24)
        _t0 = _t25
        _t26 = total + _t0
        total = np.where(active, _t26, total)
        i_next = i_next + 1
        _t27 = 1 > 0
        _t28 = i_next < k
        _t29 = i_next > k
        _t30 = np.where(_t27, _t28, _t29)
        active = np.logical_and(active, _t30)
        any_active = np.any(active)
    # vmap of: return total   [corpus_vmap.py:58]
    _t31 = np.moveaxis(total, -1, 0)
    return _t31

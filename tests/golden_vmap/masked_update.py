def masked_update(x, t):
    _t3 = np.shape(x)
    batch_size = _t3[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t4 = np.moveaxis(x, 0, -1)
    x = np.copy(_t4)
    _t5 = np.moveaxis(t, 0, -1)
    t = np.copy(_t5)
    # vmap of: y = np.copy(x)   [corpus_vmap.py:218]
    y = np.copy(x)
    # vmap of: if t > 0:   [corpus_vmap.py:219]
    _t0 = t > 0
    # strategy: the condition differs per example: run both branches, keep each example's own
    _t6 = np.shape(_t0)
    truth_per_example_one_each = rt.truth_value_per_example(_t6)
    _t8 = _t0 != 0
    # vmap of: y[0] = t   [corpus_vmap.py:220]
    _t9 = y[0, :]
    _t10 = np.where(_t8, t, _t9)
    y[0, :] = _t10
    # vmap of: y[1] = y[1] * 2.0   [corpus_vmap.py:221]
    _t1 = y[1, :]
    _t2 = _t1 * 2.0
    _t11 = y[1, :]
    _t12 = np.where(_t8, _t2, _t11)
    y[1, :] = _t12
    # vmap of: return y   [corpus_vmap.py:222]
    _t13 = np.moveaxis(y, -1, 0)
    return _t13

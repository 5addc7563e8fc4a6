def relu_if(x):
    _t1 = np.shape(x)
    batch_size = _t1[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t2 = np.moveaxis(x, 0, -1)
    x = np.copy(_t2)
    # vmap of: if x > 0:   [corpus_vmap.py:36]
    _t0 = x > 0
    # strategy: the condition differs per example: run both branches, keep each example's own
    _t3 = np.shape(_t0)
    truth_per_example_one_each = rt.truth_value_per_example(_t3)
    _t5 = _t0 != 0
    _t6 = ~_t5
    # vmap of: y = x   [corpus_vmap.py:37]
    y = x
    # vmap of: y = 0.1 * x   [corpus_vmap.py:39]
    _t7 = 0.1 * x
    y = np.where(_t6, _t7, y)
    # vmap of: return y   [corpus_vmap.py:40]
    _t8 = np.moveaxis(y, -1, 0)
    return _t8

def gather(x, i):
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t1 = np.moveaxis(x, 0, -1)
    x = np.copy(_t1)
    _t2 = np.moveaxis(i, 0, -1)
    i = np.copy(_t2)
    _t3 = np.shape(x)
    batch_size = _t3[-1]
    # vmap of: return x[i]   [corpus_vmap.py:77]
    _t4 = x[..., 0]
    _t5 = i[..., 0]
    _t6 = _t4[_t5]
    _t7 = np.asarray(_t6)
    _t8 = np.expand_dims(_t7, -1)
    _t9 = np.shape(_t6)
    _t10 = _t9 + (batch_size,)
    _t11 = np.broadcast_to(_t8, _t10)
    _t12 = np.copy(_t11)
    # strategy: a loop over the examples: indices that differ per example: each example indexes its own row
    for example in rt.parallel_range(1, batch_size):
        _t13 = x[..., example]
        _t14 = i[..., example]
        _t15 = _t13[_t14]
        _t12[..., example] = _t15
    _t0 = _t12
    _t16 = np.moveaxis(_t0, -1, 0)
    return _t16

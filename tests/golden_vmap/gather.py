def gather(x, i):
    # loops over the examples and products read them as rows of the batch-first argument (contiguous)
    x_rows = x
    i_rows = i
    _t1 = np.shape(x)
    batch_size = _t1[0]
    # vmap of: return x[i]   [corpus_vmap.py:77]
    _t4 = x_rows[0]
    _t5 = i_rows[0]
    _t6 = _t4[_t5]
    _t7 = np.asarray(_t6)
    _t8 = np.shape(_t6)
    _t9 = (batch_size,) + _t8
    _t10 = np.broadcast_to(_t7, _t9)
    _t11 = np.copy(_t10)
    # strategy: a loop over the examples (batch axis first: rows are contiguous): indices that differ per example: each example indexes its own row
    for example in rt.parallel_range(1, batch_size):
        _t12 = x_rows[example]
        _t13 = i_rows[example]
        _t14 = _t12[_t13]
        _t11[example] = _t14
    _t15 = np.moveaxis(_t11, 0, -1)
    _t16 = np.copy(_t15)
    _t0 = _t16
    _t17 = np.moveaxis(_t0, -1, 0)
    return _t17

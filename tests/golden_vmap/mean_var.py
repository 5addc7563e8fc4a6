def mean_var(x):
    _t2 = np.shape(x)
    batch_size = _t2[0]
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t3 = np.moveaxis(x, 0, -1)
    x = np.copy(_t3)
    # vmap of: return np.mean(x), np.var(x)   [corpus_vmap.py:32]
    _t4 = np.copy(x)
    _t5 = np.reshape(_t4, (-1, batch_size))
    _t6 = np.sum(_t5, axis=0)
    _t7 = np.shape(_t5)
    _t8 = _t7[0]
    _t9 = _t6 / _t8
    _t0 = _t9
    _t10 = np.copy(x)
    _t11 = np.reshape(_t10, (-1, batch_size))
    _t12 = np.sum(_t11, axis=0)
    _t13 = np.shape(_t11)
    _t14 = _t13[0]
    var_leading_mean = _t12 / _t14
    var_leading_deviation = _t11 - var_leading_mean
    _t15 = var_leading_deviation * var_leading_deviation
    _t16 = np.sum(_t15, axis=0)
    _t17 = np.shape(_t11)
    _t18 = _t17[0]
    _t19 = _t18 - 0
    _t20 = _t16 / _t19
    _t1 = _t20
    _t21 = np.moveaxis(_t0, -1, 0)
    _t22 = np.moveaxis(_t1, -1, 0)
    return (_t21, _t22)

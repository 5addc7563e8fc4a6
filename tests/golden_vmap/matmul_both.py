def matmul_both(a, b):
    # vmap: every batched argument keeps its batch axis last (per-example values broadcast right-aligned)
    _t1 = np.moveaxis(a, 0, -1)
    a = np.copy(_t1)
    _t2 = np.moveaxis(b, 0, -1)
    b = np.copy(_t2)
    _t3 = np.shape(a)
    batch_size = _t3[-1]
    # vmap of: return a @ b   [corpus_vmap.py:171]
    _t4 = a[..., 0]
    _t5 = b[..., 0]
    _t6 = _t4 @ _t5
    _t7 = np.asarray(_t6)
    _t8 = np.expand_dims(_t7, -1)
    _t9 = np.shape(_t6)
    _t10 = _t9 + (batch_size,)
    _t11 = np.broadcast_to(_t8, _t10)
    _t12 = np.copy(_t11)
    # strategy: a loop over the examples: @ on batched operands has no batched form numba compiles (no 3-D kernels); each example runs the plain call
    for example in rt.parallel_range(1, batch_size):
        _t13 = a[..., example]
        _t14 = b[..., example]
        _t15 = _t13 @ _t14
        _t12[..., example] = _t15
    _t0 = _t12
    _t16 = np.moveaxis(_t0, -1, 0)
    return _t16

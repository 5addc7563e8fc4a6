def lambda_fn(x):
    # lambda_square = lambda x: x * x + 1  # noqa: E731   [frontend_cases.py:197]
    _t0 = x * x
    _t1 = _t0 + 1
    return _t1

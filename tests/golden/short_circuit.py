def short_circuit(x, y):
    # both = x > 0 and y > 0   [frontend_cases.py:76]
    both = x > 0
    if both:
        both = y > 0
    # either = x > 0 or y > 0   [frontend_cases.py:77]
    either = x > 0
    _t2 = not either
    if _t2:
        either = y > 0
    # return both, either   [frontend_cases.py:78]
    return (both, either)

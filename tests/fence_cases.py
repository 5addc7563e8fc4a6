"""User functions the fence must refuse, one construct each.

Each case marks the line the error must name with ``# REFUSED: <text>``;
the column the error must name is where ``<text>`` first starts on that line
(the test finds both by reading this file, so moving code cannot break it).
"""
import math  # noqa: F401
import numpy as np
import scipy.special

GLOBAL_ARRAY = np.zeros(3)
GLOBAL_LIST = [1.0, 2.0]
GLOBAL_DICT = {"scale": 2.0, "seen": []}   # holds a list: mutable state (a dict of numbers is read as a constant)


class Model:
    def compute(self, x):
        return x


MODEL = Model()


def try_except(x):
    try:  # REFUSED: try
        y = np.sin(x)
    except ValueError:
        y = x
    return y


def with_statement(x):
    with open("f") as handle:  # REFUSED: with
        y = x
    return y


def generator(x):
    yield x  # REFUSED: yield


async def async_function(x):  # REFUSED: async
    return x


def global_statement(x):
    global GLOBAL_ARRAY  # REFUSED: global
    return x


def make_nonlocal():
    total = 0.0

    def accumulate(x):
        nonlocal total  # REFUSED: nonlocal
        return x + total
    return accumulate


nonlocal_statement = make_nonlocal()


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x, n - 1)  # REFUSED: recursive(x, n - 1)


def mutual_a(x):
    return mutual_b(x) + 1.0


def mutual_b(x):
    return mutual_a(x) * 2.0  # REFUSED: mutual_a(x)


def star_args(x, *rest):  # REFUSED: *rest
    return x


def star_kwargs(x, **options):  # REFUSED: **options
    return x


def class_definition(x):
    class Local:  # REFUSED: class
        pass
    return x


def nested_decorated_def(x):
    # a def written inside is inlined where it is called; a decorator would make it something else
    @staticmethod
    def helper(y):  # REFUSED: def helper
        return y
    return helper(x)


def lambda_as_an_operand(x):
    # a lambda is bound, kept in a tuple, passed or called; one added to an array is a value it is not
    return x + (lambda y: 2 * y)  # REFUSED: lambda


def attribute_write(x, model):
    model.weight = x  # REFUSED: model.weight
    return x


def attribute_augmented_write(x, model):
    model.count += 1  # REFUSED: model.count
    return x


def list_comprehension(x):
    ys = [v * 2 for v in x]  # REFUSED: [v * 2
    return ys


def generator_expression(x):
    return np.sum(v for v in x)  # REFUSED: v for v


def dict_comprehension_over_an_array(x):
    d = {k: v for k, v in x.items()}  # REFUSED: {k: v
    return d


def set_literal(x):
    s = {x, 1.0}  # REFUSED: {x
    return s


def is_comparison(x):
    if x is None:  # REFUSED: x is None
        return 0.0
    return x


def in_comparison(x, n):
    if n in (1, 2):  # REFUSED: n in
        return x
    return 2 * x


def walrus(x):
    if (y := x * 2) > 1:  # REFUSED: y := x * 2
        return y
    return x


def f_string(x):
    label = f"value {x}"  # REFUSED: f"value
    return label


def scipy_call(x):
    return scipy.special.gamma(x)  # REFUSED: scipy.special.gamma(x)  # a ufunc no primitive stands for (erf has one)


def library_python_function(x):
    return scipy.special.comb(x, 2)  # REFUSED: scipy.special.comb(x, 2)


def print_call(x):
    print(x)  # REFUSED: print(x)
    return x


def open_call(x):
    handle = open("weights.npy")  # REFUSED: open(
    return x + handle


def unknown_object_method(x):
    return MODEL.compute(x)  # REFUSED: MODEL.compute(x)


def unknown_name(x):
    return x + undefined_thing  # REFUSED: undefined_thing  # noqa: F821


def call_local_variable(x, g):
    return g(x)  # REFUSED: g(x)


def chained_subscript_write(x):
    x[0][1] = 1.0  # REFUSED: x[0][1]
    return x


def global_array_write(x):
    GLOBAL_ARRAY[0] = x  # REFUSED: GLOBAL_ARRAY[0]
    return x


def global_list_read(x):
    return x * GLOBAL_LIST[0]  # REFUSED: GLOBAL_LIST


def global_dict_read(x):
    return x * GLOBAL_DICT["scale"]  # REFUSED: GLOBAL_DICT


def unsupported_method(x):
    return x.tolist()  # REFUSED: x.tolist


def unsupported_attribute(x):
    return x.real  # REFUSED: x.real


def match_statement(x, n):
    match n:  # REFUSED: match
        case 1:
            return x
    return -x


def del_statement(x):
    y = x * 2
    del y  # REFUSED: del
    return x


def assert_statement(x):
    assert x > 0  # REFUSED: assert
    return x


def raise_statement(x):
    if x < 0:
        raise ValueError("negative")  # REFUSED: raise
    return x


def import_inside(x):
    import os  # REFUSED: import  # noqa: F401
    return x


def star_in_call(x, shape):
    return np.zeros(*shape) + x  # REFUSED: *shape


def starred_assignment(x):
    first, *rest = x  # REFUSED: *rest
    return first


def shift_operator(n):
    return n << 2  # REFUSED: n << 2


def function_returned(x):
    f = np.sin
    return f  # REFUSED: f


def max_of_one_array(x):
    return max(x)  # REFUSED: max(x)


def unsupported_keyword(x, out):
    return np.sum(x, out=out)  # REFUSED: np.sum(x, out=out)


def range_four_arguments(x):
    for i in range(0, 3, 1, 2):  # REFUSED: range(0, 3, 1, 2)
        x = x + i
    return x


def function_rebound_in_a_loop(x):
    f = np.sin
    for i in range(3):
        x = f(x)
        f = np.cos  # REFUSED: f


def keyword_only_parameter(x, *, scale):  # REFUSED: scale
    return x * scale


def _helper_with_try(x):
    try:  # REFUSED: try
        return np.log(x)
    except ValueError:
        return x


def error_inside_helper(x):
    return _helper_with_try(x) * 2.0


def string_concatenation(x):
    name = "a" "b"  # REFUSED: "a" "b"
    return x


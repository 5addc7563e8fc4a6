"""Custom functions whose rules differ from their code's own derivative, so that a transform that
follows the code instead of the rule gives a different number (tests/test_custom_rules.py)."""
import numpy as np

import rule_table
import transformer as tr


@tr.custom_jvp
def sin_said_three(x):
    return np.sin(x)


@sin_said_three.defjvp
def sin_said_three_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return sin_said_three(x), 3.0 * t          # the code's derivative would be cos(x)


@tr.custom_vjp
def sin_told_three(x):
    return np.sin(x)


def sin_told_three_fwd(x):
    return sin_told_three(x), x


def sin_told_three_bwd(x, g):
    return (3.0 * g,)


sin_told_three.defvjp(sin_told_three_fwd, sin_told_three_bwd)


@tr.custom_jvp
def scaled_product(a, x):
    return a * x


@scaled_product.defjvp
def scaled_product_jvp(primals, tangents):
    a, x = primals
    a_dot, x_dot = tangents
    return a * x, 2.0 * x * a_dot + 5.0 * a * x_dot     # the code's: x a_dot + a x_dot


@tr.custom_vjp
def scaled_product_vjp(a, x):
    return a * x


def scaled_product_vjp_fwd(a, x):
    return a * x, (a, x)


def scaled_product_vjp_bwd(residuals, g):
    a, x = residuals
    return np.sum(2.0 * x * g), 5.0 * a * g      # a is a number, x an array


scaled_product_vjp.defvjp(scaled_product_vjp_fwd, scaled_product_vjp_bwd)


@tr.custom_vjp
def clipped_gradient(x, bound):
    return x


def clipped_gradient_fwd(x, bound):
    return x, (bound, None)         # a number and None among the residuals


def clipped_gradient_bwd(residuals, g):
    bound, _ = residuals
    return np.clip(g, -bound, bound), None


clipped_gradient.defvjp(clipped_gradient_fwd, clipped_gradient_bwd)


def clipped_triple(x):
    return np.sum(clipped_gradient(x, 1.0) * 3.0)


@tr.custom_jvp
def sin_and_cos_said_otherwise(x):
    return np.sin(x), np.cos(x)


@sin_and_cos_said_otherwise.defjvp
def sin_and_cos_said_otherwise_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return sin_and_cos_said_otherwise(x), (2.0 * t, -5.0 * t)      # the code's: cos(x) t, -sin(x) t


def both_outputs(x):
    s, c = sin_and_cos_said_otherwise(x)
    return np.sum(s + 10.0 * c)


def sum_log1pexp(x):
    # the rule table's log1pexp, whose rule x_dot / (1 + exp(-x)) is finite where the code's exp overflows
    return np.sum(rule_table._log1pexp(x))


@tr.custom_vjp
def sin_without_rule(x):      # no defvjp: transforms follow its code
    return np.sin(x)


def calls_the_global(x):
    return np.sum(RULED(x))


RULED = sin_told_three


@tr.custom_jvp
def sine_times(x, y):
    return np.sin(x) * y


# JAX's defjvps: a rule per argument, the parts added up; x's part is not the code's cos(x) y
sine_times.defjvps(lambda x_dot, out, x, y: 3.0 * x_dot * y, lambda y_dot, out, x, y: np.sin(x) * y_dot)


@tr.custom_jvp
def sine_times_fixed_x(x, y):
    return np.sin(x) * y


sine_times_fixed_x.defjvps(None, lambda y_dot, out, x, y: 7.0 * y_dot)


@tr.custom_vjp
def product_without_y(x, y):
    return x * y


def product_without_y_fwd(x, y):
    return x * y, (x, y)


def product_without_y_bwd(residuals, g):
    x, y = residuals
    return g * y, None          # as in JAX: None is a zero cotangent


product_without_y.defvjp(product_without_y_fwd, product_without_y_bwd)

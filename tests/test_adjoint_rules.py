"""Every primitive has an adjoint rule, a zero derivative, or a documented refusal."""
import inspect

import transformer  # noqa: F401  (registers every primitive)
from transformer import primitives, rules

# Handled by the vjp transform itself (scatter-add and restore of in-place writes).
HANDLED_BY_THE_TRANSFORM = {"getitem", "setitem"}


def test_every_primitive_has_an_adjoint_rule_or_a_reason():
    table = rules.table("adjoint")
    missing = [name for name in primitives.REGISTRY
               if name not in table and name not in rules.ZERO_DERIVATIVE
               and name not in rules.UNSUPPORTED["adjoint"] and name not in HANDLED_BY_THE_TRANSFORM]
    assert missing == []


def test_refusals_say_why():
    for name, reason in rules.UNSUPPORTED["adjoint"].items():
        assert len(reason) > 20, name


def test_rules_name_real_parameters():
    """A rule's parameters are z_bar, z, then the primitive's own parameters (and, for a tape rule,
    the cotangent tapes of its tape operands)."""
    for name, template in rules.table("adjoint").items():
        prim = primitives.get(name)
        params = list(inspect.signature(template).parameters)
        assert params[:2] == ["z_bar", "z"], name
        for param in params[2:]:
            if template.rule_options.get("tape") and param.endswith("_bar"):   # a tape operand's cotangent tape
                param = param[:-len("_bar")]
            assert param in prim.params or param in prim.keywords, (name, param)
        for param in template.rule_options.get("wrt", ()):     # (a keyword too: uniform's minval=)
            assert param in prim.params or param in prim.keywords, (name, param)

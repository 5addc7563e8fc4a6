"""Python control flow that tracing systems reject, working under every transform.

    python examples/control_flow.py

Under JAX's ``jit`` and ``vmap`` a ``while`` loop whose condition depends on
array values must be rewritten as ``lax.while_loop``, and arrays cannot be
written in place (``x[i] = v`` becomes ``x.at[i].set(v)``).  transformer reads
the source instead, so both stay ordinary Python here:

* ``time_to_threshold`` integrates an ODE with a data-dependent ``while``;
* ``running_average`` fills an array in place in a loop;

and both go through ``jit``, ``grad`` and ``vmap`` as they are.
"""
import numpy as np

import transformer as tr


def time_to_threshold(rate):
    """Grow y' = rate * y (1 - y) from 0.01 by Euler steps until y > 0.5; return the time taken."""
    y = 0.01
    t = 0.0
    while y < 0.5:
        y = y + 0.05 * rate * y * (1.0 - y)
        t = t + 0.05
    return t + (y - 0.5)          # smooth in rate: the overshoot past the threshold


def running_average(x):
    out = np.zeros(len(x))
    total = 0.0
    for i in range(len(x)):
        total = total + x[i]
        out[i] = total / (i + 1)
    return np.sum(out ** 2)


rates = np.array([0.5, 1.0, 2.0, 4.0])
compiled = tr.jit(time_to_threshold)
print("data-dependent while under jit:", [round(float(compiled(r)), 3) for r in rates])

batched = tr.vmap(time_to_threshold)
print("the same while under vmap (each example runs its own number of steps):",
      np.round(batched(rates), 3).tolist(), "matches a Python loop:",
      np.allclose(batched(rates), [time_to_threshold(r) for r in rates]))

x = np.array([1.0, -2.0, 3.0, 0.5])
gradient = tr.grad(running_average)(x)
eps = 1e-6
reference = np.array([(running_average(x + eps * e) - running_average(x - eps * e)) / (2 * eps)
                      for e in np.eye(len(x))])
print("grad through in-place writes matches finite differences:", np.allclose(gradient, reference, atol=1e-7))
print("jit(grad) of the in-place loop:", np.round(tr.jit(tr.grad(running_average))(x), 6).tolist())

source = tr.show(tr.grad(running_average))
start = source.index("# backward sweep")
print("\nThe backward sweep replays the loop in reverse (excerpt):\n")
print("\n".join(source[start:].splitlines()[:16]))

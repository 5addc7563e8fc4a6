"""Primitives that have no NumPy spelling, used inside transformed functions."""
from __future__ import annotations


def stop_gradient(x):
    """Return ``x`` unchanged; derivatives do not flow through it."""
    return x


# ------------------------------------------------------------- named axes
# Collectives over a mapped axis (``vmap(f, axis_name="i")``, ``pmap``).  The
# transforms rewrite these calls; run outside any mapped axis they have no
# axis to reduce over, as in JAX.
def _unbound(axis_name):
    return NameError(f"unbound axis name: {axis_name!r} (call this inside vmap or pmap with axis_name={axis_name!r})")


def psum(x, axis_name):
    """The sum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmean(x, axis_name):
    """The mean of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmax(x, axis_name):
    """The maximum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmin(x, axis_name):
    """The minimum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def all_gather(x, axis_name):
    """Every example's ``x`` stacked along a new leading axis."""
    raise _unbound(axis_name)


def axis_index(axis_name):
    """This example's position along ``axis_name``."""
    raise _unbound(axis_name)


def ppermute(x, axis_name, perm, *, inverse=False):
    """``x`` sent along ``axis_name`` by ``perm``, a sequence of (source, destination)
    pairs; a device no pair names as destination receives zeros (JAX's meaning).

    ``inverse=True`` reads the pairs the other way round, (destination, source):
    the adjoint of a ppermute is the ppermute with the inverted permutation, and
    a flag keeps the permutation a static literal in generated code."""
    raise NameError(f"lax.ppermute over {axis_name!r} runs only inside pmap(..., axis_name={axis_name!r}): "
                    f"vmap has no ppermute rule yet")

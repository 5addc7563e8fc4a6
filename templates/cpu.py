"""What the CPU target (numba ``njit``, transformer/backends/) knows of each primitive, beyond the
call numba cannot compile as written (that is the registry's ``numba=Lowering(...)``).

The passes over a cpu module read these options from the ``"cpu"`` table
(``rules.options("cpu", name)``) and keep only their machinery:

- ``vector_math``: numba_vecmath's version of the function, which ``numba_lowering.vector_math``
  calls instead (numba compiles NumPy's to one libm call per element, which no loop around it can
  vectorise; numba_vecmath's is arithmetic that LLVM turns into SIMD code).
- ``vector_math_of_temporary``: the version for an argument that is an array expression (``x - m``),
  which numba makes a new array for: the result overwrites it, so no second array is allocated.
- ``lane_math``: the version that vmap's loops over SIMD lanes call (cpu_lanes.py): the kernel alone,
  exact within a range, whose argument cpu_lanes checks beside it (``vm.trig_beyond_range``).
  Without it the lanes call the ``vector_math`` version.
- ``lane_safe``: whether a lane may run the operation for an example that has finished (cpu_lanes.py):
  ``True`` (it cannot raise), ``False`` (it may), or safe only when its second operand is a literal
  (``"by_nonzero_literal"``, ``"by_positive_literal"``).  Without it, a comparison or a function of
  one number is safe (each gives NaN or inf where undefined) and anything else is not.
- ``elementwise=False``: not an operation of arrays element by element, whatever its kind says, so
  numba_fusion does not substitute it into another expression.
- ``of_a_product``: the nl helper that computes the operation of a product ``a * b`` without writing the
  product out (``helper(a, b, *its other arguments)``; for ``rt.unbroadcast``, a second unbroadcast of the
  result may follow as ``then``), which numba_fusion.fuse_summed_products calls where the product is
  read by nothing else and the sum's target was given a leading axis by indexing with None.
- ``added_in_one_pass``: the nl helper that computes ``base + <the operation>`` in the operation's own
  pass (``helper(base, *its arguments)``), which numba_fusion.fuse_added_cotangents calls where the
  result is read only by the add on the next line.
- ``free_to_recompute``, ``grad_seed``, ``fresh_zeros``: what numba_loops' split of an accumulating
  loop needs to know of reverse mode's runtime calls.
- ``small_arrays``: how numba_small_arrays computes the elements of the operation's result where its
  operands are arrays of a few elements kept as a number each (elementwise operations need none: their
  ufunc says it).  One of ``"from_tuple"``, ``"summed"``, ``"sum_to_shape_of"``, ``"expand"``,
  ``"broadcast"``, ``"zero_filled"``, ``"seed"``, ``"literal_shape"``, ``"index"`` (that module's forms).
"""
from transformer.rules import machinery

# ------------------------------------------------------------ numba_vecmath
machinery("cpu", "exp", vector_math="vm.exp", vector_math_of_temporary="vm.exp_of_temporary")
machinery("cpu", "expm1", vector_math="vm.expm1", vector_math_of_temporary="vm.expm1_of_temporary")
machinery("cpu", "tanh", vector_math="vm.tanh", vector_math_of_temporary="vm.tanh_of_temporary")
machinery("cpu", "log", vector_math="vm.log", vector_math_of_temporary="vm.log_of_temporary")
# sin and cos reduce their argument exactly only up to |x| = 2e5: vm.sin takes libm's path beyond,
# a branch a loop over lanes cannot vectorise, so the lanes call the kernel and check the range
machinery("cpu", "sin", vector_math="vm.sin", lane_math="vm.sin_in_range")
machinery("cpu", "cos", vector_math="vm.cos", lane_math="vm.cos_in_range")

# ------------------------------------------------------------ cpu_lanes
# operations of two numbers that cannot raise (a float result, or NaN/inf where undefined)
machinery("cpu", "add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin", "copysign",
          "hypot", "arctan2", "logaddexp", "where", lane_safe=True)
# a division raises on an integer zero: safe by a literal divisor that is not 0, and, for a power,
# by a positive literal exponent (an integer to a negative power raises)
machinery("cpu", "divide", lane_safe="by_nonzero_literal")
machinery("cpu", "power", lane_safe="by_positive_literal")
# functions of one number that may raise: round (to an integer), reciprocal (1/x: a division)
machinery("cpu", "round", "reciprocal", lane_safe=False)

# ------------------------------------------------------------ numba_fusion
# Python's `not` asks its operand for one truth value: of an array it raises, so numba's fused
# array expressions cannot take it (its kind is a comparison's, for the transforms' sake)
machinery("cpu", "not", elementwise=False)
# a max's (min's) cotangent is mostly zeros: added to x's other cotangent as each share is written
# (lse, logsumexp), not written out as an array and read back by the add
machinery("cpu", "rt.extremum_vjp", added_in_one_pass="nl.extremum_vjp_added")

# ------------------------------------------------------------ numba_loops
# Computing these again costs nothing worth counting: a sum over broadcast axes (none for a
# scalar), grad's seed (1 of a type).  A split loop's second half may compute them again.
machinery("cpu", "rt.unbroadcast", free_to_recompute=True, small_arrays="sum_to_shape_of",
          of_a_product="nl.unbroadcast_product")
# grad's seed: 1 of its operand's type, the same in every iteration, so a split loop takes it once
# between its two halves
machinery("cpu", "rt.scalar_seed", free_to_recompute=True, grad_seed=True, small_arrays="seed")
# a new array of zeros: an accumulator of a cotangent, which a split loop may carry in a scalar
machinery("cpu", "rt.zeros_like", fresh_zeros=True, small_arrays="zero_filled")

# ------------------------------------------------------------ numba_small_arrays
# np.array((0.0, y)): its elements; np.sum and a reduction's cotangent (rt.expand_to) in NumPy's
# order of addition; np.shape, a literal; x[1] and x[0, 2], the element
machinery("cpu", "asarray", small_arrays="from_tuple")
machinery("cpu", "zeros_like", small_arrays="zero_filled")
machinery("cpu", "sum", small_arrays="summed")
machinery("cpu", "rt.expand_to", small_arrays="expand")
machinery("cpu", "broadcast_to", small_arrays="broadcast")
machinery("cpu", "shape", small_arrays="literal_shape")
machinery("cpu", "getitem", small_arrays="index")

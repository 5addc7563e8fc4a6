"""The ``"cuda"`` table: how the host driver of CUDA's array code (backends/cuda_fusion.py) runs each
primitive that its fused elementwise kernels do not.

The fused kernels run the elementwise kinds and the primitives with a ``per_element`` scalar form
(templates/scalar_forms.py) that have no rule here.  Every rule here is ``machinery``: the driver's
``strategy`` does the work, with what the options give it.

* ``reduction``: one ``cu.reduce`` launch of cuda_kernels' reduction.  ``combine`` is how it joins
  two partial results (the cuda_kernels constant of that name; MEAN sums, then divides by the
  count); ``start`` the value it starts from: ``"zero"``, or the dtype's ``"lowest"`` or
  ``"highest"`` value, for the reductions NumPy refuses on an empty array (they have no identity).
* ``driver``: a call of the cuda_runtime helper ``call`` with the same operands and keywords.
* ``host_made``: NumPy builds the array on the host and it is copied to the device once (these
  take sizes, not arrays: nothing on the device to compute them from).
* ``host_scalar``: Python's cast of one value, taken to the host first (``cu.value``).
* ``unchanged``: the call as written: shape questions and indexing, which device arrays answer as
  NumPy's do, and reverse mode's tapes and seed, host values.
"""
from transformer.rules import machinery

machinery("cuda", "sum", strategy="reduction", combine="SUM", start="zero")
machinery("cuda", "mean", strategy="reduction", combine="MEAN", start="zero")
machinery("cuda", "max", strategy="reduction", combine="MAX", start="lowest")
machinery("cuda", "min", strategy="reduction", combine="MIN", start="highest")

machinery("cuda", "matmul", "dot", strategy="driver", call="cu.matmul")      # 1-D and 2-D: the tiled kernel
machinery("cuda", "transpose", strategy="driver", call="cu.transpose")
machinery("cuda", "reshape", strategy="driver", call="cu.reshape")
machinery("cuda", "moveaxis", strategy="driver", call="cu.moveaxis")
machinery("cuda", "shape", strategy="driver", call="cu.shape")
machinery("cuda", "broadcast_to", strategy="driver", call="cu.broadcast_to")
machinery("cuda", "rt.unbroadcast", strategy="driver", call="cu.unbroadcast")
machinery("cuda", "rt.expand_to", strategy="driver", call="cu.expand_to")
machinery("cuda", "copy", "rt.copy", strategy="driver", call="cu.copy")
# np.empty's values are unspecified: zeros are as good, and the same kernel
machinery("cuda", "zeros", "empty", strategy="driver", call="cu.zeros")
machinery("cuda", "zeros_like", "empty_like", "rt.zeros_like", strategy="driver", call="cu.zeros_like")
machinery("cuda", "ones", strategy="driver", call="cu.ones")
machinery("cuda", "ones_like", strategy="driver", call="cu.ones_like")
machinery("cuda", "full", strategy="driver", call="cu.full")
machinery("cuda", "full_like", strategy="driver", call="cu.full_like")

machinery("cuda", "arange", "linspace", "eye", strategy="host_made")
machinery("cuda", "float", "int", "bool", strategy="host_scalar")
machinery("cuda", "ndim", "size", "len", "getitem", "rt.stack", "rt.push", "rt.pop", "rt.top", "rt.scalar_seed",
          strategy="unchanged")
# vmap's checks take the batch's shape (a tuple on the host) and return nothing
machinery("cuda", "rt.number_per_example", "rt.truth_value_per_example", strategy="unchanged")

"""The CUDA target: fused kernels for array code, one thread per example for vmap.

    python examples/cuda_target.py

With an NVIDIA GPU this runs on it.  Without one it runs the same kernels on
numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set below before numba.cuda
is imported): slow, so the sizes here are small, but the generated code is
exactly what a GPU would run.
"""
import os
import shutil

if not (shutil.which("nvidia-smi") or os.path.exists("/dev/nvidiactl")):
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402

import transformer as tr  # noqa: E402


def gelu_layer(x, w, b):
    h = x @ w + b
    return 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))


def pendulum(theta, omega, damping):
    dt = 0.01
    for step in range(100):
        alpha = -np.sin(theta) - damping * omega
        omega = omega + dt * alpha
        theta = theta + dt * omega
    return theta


def kernels_part(module_text):
    """The generated kernels and driver, without the module's header and imports."""
    return module_text[module_text.index("\ndef ") + 1:]


def main():
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    print("running on", "numba's CUDA simulator (no GPU here)" if simulated else "the GPU")
    rng = np.random.default_rng(0)

    x, w, b = rng.standard_normal((32, 24)), rng.standard_normal((24, 16)), rng.standard_normal(16)
    layer = tr.jit(gelu_layer, target="cuda")
    out = layer(x, w, b)
    h = x @ w + b
    expected = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    print(f"jit(gelu_layer, target='cuda') matches NumPy: {np.allclose(out, expected)}")
    print("\nthe generated module: one tiled matmul, then ONE fused kernel for the whole GELU\n")
    print(kernels_part(tr.show(layer)))

    theta0, omega0 = rng.uniform(-1, 1, 64), rng.uniform(-1, 1, 64)
    final = tr.jit(tr.vmap(pendulum, in_axes=(0, 0, None)), target="cuda")(theta0, omega0, 0.1)
    loop = np.array([pendulum(t, o, 0.1) for t, o in zip(theta0, omega0)])
    print(f"vmap(pendulum) on the device, one thread per initial condition, matches a Python loop: "
          f"{np.allclose(final, loop)}")

    slopes = tr.jit(tr.vmap(tr.grad(pendulum), in_axes=(0, 0, None)), target="cuda")(theta0, omega0, 0.1)
    h = 1e-6
    central = np.array([(pendulum(t + h, o, 0.1) - pendulum(t - h, o, 0.1)) / (2 * h)
                        for t, o in zip(theta0, omega0)])
    print(f"per-example gradients d theta(1s) / d theta(0) match central differences: "
          f"{np.allclose(slopes, central, atol=1e-6)}")


if __name__ == "__main__":
    main()

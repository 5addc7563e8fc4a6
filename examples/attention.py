"""Attention, compiled: what jit does to the code of a transformer layer.

    python examples/attention.py

Scaled dot-product attention mixes the rows of ``v``: output row i is a
weighted average of the rows of ``v``, with weights ``softmax(q[i] . k[j] / sqrt(d))``.
The causal version lets row i look only at rows j <= i, written here the way
one writes it on paper: a loop that blanks the future, in place.  (Tracing
systems need that mask as an array expression; transformer reads the loop.)

``tr.jit`` rewrites each function into simple statements, inlines
``tr.nn.softmax`` from its own NumPy source, and compiles the result with numba.
"""
import numpy as np

import transformer as tr


def scaled_dot_product(q, k, v):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    weights = tr.nn.softmax(scores)
    return np.dot(weights, v)


def causal_attention(q, k, v):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    n = scores.shape[0]
    for i in range(n):
        # row i may not look at later rows
        for j in range(i + 1, n):
            scores[i, j] = -np.inf
    weights = tr.nn.softmax(scores)
    return np.dot(weights, v)


def attention_weights(q, k):
    return tr.nn.softmax(np.dot(q, k.T) / np.sqrt(q.shape[-1]))


def excerpt(module_text, start_phrase, end_phrase):
    """Generated lines from the first containing ``start_phrase`` to the next statement starting ``end_phrase``."""
    lines = module_text.splitlines()
    start = next(i for i, line in enumerate(lines) if start_phrase in line)
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith(end_phrase))
    return "\n".join(lines[start:end + 1])


def main():
    rng = np.random.default_rng(1)
    tokens, width = 6, 8
    q, k, v = (rng.standard_normal((tokens, width)) for _ in range(3))

    weights = tr.jit(attention_weights)(q, k)
    print(f"{tokens} tokens of width {width}. Attention weights (row i: how much token i reads each token):")
    print(np.array2string(weights, precision=2, suppress_small=True))
    print("each row sums to 1:", np.allclose(weights.sum(axis=1), 1.0))

    for fn in (scaled_dot_product, causal_attention):
        out = tr.jit(fn)(q, k, v)
        expected = fn(q, k.copy(), v)       # plain NumPy run of the same source
        assert np.allclose(out, expected, rtol=1e-10, atol=1e-12), fn.__name__
        print(f"jit({fn.__name__}) matches NumPy: largest difference {np.max(np.abs(out - expected)):.1e}")

    causal = tr.jit(causal_attention)
    first_row = causal(q, k, v)[0]
    print("causal: token 0 sees only itself, so output row 0 == v[0]:", np.allclose(first_row, v[0]))

    code = tr.show(causal)
    print("\nGenerated code for the causal mask (the loop and the in-place write survive as written):\n")
    print(excerpt(code, "# for i in range(n):", "scores[i, j] = -np.inf"))
    readable = tr.show(tr.jit(causal_attention, target="python"))
    print("\n... and tr.nn.softmax, inlined from transformer/nn.py with the line each statement came from:\n")
    print(excerpt(readable, "# weights = tr.nn.softmax(scores)", "weights = "))
    print("\nFor numba (the cpu target) those five passes over the scores become one loop over rows:\n")
    print(excerpt(code, "# weights = tr.nn.softmax(scores)", "weights = "))


if __name__ == "__main__":
    main()

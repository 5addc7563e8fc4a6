"""tr.random: JAX's explicit-key random numbers in NumPy.

The first tests need no jax (Random123's known answers for threefry2x32,
determinism, shapes, distributions); the ones below compare with jax.random
number for number where jax is installed."""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import transformer as tr
from transformer import random as R


# Random123's known-answer vectors for threefry2x32 with 20 rounds:
# (key, counter) -> result.
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key,ctr,expected", KAT)
def test_threefry2x32_known_answers(key, ctr, expected):
    y0, y1 = R.threefry2x32(np.array(key, np.uint32), np.array([ctr[0]], np.uint32),
                            np.array([ctr[1]], np.uint32))
    assert (int(y0[0]), int(y1[0])) == expected


def test_threefry2x32_vectorised_matches_elementwise():
    k = np.array([0x13198A2E, 0x03707344], np.uint32)
    x0 = np.arange(5, dtype=np.uint32) * np.uint32(977)
    x1 = np.arange(5, dtype=np.uint32) + np.uint32(0xFFFFFFF0)
    y0, y1 = R.threefry2x32(k, x0, x1)
    for i in range(5):
        a, b = R.threefry2x32(k, x0[i:i + 1], x1[i:i + 1])
        assert (a[0], b[0]) == (y0[i], y1[i])


def test_keys():
    assert R.PRNGKey(0).dtype == np.uint32 and R.PRNGKey(0).shape == (2,)
    assert R.PRNGKey(42).tolist() == [0, 42]
    assert R.PRNGKey(2 ** 40 + 7).tolist() == [2 ** 8, 7]
    assert R.PRNGKey(-1).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    assert np.array_equal(R.key(3), R.PRNGKey(3))
    assert tr.random is R


def test_split_and_fold_in():
    k = R.PRNGKey(0)
    ks = R.split(k)
    assert ks.shape == (2, 2) and ks.dtype == np.uint32
    assert R.split(k, 5).shape == (5, 2)
    assert R.split(k, (3, 4)).shape == (3, 4, 2)
    assert len({tuple(x) for x in R.split(k, 100)}) == 100
    assert not np.array_equal(ks[0], ks[1]) and not np.array_equal(ks[0], k)
    assert np.array_equal(R.split(k), R.split(R.PRNGKey(0)))           # deterministic
    assert not np.array_equal(R.fold_in(k, 1), R.fold_in(k, 2))
    assert R.fold_in(k, 1).shape == (2,)
    with pytest.raises(ValueError):
        R.normal(ks)                                                    # one key at a time
    with pytest.raises(TypeError):
        R.fold_in(k, [1, 2])


def test_determinism_and_independence():
    k1, k2 = R.split(R.PRNGKey(7))
    a = R.normal(k1, (1000,))
    assert np.array_equal(a, R.normal(k1, (1000,)))
    b = R.normal(k2, (1000,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.1


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_shapes_and_dtypes(dtype):
    k = R.PRNGKey(1)
    for shape in [(), (3,), (2, 5), (4, 1, 3)]:
        for f in (R.uniform, R.normal, R.gumbel, R.exponential, R.laplace, R.logistic):
            x = f(k, shape, dtype)
            assert x.shape == shape and x.dtype == dtype
    assert R.uniform(k).dtype == np.float64 and R.normal(k, (2,)).dtype == np.float64
    assert R.randint(k, (3,), 0, 5).dtype == np.int64
    assert R.randint(k, (3,), 0, 5, np.int32).dtype == np.int32
    assert R.bernoulli(k, 0.5, (4,)).dtype == np.bool_
    assert R.bits(k, (3,)).dtype == np.uint64
    assert R.bits(k, (3,), np.uint8).dtype == np.uint8
    assert R.rademacher(k, (3,)).dtype == np.int64 and R.rademacher(k, (3,), np.float32).dtype == np.float32


def test_distributions():
    k = R.PRNGKey(123)
    u = R.uniform(k, (20000,))
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 1 / 12) < 0.01
    u = R.uniform(k, (20000,), np.float32, minval=-2.0, maxval=3.0)
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    for dtype in (np.float32, np.float64):
        z = R.normal(k, (20000,), dtype)
        assert np.all(np.isfinite(z))
        assert abs(z.mean()) < 0.05 and abs(z.var() - 1) < 0.05
    assert abs(R.bernoulli(k, 0.3, (20000,)).mean() - 0.3) < 0.02
    r = R.randint(k, (20000,), -3, 4)
    assert r.min() == -3 and r.max() == 3 and abs(r.mean()) < 0.1
    c = R.categorical(k, np.log(np.array([0.1, 0.2, 0.7])), shape=(20000,))
    assert np.allclose(np.bincount(c, minlength=3) / 20000, [0.1, 0.2, 0.7], atol=0.02)
    g = R.gumbel(k, (20000,))
    assert abs(g.mean() - np.euler_gamma) < 0.05
    e = R.exponential(k, (20000,))
    assert e.min() >= 0.0 and abs(e.mean() - 1.0) < 0.03 and abs(e.var() - 1.0) < 0.1
    lp = R.laplace(k, (20000,))
    assert abs(lp.mean()) < 0.05 and abs(lp.var() - 2.0) < 0.15
    lg = R.logistic(k, (20000,))
    assert abs(lg.mean()) < 0.05 and abs(lg.var() - np.pi ** 2 / 3) < 0.2
    rd = R.rademacher(k, (20000,))
    assert set(np.unique(rd).tolist()) == {-1, 1} and abs(rd.mean()) < 0.03


def test_permutation_and_choice():
    k = R.PRNGKey(5)
    p = R.permutation(k, 50)
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    x = np.arange(12.0).reshape(4, 3)
    px = R.permutation(k, x)
    assert sorted(map(tuple, px.tolist())) == sorted(map(tuple, x.tolist()))
    c = R.choice(k, 10, (6,), replace=False)
    assert len(set(c.tolist())) == 6 and c.min() >= 0 and c.max() < 10
    c = R.choice(k, x, (2,))
    assert c.shape == (2, 3)
    c = R.choice(k, 4, (20000,), p=np.array([0.1, 0.2, 0.3, 0.4]))
    assert np.allclose(np.bincount(c, minlength=4) / 20000, [0.1, 0.2, 0.3, 0.4], atol=0.02)
    with pytest.raises(ValueError):
        R.choice(k, 3, (5,), replace=False)


def _noisy_layer(key, w, x):
    k_drop, k_noise = R.split(key)
    keep = R.bernoulli(k_drop, 0.75, (4,))
    noise = R.normal(k_noise, (4,))
    return np.sum(np.tanh(w @ x) * keep / 0.75 + 0.1 * noise * x)


def _layer_by_hand(key, w, x):
    """The same function's value and gradient in w, written out in NumPy with the draws made outside."""
    k_drop, k_noise = R.split(key)
    mask = R.bernoulli(k_drop, 0.75, (4,)) / 0.75
    noise = R.normal(k_noise, (4,))
    h = np.tanh(w @ x)
    return np.sum(h * mask + 0.1 * noise * x), np.outer((1.0 - h ** 2) * mask, x)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_draws_inside_transformed_code_are_the_numbers_drawn_outside(target):
    """tr.random's keys and samplers are primitives: jit (numba calls them in object mode), grad and
    vmap over a batch of keys draw what the same calls draw outside."""
    key = R.PRNGKey(7)
    w = np.linspace(-1.0, 1.0, 16).reshape(4, 4)
    x = np.array([0.3, -0.2, 0.5, 0.1])
    value, grad_w = _layer_by_hand(key, w, x)
    assert np.allclose(tr.jit(_noisy_layer, target=target)(key, w, x), value, rtol=1e-13)
    assert np.allclose(tr.jit(tr.grad(_noisy_layer, argnums=1), target=target)(key, w, x), grad_w, rtol=1e-13)
    keys = R.split(key, 5)
    per_key = tr.jit(tr.vmap(_noisy_layer, in_axes=(0, None, None)), target=target)(keys, w, x)
    assert np.allclose(per_key, [_layer_by_hand(k, w, x)[0] for k in keys], rtol=1e-13)
    drawn = tr.jit(lambda k: (R.split(k, 3), R.uniform(k, (2, 3), np.float32), R.permutation(k, 6),
                              R.exponential(k, (4,)), R.laplace(k, (2, 2), np.float32), R.logistic(k, (3,)),
                              R.rademacher(k, (5,))), target=target)(key)
    for got, want in zip(drawn, (R.split(key, 3), R.uniform(key, (2, 3), np.float32), R.permutation(key, 6),
                                 R.exponential(key, (4,)), R.laplace(key, (2, 2), np.float32),
                                 R.logistic(key, (3,)), R.rademacher(key, (5,)))):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_compiled_draws_run_from_the_cache_in_a_later_process(tmp_path):
    """A tiered first call compiles in a background process and later calls load that machine code
    from numba's cache: the draws must run there too (a numba object-mode body would not: its
    environment is named by a counter of the process that compiled it)."""
    script = tmp_path / "draw.py"
    script.write_text(textwrap.dedent("""
        import time
        import numpy as np
        import transformer as tr

        def noisy(key, x):
            return x * tr.random.normal(key, (3,)) + tr.random.uniform(key, (3,), minval=-1.0)

        jitted = tr.jit(noisy)
        deadline = time.time() + 300
        while True:
            out = jitted(tr.random.PRNGKey(4), np.ones(3))
            if tr.tier_of(jitted) == "compiled" or time.time() > deadline:
                break
            time.sleep(0.1)
        print(tr.tier_of(jitted), np.array_equal(out, noisy(tr.random.PRNGKey(4), np.ones(3))))
    """))
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=str(tmp_path / "cache"), TRANSFORMER_TIERED="1")
    for run in ("compiles", "loads from the cache"):
        result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, (run, result.stderr[-3000:])
        assert result.stdout.split() == ["compiled", "True"], (run, result.stdout, result.stderr[-2000:])


def _hashes_inside(key, x):
    y0, y1 = tr.random.threefry2x32(key, x, x)
    return y0


def test_threefry_itself_is_refused_at_the_users_call():
    """threefry2x32's uint32 arithmetic is not transformable: refused on the user's own line."""
    with pytest.raises(tr.TransformError) as err:
        tr.jit(_hashes_inside)(R.PRNGKey(0), np.zeros(3, np.uint32))
    message = str(err.value)
    assert "test_random.py" in message and "threefry2x32" in message
    assert "random.py:" not in message.replace("test_random.py:", "")


def test_public_functions_read_as_functions():
    assert R.normal.__name__ == "normal" and "normal" in R.normal.__doc__
    assert repr(R.threefry2x32) == "<function tr.random.threefry2x32>"


def test_float64_log_is_the_c_library_s():
    """XLA's CPU float64 log is the C library's; NumPy's np.log may be its own SIMD
    approximation (with AVX-512), so the samplers take the C library's."""
    x = np.exp(np.random.default_rng(0).uniform(-30, 30, 100000))
    x[:4] = [0.0, -1.0, np.inf, np.nan]
    with np.errstate(divide="ignore", invalid="ignore"):
        got = R._log64(x)
    assert np.array_equal(got[4:], [math.log(v) for v in x[4:]])
    assert got[0] == -np.inf and np.isnan(got[1]) and got[2] == np.inf and np.isnan(got[3])
    assert R._log64(np.float64(2.0)).shape == () and R._log64(np.float64(2.0)) == math.log(2.0)


# ---------------------------------------------------------------- against jax

@pytest.fixture(scope="module")
def jr():
    jax = pytest.importorskip("jax")
    import jax.random
    with jax.enable_x64(True):
        yield jax.random


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 40 + 7, -3])
def test_jax_keys_split_fold_in(jr, seed):
    k, jk = R.PRNGKey(seed), jr.PRNGKey(seed)
    assert same(k, jk)
    assert same(R.split(k), jr.split(jk))
    assert same(R.split(k, 7), jr.split(jk, 7))
    assert same(R.split(k, (3, 4)), jr.split(jk, (3, 4)))
    assert same(R.fold_in(k, 12345), jr.fold_in(jk, 12345))
    assert same(R.key_data(jr.key(seed)), k)          # a typed jax key is read as its data


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_jax_bits(jr, dtype):
    k = R.PRNGKey(3)
    for shape in [(), (1,), (7,), (4, 5)]:
        assert same(R.bits(k, shape, dtype), jr.bits(jr.PRNGKey(3), shape, dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jax_uniform(jr, dtype):
    for seed in (0, 9):
        k, jk = R.PRNGKey(seed), jr.PRNGKey(seed)
        for shape in [(), (1,), (5, 7), (1001,)]:
            assert same(R.uniform(k, shape, dtype), jr.uniform(jk, shape, dtype))
        assert same(R.uniform(k, (999,), dtype, -2.0, 3.0), jr.uniform(jk, (999,), dtype, -2.0, 3.0))
        lo = np.linspace(-1, 0, 6)
        assert same(R.uniform(k, (4, 6), dtype, lo, 2.0), jr.uniform(jk, (4, 6), dtype, lo, 2.0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jax_normal_bit_exact(jr, dtype):
    for seed in (0, 9):
        for shape in [(), (3,), (20, 50), (100001,)]:
            assert same(R.normal(R.PRNGKey(seed), shape, dtype), jr.normal(jr.PRNGKey(seed), shape, dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jax_gumbel_bit_exact(jr, dtype):
    """float16's uniform is the one XLA's constant folding leaves; the logs are XLA's."""
    for seed in (0, 5):
        for shape in [(), (7,), (100000,)]:
            assert same(R.gumbel(R.PRNGKey(seed), shape, dtype), jr.gumbel(jr.PRNGKey(seed), shape, dtype))


@pytest.mark.parametrize("name", ["exponential", "laplace", "logistic"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jax_exponential_laplace_logistic_bit_exact(jr, name, dtype):
    for seed in (0, 5):
        for shape in [(), (7,), (100000,)]:
            assert same(getattr(R, name)(R.PRNGKey(seed), shape, dtype),
                        getattr(jr, name)(jr.PRNGKey(seed), shape, dtype))


def test_jax_rademacher(jr):
    for dtype in (None, np.int32, np.float32):
        assert same(R.rademacher(R.PRNGKey(1), (1000,), dtype), jr.rademacher(jr.PRNGKey(1), (1000,), dtype))


def test_jax_bernoulli_randint(jr):
    k, jk = R.PRNGKey(11), jr.PRNGKey(11)
    assert same(R.bernoulli(k), jr.bernoulli(jk))
    assert same(R.bernoulli(k, 0.3, (50,)), jr.bernoulli(jk, 0.3, (50,)))
    p = np.linspace(0, 1, 20)
    assert same(R.bernoulli(k, p), jr.bernoulli(jk, p))
    assert same(R.bernoulli(k, p.astype(np.float32), (3, 20)), jr.bernoulli(jk, p.astype(np.float32), (3, 20)))
    for dtype in (None, np.int32, np.int64, np.uint8, np.int16, np.uint32):
        assert same(R.randint(k, (40,), 0, 200, dtype), jr.randint(jk, (40,), 0, 200, dtype))
    assert same(R.randint(k, (40,), -5, 17), jr.randint(jk, (40,), -5, 17))
    assert same(R.randint(k, (40,), 0, 256, np.uint8), jr.randint(jk, (40,), 0, 256, np.uint8))
    assert same(R.randint(k, (3, 4), np.arange(4), 10), jr.randint(jk, (3, 4), np.arange(4), 10))
    assert same(R.randint(k, (5,), 3, 3), jr.randint(jk, (5,), 3, 3))


def test_jax_permutation_choice(jr):
    k, jk = R.PRNGKey(2), jr.PRNGKey(2)
    for n in (1, 2, 10, 2000):
        assert same(R.permutation(k, n), jr.permutation(jk, n))
    x = np.arange(24.0).reshape(4, 6)
    assert same(R.permutation(k, x), jr.permutation(jk, x))
    assert same(R.permutation(k, x, axis=1), jr.permutation(jk, x, axis=1))
    assert same(R.permutation(k, x, axis=1, independent=True), jr.permutation(jk, x, axis=1, independent=True))
    assert same(R.choice(k, 10, (5,)), jr.choice(jk, 10, (5,)))
    assert same(R.choice(k, 10, (2, 3), replace=False), jr.choice(jk, 10, (2, 3), replace=False))
    assert same(R.choice(k, x, (3,)), jr.choice(jk, x, (3,)))
    assert same(R.choice(k, x, (2,), axis=1), jr.choice(jk, x, (2,), axis=1))
    p = np.array([0.1, 0.2, 0.3, 0.4])
    assert same(R.choice(k, 4, (30,), p=p), jr.choice(jk, 4, (30,), p=p))
    assert same(R.choice(k, x, (3,), replace=False, p=p), jr.choice(jk, x, (3,), replace=False, p=p))


def test_jax_gumbel_categorical(jr):
    k, jk = R.PRNGKey(4), jr.PRNGKey(4)
    assert same(R.gumbel(k, (1000,)), jr.gumbel(jk, (1000,)))
    assert same(R.gumbel(k, (100000,)), jr.gumbel(jk, (100000,)))
    lg = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    assert same(R.categorical(k, lg), jr.categorical(jk, lg))
    assert same(R.categorical(k, lg, shape=(100, 2)), jr.categorical(jk, lg, shape=(100, 2)))
    assert same(R.categorical(k, lg, axis=0), jr.categorical(jk, lg, axis=0))
    lg32 = lg.astype(np.float32)
    assert same(R.categorical(k, lg32, shape=(500, 2)), jr.categorical(jk, lg32, shape=(500, 2)))
    p = np.random.default_rng(2).uniform(0.01, 1, 300)
    for dtype in (np.float32, np.float64):
        q = (p / p.sum()).astype(dtype)
        assert same(R.choice(k, 300, (100,), replace=False, p=q), jr.choice(jk, 300, (100,), replace=False, p=q))


def test_jax_float32_without_x64():
    """With x64 off (JAX's default), JAX's default dtype is float32: tr.random's
    float32 numbers are those."""
    jax = pytest.importorskip("jax")
    import jax.random as jr
    with jax.enable_x64(False):
        jk = jr.PRNGKey(0)
        assert same(R.uniform(R.PRNGKey(0), (100,), np.float32), jr.uniform(jk, (100,)))
        assert same(R.randint(R.PRNGKey(0), (100,), 0, 7, np.int32), jr.randint(jk, (100,), 0, 7))
        assert same(R.split(R.PRNGKey(0), 3), jr.split(jk, 3))


def test_jax_vmap_of_draws_inside_jit(jr):
    """A batch of keys under jit(vmap): each example draws its key's numbers, in both libraries."""
    import jax
    keys = R.split(R.PRNGKey(11), 4)
    ours = tr.jit(tr.vmap(lambda k: R.normal(k, (3,)) + R.uniform(k, (3,), minval=-1.0)))(keys)
    theirs = jax.jit(jax.vmap(lambda k: jr.normal(k, (3,)) + jr.uniform(k, (3,), minval=-1.0)))(keys)
    assert np.allclose(ours, np.asarray(theirs), rtol=1e-15, atol=0)

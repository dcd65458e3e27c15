"""Fuzzing the kernel cache's seals: whatever is done to an entry's bytes, a read gives the
content that was stored for the key, or nothing with a CacheWarning; never anything else.

The first property runs on the cache API with arbitrary contents, keys and damage (fast);
the second damages a real emulator library and checks that compiling again gives the
right answer.  In CI both run a fixed number of derandomized examples; the fuzzers'
environment (docs/TESTING.md) makes them run long: `CINN_PY_FUZZ=long` (random
examples, failures kept in `CINN_PY_FUZZ_DB`), `CINN_PY_FUZZ_EXAMPLES=N`.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from cinn_py.backends import cache, cuda_emu
from cinn_py.errors import CacheWarning


def fuzz_settings(ci_examples: int, **options: object) -> settings:
    """`ci_examples` derandomized examples, or, when the fuzzers' environment asks for a
    long run, `CINN_PY_FUZZ_EXAMPLES` (else ten times as many) random ones."""
    examples = os.environ.get("CINN_PY_FUZZ_EXAMPLES")
    long = os.environ.get("CINN_PY_FUZZ", "ci") == "long" or examples is not None
    if not long:
        return settings(max_examples=ci_examples, derandomize=True, database=None, **options)
    folder = os.environ.get("CINN_PY_FUZZ_DB", ".hypothesis/fuzz")
    return settings(
        max_examples=int(examples) if examples else 10 * ci_examples,
        database=DirectoryBasedExampleDatabase(folder),
        **options,
    )


KEYS = st.text("0123456789abcdef", min_size=64, max_size=64)

DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 1 << 16)),
    st.tuples(st.just("flip"), st.integers(0, 1 << 16), st.integers(1, 255)),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=200)),
    st.tuples(st.just("overwrite"), st.integers(0, 1 << 16), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("other-entry"), st.binary(max_size=300), st.booleans()),
    st.tuples(st.just("empty")),
    st.tuples(st.just("unsealed")),
)


def _damaged(data: bytes, damage: tuple, key: str, other_key: str) -> bytes:
    what, *args = damage
    if what == "truncate":
        return data[: args[0] % (len(data) + 1)]
    if what == "flip" and data:
        at = args[0] % len(data)
        return data[:at] + bytes([data[at] ^ args[1]]) + data[at + 1 :]
    if what == "append":
        return data + args[0]
    if what == "overwrite" and data:
        at = args[0] % len(data)
        return (data[:at] + args[1] + data[at + len(args[1]) :])[: max(len(data), at)]
    if what == "other-entry":  # a sound entry: of this key (another writer's) or another key
        content, same_key = args
        return content + cache.seal(content, key if same_key else other_key)
    if what == "empty":
        return b""
    if what == "unsealed":
        return data[:-120]
    return data


def _sound_content(data: bytes, key: str) -> bytes | None:
    """The content if `data` is exactly some content followed by its seal for `key`."""
    try:
        return cache.unseal(data, key)
    except cache.DamagedEntry:
        return None


@fuzz_settings(400, deadline=None)
@given(
    content=st.binary(max_size=2000),
    key=KEYS,
    other_key=KEYS,
    damages=st.lists(DAMAGE, max_size=4),
)
def test_a_read_gives_what_was_stored_or_nothing(content, key, other_key, damages) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "entry.bin"
        cache.write_entry(path, key, content)
        data = path.read_bytes()
        for damage in damages:
            data = _damaged(data, damage, key, other_key)
        path.write_bytes(data)
        twin = Path(folder) / "twin.bin"  # the streaming check reads the same bytes
        twin.write_bytes(data)
        expected = _sound_content(data, key)
        if expected is not None:
            assert data == expected + cache.seal(expected, key)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CacheWarning)
            got = cache.read_entry(path, key)
            verified = cache.verified_file(twin, key)
        assert got == expected
        assert verified == (expected is not None)
        rejections = [w for w in caught if issubclass(w.category, CacheWarning)]
        if expected is None:
            assert len(rejections) == 2, [str(w.message) for w in caught]
            assert str(path) in str(rejections[0].message)
            assert not path.exists() and not twin.exists()
        else:
            assert rejections == [] and path.exists()
        cache.forget()


LIBRARY_DAMAGE = DAMAGE.filter(lambda damage: damage[0] != "other-entry" or not damage[2])
"""Anything but a sound entry of this very key with other content: a seal vouches for the
bytes it was made for, so that is another writer's library, not damage."""

SOURCE = (
    'extern "C" __global__ void twice(float* y, const float* x, int n) {\n'
    "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n"
)


@fuzz_settings(12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damages=st.lists(LIBRARY_DAMAGE, min_size=1, max_size=3), other_key=KEYS)
def test_a_damaged_library_still_gives_the_right_answer(
    private_cache: Path, damages, other_key
) -> None:
    module = cuda_emu.compile(SOURCE)
    entry = module.path
    data = entry.read_bytes()
    for damage in damages:
        data = _damaged(data, damage, entry.stem, other_key)
    entry.write_bytes(data)
    cache.forget()  # read it again, as a new process would
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CacheWarning)
        module = cuda_emu.compile(SOURCE)
    damaged = _sound_content(data, entry.stem) is None  # else the damage changed nothing
    assert any(issubclass(w.category, CacheWarning) for w in caught) == damaged
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    module.launch("twice", (1,), (128,), [y, x, np.int32(100)])
    np.testing.assert_array_equal(y, 2 * x)

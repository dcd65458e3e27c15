"""The kernel cache never trusts a damaged entry.

Every kind of entry (emulator libraries, checking-mode executables, CUBINs, PTX, the
precompiled header) is damaged on disk in each way a cache can be damaged: empty,
garbage, truncated, flipped bytes, an entry of another key copied under this one, the
seal missing, bytes appended.  The next compile must give the right answer, with a
CacheWarning naming the entry and what was wrong, and store a sound entry again; never
a crash, never a wrong answer.  Processes building, loading and damaging one cache at
once must all give right answers too.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import cache, cuda_emu, emu_build, nvrtc
from cinn_py.backends.cache import CacheCounts
from cinn_py.cli import random_feeds
from cinn_py.errors import CacheWarning, CompileError
from cinn_py.reference import run_reference

SEAL = 120
"""Bytes of the seal at the end of every entry."""


def affine(value: int) -> str:
    """A kernel per value: y = x * value + 1 (different values, different keys)."""
    return (
        'extern "C" __global__ void affine(float* y, const float* x, int n) {\n'
        "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) y[i] = x[i] * {value}.0f + 1.0f;\n"
        "}\n"
    )


def check(module: cuda_emu.EmuModule, value: int) -> None:
    n = 300
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    module.launch("affine", (2,), (256,), [y, x, np.int32(n)])
    np.testing.assert_array_equal(y, x * value + 1)


@dataclass(frozen=True)
class Damage:
    """One way to damage an entry, given the entry and another key's sound entry."""

    name: str
    apply: Callable[[Path, Path], None]
    why: str
    """A regex of what the CacheWarning says is wrong."""


def _truncate(at: Callable[[int], int]) -> Callable[[Path, Path], None]:
    def apply(path: Path, other: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: at(len(data))])

    return apply


def _flip(at: Callable[[int], int]) -> Callable[[Path, Path], None]:
    def apply(path: Path, other: Path) -> None:
        data = bytearray(path.read_bytes())
        data[at(len(data))] ^= 0x40
        path.write_bytes(bytes(data))

    return apply


def _random_points(seed: int, count: int) -> list[Callable[[int], int]]:
    rng = np.random.default_rng(seed)
    fractions = rng.random(count)
    return [lambda size, f=f: int(f * (size - 1)) for f in fractions]


def _append(path: Path, other: Path) -> None:
    with open(path, "ab") as file:
        file.write(b"\0" * 16)


TRUNCATED = "too short to hold its seal|no seal at its end"
DAMAGES = [
    Damage("empty", lambda path, other: path.write_bytes(b""), "the file is empty"),
    Damage(
        "garbage",
        lambda path, other: path.write_bytes(os.urandom(path.stat().st_size)),
        "no seal at its end",
    ),
    Damage("truncated-to-1-byte", _truncate(lambda size: 1), TRUNCATED),
    Damage("truncated-seal", _truncate(lambda size: size - SEAL), TRUNCATED),
    Damage("truncated-last-byte", _truncate(lambda size: size - 1), TRUNCATED),
    *(
        Damage(f"truncated-at-random-{i}", _truncate(at), TRUNCATED)
        for i, at in enumerate(_random_points(14, 3))
    ),
    Damage("flipped-first-byte", _flip(lambda size: 0), "does not match its checksum"),
    *(
        Damage(f"flipped-at-random-{i}", _flip(lambda size, at=at: at(size - SEAL)), "checksum")
        for i, at in enumerate(_random_points(41, 2))
    ),
    Damage("flipped-in-the-seals-key", _flip(lambda size: size - SEAL + 10), "another key"),
    Damage("flipped-in-the-seals-digest", _flip(lambda size: size - 20), "checksum"),
    Damage("flipped-last-byte", _flip(lambda size: size - 1), "no seal at its end"),
    Damage(
        "another-keys-entry",
        lambda path, other: shutil.copyfile(other, path),
        "belongs to another key",
    ),
    Damage(
        "seal-missing",  # what an older cinn_py wrote: a sound library, but unsealed
        lambda path, other: path.write_bytes(path.read_bytes()[:-SEAL]),
        "no seal at its end",
    ),
    Damage("bytes-appended", _append, "no seal at its end"),
]


@pytest.fixture(scope="module")
def shared_private_cache(tmp_path_factory: pytest.TempPathFactory, seed_precompiled_header) -> Path:
    """One cache folder for the damage tests of this module (each repairs what it damaged)."""
    folder = tmp_path_factory.mktemp("integrity") / "cache"
    seed_precompiled_header(folder)
    return folder


def _unshared(path: Path) -> Path:
    """`path` as a file of its own (the precompiled header may be a hard link to the shared
    cache's), so that damaging it in place damages nothing else."""
    copy = path.with_name(".tmp-unshared")
    shutil.copyfile(path, copy)
    os.replace(copy, path)
    return path


@pytest.fixture
def damage_cache(shared_private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(shared_private_cache))
    return shared_private_cache


def _rebuilt_with_a_warning(damage: Damage, entry: Path, compile_again: Callable[[], object]):
    """Compile again as a new process would (nothing remembered) after `damage`: one
    CacheWarning naming the entry and the damage, one rejection, one compile."""
    before = cache.stats.snapshot()
    with pytest.warns(CacheWarning) as record:
        result = compile_again()
    messages = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1, messages
    assert str(entry) in messages[0]
    assert re.search(damage.why, messages[0]), messages[0]
    assert cache.stats.snapshot() - before == CacheCounts(hits=0, misses=1, rejected=1)
    assert cache.read_entry(entry, entry.name.split(".")[0]) is not None, "not stored again"
    return result


@pytest.mark.parametrize("damage", DAMAGES, ids=[d.name for d in DAMAGES])
def test_a_damaged_library_is_rejected_and_rebuilt(damage: Damage, damage_cache: Path) -> None:
    other = cuda_emu.compile(affine(3)).path
    entry = cuda_emu.compile(affine(2)).path
    cache.forget()  # as a new process: the entry is read from disk again
    damage.apply(entry, other)
    module = _rebuilt_with_a_warning(damage, entry, lambda: cuda_emu.compile(affine(2)))
    check(module, 2)


def _damages(*names: str) -> list[Damage]:
    return [d for d in DAMAGES if d.name in names]


CHECK_DAMAGES = _damages("truncated-at-random-0", "flipped-at-random-0", "another-keys-entry")


@pytest.mark.parametrize("damage", CHECK_DAMAGES, ids=[d.name for d in CHECK_DAMAGES])
def test_a_damaged_checking_mode_executable_is_rejected_and_rebuilt(
    damage: Damage, damage_cache: Path
) -> None:
    other = cuda_emu.compile(affine(3), check=True).path
    entry = cuda_emu.compile(affine(2), check=True).path
    assert entry.suffix == ".exe"
    cache.forget()
    damage.apply(entry, other)
    module = _rebuilt_with_a_warning(damage, entry, lambda: cuda_emu.compile(affine(2), check=True))
    check(module, 2)


NVRTC_SOURCE = 'extern "C" __global__ void one(float* x) { x[threadIdx.x] = 1.0f; }\n'
NVRTC_DAMAGES = _damages(
    "empty", "truncated-at-random-0", "flipped-at-random-0", "another-keys-entry", "seal-missing"
)


@pytest.mark.parametrize("output", ["cubin", "ptx"])
@pytest.mark.parametrize("damage", NVRTC_DAMAGES, ids=[d.name for d in NVRTC_DAMAGES])
def test_a_damaged_cubin_or_ptx_is_rejected_and_rebuilt(
    damage: Damage, output: str, private_cache: Path
) -> None:
    compile = nvrtc.compile if output == "cubin" else nvrtc.compile_ptx
    compile(NVRTC_SOURCE.replace("1.0f", "2.0f"), "sm_90")
    good = compile(NVRTC_SOURCE, "sm_90")
    entries = sorted((private_cache / output).iterdir(), key=lambda p: p.stat().st_mtime_ns)
    other, entry = entries
    damage.apply(entry, other)
    assert _rebuilt_with_a_warning(damage, entry, lambda: compile(NVRTC_SOURCE, "sm_90")) == good


@pytest.mark.parametrize("damaged", ["member-entry", "batch-library"])
def test_a_damaged_batch_entry_is_rejected_and_rebuilt(damaged: str, private_cache: Path) -> None:
    """A source built in a batch (`cuda_emu.prebuild`) has a small entry naming the batch's
    library: damage to either is rejected and the source is built again on its own."""
    assert cuda_emu.prebuild([affine(20), affine(21)]) == 2
    member = cuda_emu.compile(affine(20)).path
    assert member.suffix == emu_build.BATCH_SUFFIX
    (library,) = (private_cache / "cuda-emu").glob("*.so")
    cache.forget()
    if damaged == "member-entry":
        _flip(lambda size: 3)(member, member)
    else:
        _truncate(lambda size: size // 2)(library, library)
    damaged_path = member if damaged == "member-entry" else library
    with pytest.warns(CacheWarning, match=re.escape(str(damaged_path))):
        module = cuda_emu.compile(affine(20))
    check(module, 20)
    assert module.path.suffix == ".so" and not member.exists()


# ---------------------------------------------------------------------------------------------
# What is loaded is what was verified, verified once


def test_an_entry_truncated_under_a_loaded_module_does_not_crash_it(private_cache: Path) -> None:
    """A library is loaded from a private copy of its verified bytes: truncating the entry
    in place (which kills a process that mapped the entry itself with SIGBUS) changes
    nothing for the module, and the next process rebuilds the entry."""
    module = cuda_emu.compile(affine(5))
    check(module, 5)
    with open(module.path, "r+b") as file:
        file.truncate(100)
    check(module, 5)
    check(cuda_emu.compile(affine(5)), 5)  # remembered by this process: no warning
    cache.forget()
    with pytest.warns(CacheWarning, match="too short"):
        check(cuda_emu.compile(affine(5)), 5)


def test_a_process_reads_an_entry_once(private_cache: Path, monkeypatch) -> None:
    source = affine(6)
    cuda_emu.compile(source)
    cache.forget()
    cuda_emu.compile(source)  # read and verified

    def no_read(*args, **kwargs):
        raise AssertionError("a remembered entry was read again")

    monkeypatch.setattr(cache, "read_entry", no_read)
    before = cache.stats.snapshot()
    check(cuda_emu.compile(source), 6)
    assert cache.stats.snapshot() - before == CacheCounts(hits=1)


def test_a_large_file_is_hashed_once_while_it_does_not_change(private_cache: Path) -> None:
    path = private_cache / "big" / "entry.bin"
    path.parent.mkdir(parents=True)
    built = path.with_name(".tmp-built")
    built.write_bytes(os.urandom(3 << 20))
    cache.publish_file(built, path, "k" * 64)
    cache.forget()
    hashed = []
    real_sha256 = cache.hashlib.sha256

    class CountingSha256:
        def __init__(self) -> None:
            hashed.append(1)
            self._digest = real_sha256()

        def update(self, data) -> None:
            self._digest.update(data)

        def digest(self) -> bytes:
            return self._digest.digest()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache.hashlib, "sha256", CountingSha256)
        assert cache.verified_file(path, "k" * 64)
        assert cache.verified_file(path, "k" * 64)
        assert len(hashed) == 1
        with open(path, "r+b") as file:  # changed in place: hashed again, and rejected
            file.seek(5)
            file.write(b"!")
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))
        with pytest.warns(CacheWarning, match="does not match its checksum"):
            assert not cache.verified_file(path, "k" * 64)
    assert not path.exists()
    assert not cache.verified_file(path, "k" * 64)


# ---------------------------------------------------------------------------------------------
# The precompiled header


def _emu_flags() -> list[str]:
    options = emu_build.EmuOptions(context_switch=cuda_emu.default_context_switch())
    return emu_build.gxx_flags(options)


@pytest.mark.parametrize("damage", _damages("truncated-at-random-1"), ids=lambda d: d.name)
def test_a_truncated_precompiled_header_is_rejected_and_rebuilt(
    damage: Damage, private_cache: Path
) -> None:
    header = emu_build.precompiled_header(_emu_flags())
    damage.apply(_unshared(header.gch), header.gch)
    cache.forget()
    with pytest.warns(CacheWarning, match=f"{header.gch.name}: ({TRUNCATED})"):
        check(cuda_emu.compile(affine(8)), 8)
    assert cache.verified_file(header.gch, header.key), "the header was not built again"
    assert header.gch.stat().st_size > 1 << 20


def _sealed_in_place(header: emu_build.PrecompiledHeader, content: bytes) -> None:
    """Replace the header by `content`, sealed: damage that happened after verification,
    or a file that passes the seal and that g++ still refuses."""
    built = header.gch.with_name(".tmp-test")
    built.write_bytes(content)
    cache.publish_file(built, header.gch, header.key)


@pytest.mark.parametrize(
    "content, why",
    [
        (lambda gch: b"garbage, not a precompiled header", "g++ would not use it: not a PCH"),
        (lambda gch: gch[: len(gch) // 2], "g++ failed with it and not without it"),
    ],
    ids=["refused", "unreadable"],
)
def test_a_precompiled_header_gxx_refuses_does_not_break_compiles(
    content, why: str, private_cache: Path
) -> None:
    header = emu_build.precompiled_header(_emu_flags())
    _sealed_in_place(header, content(cache.read_entry(header.gch, header.key)))
    with pytest.warns(CacheWarning, match=re.escape(f"{header.gch.name}: {why}")):
        check(cuda_emu.compile(affine(9)), 9)
    assert not header.gch.exists()
    assert emu_build.precompiled_header(_emu_flags()) is None, "used again by this process"
    check(cuda_emu.compile(affine(10)), 10)  # without it


def test_a_source_error_does_not_blame_the_precompiled_header(private_cache: Path) -> None:
    header = emu_build.precompiled_header(_emu_flags())
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        with pytest.raises(CompileError, match="kernel.cu:1:"):
            cuda_emu.compile('extern "C" __global__ void k(int* x) { x[0] = nope; }\n')
    assert cache.verified_file(header.gch, header.key)


# ---------------------------------------------------------------------------------------------
# Seals, counters, info and clear


def test_seal_round_trip_and_its_limits() -> None:
    content = b"\x7fELF" + bytes(range(256))
    entry = content + cache.seal(content, "a" * 64)
    assert len(entry) == len(content) + SEAL
    assert cache.unseal(entry, "a" * 64) == content
    assert cache.unseal(cache.seal(b"", "b" * 64), "b" * 64) == b""
    with pytest.raises(cache.DamagedEntry, match="another key"):
        cache.unseal(entry, "c" * 64)
    with pytest.raises(ValueError, match="at most 64"):
        cache.seal(content, "d" * 65)


def test_stats_count_hits_misses_and_rejections(private_cache: Path) -> None:
    start = cache.stats.snapshot()
    module = cuda_emu.compile(affine(11))  # compiled
    cuda_emu.compile(affine(11))  # remembered
    cache.forget()
    cuda_emu.compile(affine(11))  # read from the cache
    module.path.write_bytes(b"")
    cache.forget()
    with pytest.warns(CacheWarning):
        cuda_emu.compile(affine(11))  # rejected, compiled
    assert cache.stats.snapshot() - start == CacheCounts(hits=2, misses=2, rejected=1)
    counts = cache.stats.snapshot()
    assert all(isinstance(getattr(counts, n), int) for n in ("hits", "misses", "rejected"))


def test_info_and_clear(private_cache: Path) -> None:
    for value in (12, 13):
        cuda_emu.compile(affine(value))
    nvrtc.compile(NVRTC_SOURCE, "sm_90")
    summary = cache.info()
    assert summary["folder"] == str(private_cache)
    emu = summary["kinds"]["cuda-emu"]
    sizes = [p.stat().st_size for p in (private_cache / "cuda-emu").iterdir()]
    assert emu == {"entries": 2, "bytes": sum(sizes)}
    assert summary["kinds"]["cubin"]["entries"] == 1
    assert summary["kinds"]["cuda-emu-pch"]["entries"] == 1
    assert summary["entries"] == 4
    assert summary["bytes"] == sum(k["bytes"] for k in summary["kinds"].values())

    young = private_cache / "cuda-emu" / ".tmp-writing.so"
    old = private_cache / "cuda-emu" / ".tmp-left-by-a-killed-process.so"
    young.write_bytes(b"half")
    old.write_bytes(b"half")
    os.utime(old, (time.time() - 2 * cache.STALE_TEMP_S,) * 2)
    assert cache.clear("cubin") == 1
    assert cache.info()["kinds"]["cubin"] == {"entries": 0, "bytes": 0}
    assert cache.clear("cuda-emu") == 2
    assert young.exists() and not old.exists()
    before = cache.stats.snapshot()
    check(cuda_emu.compile(affine(12)), 12)  # forgotten by this process too: compiled again
    assert cache.stats.snapshot() - before == CacheCounts(misses=1)
    assert cache.clear() == 2  # that module and the precompiled header
    assert cache.info()["entries"] == 0


# ---------------------------------------------------------------------------------------------
# Concurrent processes

WORKER = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    from cinn_py.backends import cache, cuda_emu
    from cinn_py.errors import CacheWarning

    SOURCE = '''{source}'''
    worker, rounds = int(sys.argv[1]), int(sys.argv[2])
    warnings.simplefilter("ignore", CacheWarning)  # counted in cache.stats instead
    values = [1, 2, 100 + worker]  # two keys every worker builds, one of its own
    x = np.arange(300, dtype=np.float32)
    for _ in range(rounds):
        for value in values:
            cache.forget()  # read the cache again, as a new process would
            module = cuda_emu.compile(SOURCE.replace("VALUE", str(value)))
            y = np.zeros(300, np.float32)
            module.launch("affine", (2,), (256,), [y, x, np.int32(300)])
            if not np.array_equal(y, x * value + 1):
                print("wrong answer for", value)
                sys.exit(3)
    counts = cache.stats.snapshot()
    print("ok", counts.hits, counts.misses, counts.rejected)
    """
)

DAMAGER = textwrap.dedent(
    """
    import os, random, sys, time
    from pathlib import Path

    root, stop = Path(sys.argv[1]), Path(sys.argv[2])
    rng = random.Random(0)
    damaged = 0
    header_damaged = False  # once: each damage to it costs every worker a rebuild
    while not stop.exists():
        time.sleep(0.2)
        if damaged >= 12:  # enough to meet every worker, few enough to let them finish
            continue
        entries = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
        entries = [p for p in entries if p.suffix != ".gch" or not header_damaged]
        if not entries:
            continue
        path = rng.choice(entries)
        how = rng.choice(["truncate", "flip", "replace-truncated", "replace-garbage", "empty"])
        if path.suffix == ".gch":
            header_damaged = True
            how = "truncate"  # see test_concurrent_processes_building_loading_and_damaging
        try:
            size = path.stat().st_size
            if how == "truncate":
                with open(path, "r+b") as f:
                    f.truncate(rng.randrange(size))
            elif how == "flip":
                with open(path, "r+b") as f:
                    f.seek(rng.randrange(size))
                    f.write(os.urandom(1))
            else:
                data = path.read_bytes()
                data = {"replace-truncated": data[: rng.randrange(size)],
                        "replace-garbage": os.urandom(size), "empty": b""}[how]
                temp = path.with_name(".damage-" + path.name)
                temp.write_bytes(data)
                os.replace(temp, path)
            damaged += 1
        except (FileNotFoundError, ValueError):
            pass
    print(damaged)
    """
)


def test_concurrent_processes_building_loading_and_damaging(private_cache: Path) -> None:
    """Four processes build and load the same keys and their own, each rereading the cache
    every time, while a fifth damages entries: truncated in place (under a loaded library,
    under g++ reading the header), bytes flipped in place, replaced by truncated copies,
    garbage or nothing.  Every answer is right and nothing crashes.  (Bytes flipped in
    the precompiled header in place while g++ reads it are the one damage left out:
    g++ reads that file itself, after its verification.)"""
    for header in private_cache.glob("cuda-emu-pch/*/*.gch"):
        _unshared(header)  # the damager truncates it in place
    folder = private_cache.parent
    worker = folder / "worker.py"
    worker.write_text(WORKER.format(source=affine(0).replace("0.0f", "VALUE.0f")))
    damager = folder / "damager.py"
    damager.write_text(DAMAGER)
    stop = folder / "stop"
    env = {**os.environ, "CINN_PY_CACHE_DIR": str(private_cache)}
    damaging = subprocess.Popen(
        [sys.executable, str(damager), str(private_cache), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    workers = [
        subprocess.Popen(
            [sys.executable, str(worker), str(index), "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for index in range(4)
    ]
    results = [w.communicate(timeout=600) for w in workers]
    stop.write_text("")
    damaged = int(damaging.communicate(timeout=60)[0])
    for process, (out, err) in zip(workers, results, strict=True):
        assert process.returncode == 0, f"worker died ({process.returncode}): {out}\n{err}"
        assert out.startswith("ok "), out
    rejected = sum(int(out.split()[3]) for out, _ in results)
    assert damaged > 0
    assert rejected > 0, "no worker met a damaged entry: the test did not test anything"


# ---------------------------------------------------------------------------------------------
# A folder that cannot be written: read-only or full

FOLDER_ERRORS = [errno.EROFS, errno.EACCES, errno.ENOSPC]


def _refuse_writes(monkeypatch: pytest.MonkeyPatch, folder: Path, code: int) -> None:
    """Every file the cache would make in `folder` fails with `code`, as in a read-only
    folder (EROFS, EACCES: chmod does not stop root, who runs these tests in places); for
    a full one (ENOSPC) the temporary file is made and the move into place fails, so the
    writer must remove it. What is already there can still be read."""
    real_mkstemp, real_replace = tempfile.mkstemp, os.replace

    def inside(path: object) -> bool:
        return path is not None and Path(str(path)).resolve().is_relative_to(folder.resolve())

    def mkstemp(*args, dir=None, **kwargs):
        if inside(dir) and code != errno.ENOSPC:
            raise OSError(code, os.strerror(code), str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    def replace(source, target, *args, **kwargs):
        if inside(target):
            raise OSError(code, os.strerror(code), str(target))
        return real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "replace", replace)


def _files(folder: Path) -> list[Path]:
    """The entries and temporary files of the kernel kinds (not the seeded header)."""
    kinds = [folder / k for k in ("cuda-emu", "cubin", "ptx")]
    return sorted(p for k in kinds if k.is_dir() for p in k.iterdir())


def _one_warning_naming_the_folder(record, folder: Path, code: int) -> None:
    messages = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1, messages
    assert str(folder) in messages[0] and cache.CACHE_DIR_ENV in messages[0]
    assert os.strerror(code) in messages[0]


@pytest.mark.parametrize("code", FOLDER_ERRORS, ids=errno.errorcode.get)
def test_a_folder_that_cannot_be_written_warns_once_and_compiles_uncached(
    code: int, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_writes(monkeypatch, private_cache, code)
    before = cache.stats.snapshot()
    with pytest.warns(CacheWarning) as record:
        check(cuda_emu.compile(affine(30)), 30)  # loaded from a copy in the temp folder
        check(cuda_emu.compile(affine(31)), 31)
        assert nvrtc.compile(NVRTC_SOURCE, "sm_90")
    _one_warning_naming_the_folder(record, private_cache, code)
    assert cache.stats.snapshot() - before == CacheCounts(misses=3)
    assert _files(private_cache) == []  # no entry, no temporary file left behind


@pytest.mark.parametrize("code", FOLDER_ERRORS, ids=errno.errorcode.get)
def test_a_batch_that_cannot_be_stored_stays_in_the_process(
    code: int, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_writes(monkeypatch, private_cache, code)
    with pytest.warns(CacheWarning, match=cache.CACHE_DIR_ENV):
        assert cuda_emu.prebuild([affine(32), affine(33)]) == 2
    before = cache.stats.snapshot()
    for value in (32, 33):
        check(cuda_emu.compile(affine(value)), value)
    assert cache.stats.snapshot() - before == CacheCounts(hits=2)  # no g++ run again
    assert _files(private_cache) == []


def test_a_precompiled_header_that_cannot_be_written_is_done_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bare"  # no seeded header: it would be built here
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(folder))
    _refuse_writes(monkeypatch, folder, errno.EROFS)
    with pytest.warns(CacheWarning) as record:
        check(cuda_emu.compile(affine(34)), 34)
    _one_warning_naming_the_folder(record, folder, errno.EROFS)
    assert not list(folder.rglob("*.gch"))


def test_a_read_only_folder_still_gives_its_entries(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check(cuda_emu.compile(affine(35)), 35)
    nvrtc.compile(NVRTC_SOURCE, "sm_90")
    entries = _files(private_cache)
    cache.forget()
    _refuse_writes(monkeypatch, private_cache, errno.EROFS)
    before = cache.stats.snapshot()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        check(cuda_emu.compile(affine(35)), 35)
        nvrtc.compile(NVRTC_SOURCE, "sm_90")
    assert cache.stats.snapshot() - before == CacheCounts(hits=2)
    assert _files(private_cache) == entries


def test_a_write_stopped_halfway_leaves_no_entry_and_no_temporary_file(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write killed between the content and the seal (here an interrupt; a full disk
    is the OSError case above) publishes nothing: the entry is whole or absent."""

    def interrupted(content: bytes, key: str) -> bytes:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(cache, "seal", interrupted)
        nvrtc.compile(NVRTC_SOURCE, "sm_90")
    assert _files(private_cache) == []
    assert nvrtc.compile(NVRTC_SOURCE, "sm_90") and len(_files(private_cache)) == 1


def test_a_program_compiles_and_runs_beside_a_full_cache(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CINN_PY_CACHE", "0")  # the kernel cache's warning alone
    program = cinn_py.load(
        str(Path(__file__).parents[1] / "fixtures/programs/softmax_axes/program.pir")
    )
    _refuse_writes(monkeypatch, private_cache, errno.ENOSPC)
    feeds = random_feeds(program, np.random.default_rng(3))
    with pytest.warns(CacheWarning) as record:
        got = cinn_py.compile(program, "cuda-emu").run(feeds)
    _one_warning_naming_the_folder(record, private_cache, errno.ENOSPC)
    for a, b in zip(got.values(), run_reference(program, feeds), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert _files(private_cache) == []

"""Generated CUDA C compiles with NVRTC for sm_80 and sm_90 and computes what NumPy does
on cuda-emu; vectorized loops become 128-bit loads and stores in the PTX."""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_cases import Case, all_cases
from codegen_helpers import aligned

from cinn_py.backends import cuda_emu, nvrtc
from cinn_py.backends.codegen_cuda import CudaSource, generate_cuda
from cinn_py.tolerances import compare

CASES = all_cases()
ARCHS = ("sm_80", "sm_90")


@pytest.fixture(scope="module")
def batch() -> CudaSource:
    """Every case's function in one source: one g++ build runs them all (NVRTC compiles
    each case's own source below)."""
    return generate_cuda([case.func for case in CASES])


@pytest.fixture(scope="module")
def emu_module(batch: CudaSource) -> cuda_emu.EmuModule:
    return cuda_emu.compile(batch.source)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_source_compiles_with_nvrtc(case: Case, arch):
    source = generate_cuda([case.func]).source
    assert nvrtc.compile(source, arch, name=f"{case.name}.cu")[:4] == b"\x7fELF"


def _run_and_compare(module: cuda_emu.EmuModule, kernel, case: Case, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = [aligned(a) for a in case.make_inputs(rng)]
    outputs = [aligned(a) for a in case.outputs()]
    module.launch(kernel.name, kernel.grid, kernel.block, [*inputs, *outputs])
    wanted = case.expected([a.copy() for a in inputs])
    tolerances = case.tolerances or (None,) * len(wanted)
    for k, (got, want, dtype) in enumerate(zip(outputs, wanted, tolerances, strict=True)):
        result = compare(got, want, dtype)
        assert result.ok, f"{case.name} output {k}: {result}"


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_runs_on_cuda_emu_like_numpy(batch, emu_module, index):
    _run_and_compare(emu_module, batch.kernels[index], CASES[index], index)


IN_PLACE = [i for i, c in enumerate(CASES) if generate_cuda([c.func]).kernels[0].in_place]


@pytest.mark.parametrize("index", IN_PLACE, ids=[CASES[i].name for i in IN_PLACE])
def test_in_place_pairs_compute_the_same_over_one_array(batch, emu_module, index):
    """Each output of a pair (`KernelInfo.in_place`) given its input's very array: the
    kernel still computes what NumPy does from the inputs as they were."""
    _run_in_place(emu_module, batch.kernels[index], CASES[index], index)


def _run_in_place(module: cuda_emu.EmuModule, kernel, case: Case, seed: int) -> None:
    assert kernel.in_place
    rng = np.random.default_rng(seed)
    inputs = [aligned(a) for a in case.make_inputs(rng)]
    wanted = case.expected([a.copy() for a in inputs])
    names = [a.name for a in case.func.args]
    arrays = [*inputs, *(aligned(a) for a in case.outputs())]
    for x, y in kernel.in_place:
        arrays[names.index(y)] = arrays[names.index(x)]
    outputs = arrays[len(inputs) :]
    module.launch(kernel.name, kernel.grid, kernel.block, arrays)
    tolerances = case.tolerances or (None,) * len(wanted)
    for k, (got, want, dtype) in enumerate(zip(outputs, wanted, tolerances, strict=True)):
        result = compare(got, want, dtype)
        assert result.ok, f"{case.name} output {k} (in place): {result}"


def test_guarded_and_vector_kernels_stay_in_bounds():
    """Checking mode runs each launch on exactly-sized copies under ASan and UBSan: a lane
    or a thread past the end of a buffer fails the launch."""
    names = ("guard_vec", "guard_lanes", "two_nests", "broadcast_vec", "int64_vec2", "bool_vec16")
    cases = [case for case in CASES if case.name in names]
    source = generate_cuda([case.func for case in cases])
    module = cuda_emu.compile(source.source, check=True)
    for seed, (case, kernel) in enumerate(zip(cases, source.kernels, strict=True)):
        _run_and_compare(module, kernel, case, seed)
        if kernel.in_place:  # the copies of one array given twice: the output's lands
            _run_in_place(module, kernel, case, seed)


def _global_accesses(ptx: str) -> list[str]:
    return re.findall(r"\b(?:ld|st)\.global(?:\.nc)?(?:\.v\d)?\.\w+", ptx)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # The input an output may take in place (`ir.in_place`) has no __restrict__, so
        # no read-only (.nc) load: it may be the output's memory.
        ("ew_f32_vec4", ["ld.global.nc.v4.f32", "ld.global.v4.f32", "st.global.v4.f32"]),
        ("guard_vec", ["ld.global.v4.f32", "st.global.v4.f32"]),
        ("int64_vec2", ["ld.global.nc.v2.u64", "ld.global.v2.u64", "st.global.v2.u64"]),
    ],
)
def test_vector_loops_are_128_bit_accesses(case, expected):
    (found,) = [c for c in CASES if c.name == case]
    ptx = nvrtc.compile_ptx(generate_cuda([found.func]).source, "sm_90")
    assert sorted(_global_accesses(ptx)) == sorted(expected)


@pytest.mark.parametrize("case", ["f16_vec8", "bf16_vec8", "bool_vec16"])
def test_narrow_lanes_move_16_bytes_at_once(case):
    """8 halves or 16 bools: every global access of the kernel is one 128-bit access."""
    (found,) = [c for c in CASES if c.name == case]
    ptx = nvrtc.compile_ptx(generate_cuda([found.func]).source, "sm_90")
    accesses = _global_accesses(ptx)
    assert accesses and all(".v4." in a and a.endswith((".u32", ".b32", ".f32")) for a in accesses)

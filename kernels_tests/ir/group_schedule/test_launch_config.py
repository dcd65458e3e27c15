"""The launch-configuration rule and the targets' numbers, checked with numbers."""

from __future__ import annotations

import pytest

from cinn_py.ir.group_schedule.launch_config import (
    LaunchConfig,
    choose_launch,
    steps_for,
    vector_lanes,
)
from cinn_py.ir.group_schedule.target_info import (
    REFERENCE_GPUS,
    TargetInfo,
    arch_number,
    reference_gpu,
)

CUDA = TargetInfo.cuda()
EMU = TargetInfo.cuda_emu()


def test_targets():
    assert CUDA == TargetInfo(
        arch="sm_90",
        sm_count=132,
        max_blocks_per_sm=32,
        max_threads_per_block=1024,
        max_grid_dims=(2**31 - 1, 65535, 65535),
        warp_size=32,
    )
    assert CUDA.max_blocks == 4224
    assert TargetInfo.cuda("sm_80", sm_count=108).max_blocks == 3456
    assert EMU.max_blocks == 8
    assert (EMU.max_threads_per_block, EMU.max_grid_dims, EMU.warp_size) == (
        CUDA.max_threads_per_block,
        CUDA.max_grid_dims,
        CUDA.warp_size,
    )


@pytest.mark.parametrize(
    ("arch", "gpu", "sm_count", "threads_per_sm"),
    [
        ("sm_75", "T4", 40, 1024),
        ("sm_80", "A100 SXM4", 108, 2048),
        ("sm_86", "A10", 72, 1536),
        ("sm_87", "A10", 72, 1536),  # not listed: the newest listed arch below it
        ("sm_89", "L40S", 142, 1536),
        ("sm_90", "H100 SXM", 132, 2048),
        ("sm_90a", "H100 SXM", 132, 2048),
        ("sm_100", "H100 SXM", 132, 2048),
        ("sm_70", "T4", 40, 1024),  # older than every listed: the oldest
    ],
)
def test_a_target_without_a_gpu_takes_its_archs_reference_gpu(arch, gpu, sm_count, threads_per_sm):
    """`cinn-py perf --arch`, `tools/tune.py --arch` and the `cuda` target with no GPU
    here schedule for the arch's reference GPU; a GPU's own numbers win where given."""
    assert reference_gpu(arch).name == gpu
    target = TargetInfo.cuda(arch)
    assert (target.arch, target.sm_count, target.max_threads_per_sm) == (
        arch,
        sm_count,
        threads_per_sm,
    )
    assert TargetInfo.cuda(arch, 20, 1024).sm_count == 20  # a device's own
    assert TargetInfo.cuda(arch, 20, 1024).max_threads_per_sm == 1024


def test_reference_gpus_are_one_an_arch_in_arch_order():
    archs = [arch_number(g.arch) for g in REFERENCE_GPUS]
    assert archs == sorted(set(archs))
    assert arch_number("compute_90") == 90 and arch_number("sm_90a") == 90
    with pytest.raises(ValueError, match="not a CUDA arch: 'hopper'"):
        arch_number("hopper")


def test_max_blocks_is_capped_by_the_grid_limit():
    huge = TargetInfo(arch="sm_90", sm_count=100_000, max_blocks_per_sm=100_000)
    assert huge.max_blocks == 2**31 - 1


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("sm_count", 0, "TargetInfo.sm_count: expected a positive int, got 0"),
        ("max_blocks_per_sm", -1, "TargetInfo.max_blocks_per_sm: expected a positive int"),
        ("max_threads_per_block", 100, "100 is not a multiple of the warp size 32"),
    ],
)
def test_target_info_checks_its_numbers(field, value, message):
    fields = {"arch": "sm_90", "sm_count": 132, "max_blocks_per_sm": 32, field: value}
    with pytest.raises(ValueError, match=message):
        TargetInfo(**fields)


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (1, LaunchConfig(threads=32, blocks=1, steps=1)),  # one warp at least
        (32, LaunchConfig(threads=32, blocks=1, steps=1)),
        (33, LaunchConfig(threads=64, blocks=1, steps=1)),  # whole warps
        (250, LaunchConfig(threads=256, blocks=1, steps=1)),
        (2048, LaunchConfig(threads=256, blocks=8, steps=1)),  # 64x128 float32 / 4 lanes
        (2049, LaunchConfig(threads=256, blocks=9, steps=1)),
        (1_081_344, LaunchConfig(threads=256, blocks=4224, steps=1)),  # 132 SMs x 32 x 256
        # grid-stride from here, with the fewest blocks that cover the items in the steps
        (1_081_345, LaunchConfig(threads=256, blocks=2113, steps=2)),
        (2_097_152, LaunchConfig(threads=256, blocks=4096, steps=2)),  # 4096x2048 float32
        (16_777_216, LaunchConfig(threads=256, blocks=4096, steps=16)),  # 64M float32: exact
        (10**9, LaunchConfig(threads=256, blocks=4223, steps=925)),
    ],
)
def test_cuda_launch(items, expected):
    assert choose_launch(items, CUDA) == expected


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (100, LaunchConfig(threads=128, blocks=1, steps=1)),
        (2048, LaunchConfig(threads=256, blocks=8, steps=1)),
        (2049, LaunchConfig(threads=256, blocks=5, steps=2)),  # 5 x 256 x 2 cover 2049
        (1 << 20, LaunchConfig(threads=256, blocks=8, steps=512)),
    ],
)
def test_emu_launch_keeps_one_sm_worth_of_blocks(items, expected):
    assert choose_launch(items, EMU) == expected


def test_threads_respect_a_small_block_limit():
    small = TargetInfo(arch="x", sm_count=2, max_blocks_per_sm=2, max_threads_per_block=64)
    assert choose_launch(1000, small) == LaunchConfig(threads=64, blocks=4, steps=4)
    assert choose_launch(1000, small).stride == 256


def test_choose_launch_needs_work():
    with pytest.raises(ValueError, match="expected at least one item, got 0"):
        choose_launch(0, CUDA)


def test_steps_for():
    assert steps_for(1000, 256, 4) == 1
    assert steps_for(1025, 256, 4) == 2
    assert steps_for(1, 256, 4) == 1


@pytest.mark.parametrize(
    ("extent", "itemsize", "lanes"),
    [
        (8192, 4, 4),  # float32: 16 bytes = 4 lanes
        (1000, 4, 4),
        (999, 4, 1),  # not a multiple: scalar
        (2, 4, 1),  # fewer elements than one vector
        (8192, 2, 8),  # float16 / bfloat16
        (100, 2, 1),  # 100 % 8 != 0
        (64, 1, 16),  # bool / int8
        (10, 8, 2),  # float64 / int64
        (9, 8, 1),
    ],
)
def test_vector_lanes(extent, itemsize, lanes):
    assert vector_lanes(extent, itemsize) == lanes

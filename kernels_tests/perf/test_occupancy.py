"""Occupancy, waves and the time model against hand-worked cases (H100: 64K registers,
2048 threads, 32 blocks and 228 KB of shared memory an SM, 132 SMs)."""

from __future__ import annotations

import math

import pytest

from cinn_py.ir.group_schedule.target_info import REFERENCE_GPUS, TargetInfo
from cinn_py.perf.model import estimate, issue_time
from cinn_py.perf.occupancy import H100, SPECS, occupancy, registers_per_warp, spec_for, waves


@pytest.mark.parametrize(
    "threads, registers, shared, blocks, fraction, limiter",
    [
        # 64 x 32 = 2048 registers a warp, 4 warps: 8192 a block -> 8 blocks, 32 of 64 warps
        (128, 64, 0, 8, 0.5, "registers"),
        # 45 rounds to 48: 1536 a warp x 8 warps = 12288 -> 5 blocks, 40 warps (ncu: 62.5%)
        (256, 45, 256, 5, 0.625, "registers"),
        # 32 registers x 256 threads: 8 blocks by registers and by threads alike
        (256, 32, 256, 8, 1.0, "threads"),
        # 48 KB + 1 KB reserved a block: 233472 // 50176 = 4 blocks of 4 warps
        (128, 16, 48 * 1024, 4, 0.25, "shared memory"),
        # one warp a block: the 32-block limit, 32 of 64 warps
        (32, 16, 0, 32, 0.5, "blocks"),
        # 1000 threads take 32 warps: 2 blocks
        (1000, 32, 0, 2, 1.0, "threads"),
        (128, 256, 0, 0, 0.0, "registers"),
    ],
)
def test_blocks_per_sm(threads, registers, shared, blocks, fraction, limiter):
    fit = occupancy(threads, registers, shared)
    assert (fit.blocks_per_sm, fit.limiter) == (blocks, limiter)
    assert fit.fraction == pytest.approx(fraction)
    assert fit.warps_per_sm == blocks * math.ceil(threads / 32)


def test_registers_round_to_eight_a_thread():
    assert registers_per_warp(64) == 2048
    assert registers_per_warp(45) == registers_per_warp(48) == 1536
    assert registers_per_warp(1) == 256


def test_waves():
    assert waves(4096, 8) == pytest.approx(4096 / 1056)  # 3.88, as ncu reports
    assert waves(256, 2) == pytest.approx(256 / 264)
    assert waves(10, 0) == math.inf


def test_issue_time_is_warp_instructions_over_the_schedulers():
    # 1000 instructions x 2^20 threads / 32 = 32.8M warp instructions
    expected = 1000 * 2**20 / 32 / (132 * 4 * 1.98e9 * H100.issue_efficiency)
    assert issue_time(1000, 2**20) == pytest.approx(expected)


MB = 1_000_000


def _estimate(**given):
    args = {
        "nbytes": 300 * MB,  # 100 us at 3.0 TB/s
        "instructions_per_thread": 10,
        "threads": 2**20,
        "inflight_per_sm": 64 * 1024,
        "waves": 8.0,
    }
    return estimate(**(args | given))


def test_a_kernel_with_bytes_in_flight_and_few_instructions_is_memory_bound():
    guess = _estimate()
    assert guess.memory_s == pytest.approx(100e-6)
    assert (guess.limiter, guess.copy_fraction) == ("memory", pytest.approx(1.0))


def test_too_many_instructions_make_it_issue_bound():
    instructions = 4000
    guess = _estimate(instructions_per_thread=instructions)
    assert guess.issue_s > guess.memory_s
    assert guess.limiter == "issue"
    assert guess.copy_fraction == pytest.approx(guess.memory_s / guess.issue_s)


def test_too_few_bytes_in_flight_make_it_latency_bound():
    half = H100.inflight_needed_per_sm / 2
    guess = _estimate(inflight_per_sm=half)
    assert (guess.limiter, guess.latency_factor) == ("occupancy", pytest.approx(0.5))
    assert guess.copy_fraction == pytest.approx(0.5)


def test_a_thin_last_wave_costs_only_where_it_cannot_cover_the_latency():
    needed = H100.inflight_needed_per_sm
    plenty = _estimate(waves=1.25, inflight_per_sm=8 * needed)
    assert plenty.limiter == "memory" and plenty.losses_s["waves"] == 0
    thin = _estimate(waves=1.25, inflight_per_sm=needed)  # the last quarter: 1/4 in flight
    assert thin.limiter == "waves"
    # 1 full wave at M/1.25, the tail 0.25 of a wave at 4 x its memory time
    assert thin.time_s == pytest.approx(thin.memory_s * (1 + 0.25 * 4) / 1.25)


@pytest.mark.parametrize(
    ("arch", "threads", "registers", "blocks", "limiter"),
    [
        # an A100: 2048 threads and 32 blocks an SM, as an H100
        ("sm_80", 256, 32, 8, "threads"),
        # an L40S: 1536 threads, 24 blocks an SM: one block of 1024, 6 of 256
        ("sm_89", 1024, 32, 1, "threads"),
        ("sm_89", 256, 32, 6, "threads"),
        ("sm_89", 32, 16, 24, "blocks"),
        # a T4: 1024 threads, 16 blocks an SM
        ("sm_75", 512, 32, 2, "threads"),
        ("sm_75", 32, 16, 16, "blocks"),
    ],
)
def test_each_arch_has_its_reference_gpus_spec(arch, threads, registers, blocks, limiter):
    spec = spec_for(arch)
    fit = occupancy(threads, registers, 0, spec)
    assert (fit.blocks_per_sm, fit.limiter) == (blocks, limiter)
    target = TargetInfo.cuda(arch)  # the scheduler's view: the same GPU
    assert (spec.sm_count, spec.max_threads_per_sm) == (target.sm_count, target.max_threads_per_sm)


def test_the_specs_are_the_reference_gpus_and_the_h100_is_sm_90s():
    assert [s.name for s in SPECS.values()] == [
        f"{g.name} ({g.arch}, {g.sm_count} SMs)" for g in REFERENCE_GPUS
    ]
    assert spec_for("sm_90") is H100 and spec_for("sm_100") is H100
    assert H100.dram_bandwidth == 3.0e12  # the checked one
    a100 = spec_for("sm_80")
    assert (a100.dram_bandwidth, a100.clock_hz, a100.shared_per_sm) == (
        1.835e12,
        1.41e9,
        164 * 1024,
    )
    # an L40S issues more a second than an A100: 142 SMs at 2.52 GHz, 108 at 1.41
    assert issue_time(100, 1 << 20, spec_for("sm_89")) < issue_time(100, 1 << 20, a100)

"""A kernel's time, estimated from its machine code, against the time of a copy.

    memory time   M = bytes / dram_bandwidth
    issue time    I = SASS instructions a thread x threads / warp size
                      / (SMs x schedulers x clock x issue_efficiency)
    latency       l = min(1, load bytes in flight an SM / bytes needed in flight)
                      in flight an SM = in flight a thread x resident threads;
                      needed = bandwidth x latency / SMs (Little's law)
    waves         W = n full waves + a last wave p (0 <= p < 1) with p of the blocks, so
                      p of the bytes in flight: l_p = min(1, p x in flight / needed)
    time          T = (n x max(M/l, I) + p x max(M/l_p, I)) / W
    % of copy       = M / T

T is M plus three losses, each the time one cause adds: `occupancy` (M/l - M: too few
bytes in flight to hide the latency), `issue` (max(0, I - M/l): more instructions than
the memory time covers) and `waves` (the last wave's shortfall of bytes in flight). The
limiter is the largest loss where it adds more than 5% to M (`TOLERANCE`), else
`memory`. Every instruction takes one issue slot at `issue_efficiency` of the peak
rate: a kernel heavy in slower units (MUFU, conversions, float64) does worse than this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.perf.occupancy import H100, GpuSpec

TOLERANCE = 1.05
"""A loss names the limiter only where it adds more than 5% to the memory time."""


@dataclass(frozen=True)
class Estimate:
    memory_s: float
    issue_s: float
    latency_factor: float
    """l above: 1 when the resident threads keep enough bytes in flight."""
    time_s: float
    copy_fraction: float
    """Memory time over the estimated time: the share of copy bandwidth the kernel reaches."""
    limiter: str
    """One of "memory", "issue", "occupancy" and "waves"."""
    losses_s: dict[str, float]
    """The time each cause adds to the memory time ("issue", "occupancy", "waves")."""

    @property
    def issue_over_memory(self) -> float:
        return self.issue_s / self.memory_s if self.memory_s else math.inf


def issue_time(instructions_per_thread: int, threads: int, spec: GpuSpec = H100) -> float:
    """Seconds the SMs' schedulers take to issue every thread's instructions."""
    rate = spec.sm_count * spec.schedulers_per_sm * spec.clock_hz * spec.issue_efficiency
    return instructions_per_thread * threads / spec.warp_size / rate


def estimate(
    *,
    nbytes: int,
    instructions_per_thread: int,
    threads: int,
    inflight_per_sm: float,
    waves: float,
    spec: GpuSpec = H100,
) -> Estimate:
    """The model above for a kernel moving `nbytes` from DRAM in `waves` waves."""
    memory = nbytes / spec.dram_bandwidth
    issue = issue_time(instructions_per_thread, threads, spec)
    needed = spec.inflight_needed_per_sm
    latency = min(1.0, inflight_per_sm / needed)
    if latency <= 0 or not math.isfinite(waves) or waves <= 0:
        inf = math.inf
        losses = {"issue": 0.0, "occupancy": inf, "waves": 0.0}
        return Estimate(memory, issue, latency, inf, 0.0, "occupancy", losses)
    full = math.floor(waves)
    tail = waves - full
    per_wave = max(memory / latency, issue) / waves
    steady = max(memory / latency, issue)
    if tail > 0:
        tail_latency = min(1.0, tail * inflight_per_sm / needed)
        tail_time = tail * max(memory / tail_latency, issue) / waves
        waves_loss = tail_time - tail * per_wave
    else:
        waves_loss = 0.0
    losses = {
        "issue": max(0.0, issue - memory / latency),
        "occupancy": memory / latency - memory,
        "waves": waves_loss,
    }
    time = steady + waves_loss
    worst = max(losses, key=lambda name: losses[name])
    limiter = worst if memory + losses[worst] > TOLERANCE * memory else "memory"
    return Estimate(memory, issue, latency, time, memory / time if time else 0.0, limiter, losses)

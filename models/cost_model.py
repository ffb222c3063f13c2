"""
The interface every cost model offers, so that a pass can take any of them: TMModel for
GPU kernel configurations (`texture_kernels.TMModel`), the HVX cycle model for DSP kernels
(`hvx_cycles.HvxCycleModel`), and a learned predictor later.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

Candidate = TypeVar("Candidate", contravariant=True)


class CostModel(Protocol[Candidate]):
    """The predicted cost of one candidate; lower is better, comparable within one model."""

    name: str
    """How pass options name the model (`cost-model=...`)."""
    unit: str
    """What a cost counts, e.g. `cycles`, or `relative` for a model of relative latency."""

    def cost(self, candidate: Candidate) -> float: ...

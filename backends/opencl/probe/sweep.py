"""
A micro-benchmark's measurements: named series of (x, y) points with what a chart of
them needs (`mobile-probe --plots` draws it), and the reading of a step in a latency
curve that most probes rest on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Sweep:
    """Measurements, named for their plot file (`registers` gives `registers.png`)."""

    title: str
    x_label: str
    y_label: str
    series: dict[str, Sequence[tuple[float, float]]] = field(default_factory=dict)
    log_x: bool = False
    log_y: bool = False
    marks: list[tuple[float, str]] = field(default_factory=list)
    """Vertical lines at x with a label (a detected size, say)."""
    name: str = field(kw_only=True)

    def to_json(self) -> dict:
        return {"title": self.title, "x": self.x_label, "y": self.y_label,
                "series": {k: [list(p) for p in v] for k, v in self.series.items()}}


def plateau_end(points: Sequence[tuple[float, float]], rise: float = 1.3) -> float | None:
    """
    The last x of the first plateau: the x before the first point whose y exceeds
    `rise` times the plateau's level (the least y seen so far). None when the curve
    never rises that much (no step within the sweep).
    """
    level = float("inf")
    previous = None
    for x, y in points:
        level = min(level, y)
        if previous is not None and y > rise * level:
            return previous
        previous = x
    return None


def steps(points: Sequence[tuple[float, float]], rise: float = 1.3) -> list[float]:
    """
    The x before every step up by `rise` over the level of the plateau before it; a
    step must hold at the next point too, so one noisy point is not a step.
    """
    found, level = [], float("inf")
    for i, (x, y) in enumerate(points):
        if i and y > rise * level and all(v > rise * level for _, v in points[i + 1 : i + 2]):
            found.append(points[i - 1][0])
            level = y
        level = min(level, y)
    return found

"""
Line charts written as PNG files with numpy and zlib alone (the project's stack has no
plotting library): a title, axes with ticks (linear or log-2), one polyline with
markers per series and a legend. Text uses a built-in 5×7 bitmap font (upper case).
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_FONT = """
0 .###. #...# #..## #.#.# ##..# #...# .###.
1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
2 .###. #...# ....# ...#. ..#.. .#... #####
3 ####. ....# ....# .###. ....# ....# ####.
4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
5 ##### #.... ####. ....# ....# #...# .###.
6 ..##. .#... #.... ####. #...# #...# .###.
7 ##### ....# ...#. ..#.. .#... .#... .#...
8 .###. #...# #...# .###. #...# #...# .###.
9 .###. #...# #...# .#### ....# ...#. .##..
A .###. #...# #...# ##### #...# #...# #...#
B ####. #...# #...# ####. #...# #...# ####.
C .###. #...# #.... #.... #.... #...# .###.
D ###.. #..#. #...# #...# #...# #..#. ###..
E ##### #.... #.... ####. #.... #.... #####
F ##### #.... #.... ####. #.... #.... #....
G .###. #...# #.... #.### #...# #...# .####
H #...# #...# #...# ##### #...# #...# #...#
I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
J ..### ...#. ...#. ...#. ...#. #..#. .##..
K #...# #..#. #.#.. ##... #.#.. #..#. #...#
L #.... #.... #.... #.... #.... #.... #####
M #...# ##.## #.#.# #.#.# #...# #...# #...#
N #...# #...# ##..# #.#.# #..## #...# #...#
O .###. #...# #...# #...# #...# #...# .###.
P ####. #...# #...# ####. #.... #.... #....
Q .###. #...# #...# #...# #.#.# #..#. .##.#
R ####. #...# #...# ####. #.#.. #..#. #...#
S .#### #.... #.... .###. ....# ....# ####.
T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
U #...# #...# #...# #...# #...# #...# .###.
V #...# #...# #...# #...# #...# .#.#. ..#..
W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
X #...# #...# .#.#. ..#.. .#.#. #...# #...#
Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
Z ##### ....# ...#. ..#.. .#... #.... #####
. ..... ..... ..... ..... ..... .##.. .##..
, ..... ..... ..... ..... .##.. ..#.. .#...
- ..... ..... ..... .###. ..... ..... .....
+ ..... ..#.. ..#.. ##### ..#.. ..#.. .....
/ ....# ....# ...#. ..#.. .#... #.... #....
( ...#. ..#.. .#... .#... .#... ..#.. ...#.
) .#... ..#.. ...#. ...#. ...#. ..#.. .#...
: ..... .##.. .##.. ..... .##.. .##.. .....
= ..... ..... ##### ..... ##### ..... .....
% ##..# ##..# ...#. ..#.. .#... #..## #..##
_ ..... ..... ..... ..... ..... ..... #####
[ .###. .#... .#... .#... .#... .#... .###.
] .###. ...#. ...#. ...#. ...#. ...#. .###.
< ...#. ..#.. .#... #.... .#... ..#.. ...#.
> .#... ..#.. ...#. ....# ...#. ..#.. .#...
? .###. #...# ....# ...#. ..#.. ..... ..#..
* ..... #.#.# .###. ##### .###. #.#.# .....
^ ..#.. .#.#. #...# ..... ..... ..... .....
' ..#.. ..#.. .#... ..... ..... ..... .....
"""
_GLYPHS = {line[0]: "".join(line[2:].split()) for line in _FONT.strip().splitlines()}
_GLYPHS[" "] = "." * 35


def _glyph(char: str) -> np.ndarray:
    pattern = _GLYPHS.get(char.upper(), _GLYPHS["?"])
    return np.array([c == "#" for c in pattern], dtype=bool).reshape(7, 5)


PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]


class Canvas:
    def __init__(self, width: int, height: int):
        self.pixels = np.full((height, width, 3), 255, dtype=np.uint8)

    @property
    def width(self) -> int:
        return self.pixels.shape[1]

    @property
    def height(self) -> int:
        return self.pixels.shape[0]

    def dot(self, x: float, y: float, color, radius: int = 0) -> None:
        xi, yi = int(round(x)), int(round(y))
        y0, y1 = max(yi - radius, 0), min(yi + radius + 1, self.height)
        x0, x1 = max(xi - radius, 0), min(xi + radius + 1, self.width)
        if y0 < y1 and x0 < x1:
            self.pixels[y0:y1, x0:x1] = color

    def line(self, x0: float, y0: float, x1: float, y1: float, color, width: int = 0) -> None:
        steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        for t in np.linspace(0.0, 1.0, steps + 1):
            self.dot(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, color, width)

    def text(self, x: float, y: float, text: str, color=(0, 0, 0), scale: int = 1,
             anchor: str = "left", vertical: bool = False) -> None:
        """Text whose left/centre/right end (`anchor`) is at x, its top at y."""
        advance = 6 * scale
        length = len(text) * advance
        start = {"left": 0, "center": length / 2, "right": length}[anchor]
        for i, char in enumerate(text):
            glyph = np.kron(_glyph(char), np.ones((scale, scale), dtype=bool))
            if vertical:  # read bottom to top
                glyph = np.rot90(glyph)
                gx, gy = int(x), int(y + start - (i + 1) * advance)
            else:
                gx, gy = int(x - start + i * advance), int(y)
            h, w = glyph.shape
            if gx < 0 or gy < 0 or gx + w > self.width or gy + h > self.height:
                continue
            self.pixels[gy:gy + h, gx:gx + w][glyph] = color

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + row.tobytes() for row in self.pixels)

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    series: dict[str, Sequence[tuple[float, float]]] = field(default_factory=dict)
    log_x: bool = False
    log_y: bool = False
    marks: list[tuple[float, str]] = field(default_factory=list)
    """Vertical lines at x with a label (a detected size, say)."""


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log2(low)), math.ceil(math.log2(high))
        step = max(1, math.ceil((last - first) / 8))
        return [2.0 ** e for e in range(first, last + 1, step)]
    span = high - low or 1.0
    raw = span / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.floor(low / step) * step
    return [start + i * step for i in range(int((high - start) / step) + 2)
            if start + i * step <= high + step * 1e-9]


def _label(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    for unit, size in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if magnitude >= size and (magnitude / size) == int(magnitude / size):
            return f"{value / size:g}{unit}"
    if magnitude >= 1e4 or magnitude < 1e-2:
        return f"{value:.1e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{value:.3g}"


def render(chart: Chart, width: int = 720, height: int = 440) -> Canvas:
    canvas = Canvas(width, height)
    left, right, top, bottom = 72, width - 170, 34, height - 48
    points = [p for s in chart.series.values() for p in s
              if math.isfinite(p[0]) and math.isfinite(p[1])
              and (p[0] > 0 or not chart.log_x) and (p[1] > 0 or not chart.log_y)]
    xs = [p[0] for p in points] or [1.0]
    ys = [p[1] for p in points] or [1.0]
    x_low, x_high = min(xs), max(xs)
    y_low = min(ys) if chart.log_y else min(0.0, min(ys))
    y_high = max(ys)
    if x_high == x_low:
        x_high = x_low * 2 if chart.log_x else x_low + 1
    if y_high == y_low:
        y_high = y_low * 2 if chart.log_y else y_low + 1
    x_ticks, y_ticks = _ticks(x_low, x_high, chart.log_x), _ticks(y_low, y_high * 1.05, chart.log_y)
    x_low, x_high = min(x_low, x_ticks[0]), max(x_high, x_ticks[-1])
    y_low, y_high = min(y_low, y_ticks[0]), max(y_high, y_ticks[-1])

    def scale(v: float, low: float, high: float, log: bool) -> float:
        if log:
            return (math.log2(v) - math.log2(low)) / (math.log2(high) - math.log2(low))
        return (v - low) / (high - low)

    def px(x: float) -> float:
        return left + (right - left) * scale(x, x_low, x_high, chart.log_x)

    def py(y: float) -> float:
        return bottom - (bottom - top) * scale(y, y_low, y_high, chart.log_y)

    grey, black = (225, 225, 225), (0, 0, 0)
    for t in x_ticks:
        canvas.line(px(t), top, px(t), bottom, grey)
        canvas.text(px(t), bottom + 6, _label(t), anchor="center")
    for t in y_ticks:
        canvas.line(left, py(t), right, py(t), grey)
        canvas.text(left - 6, py(t) - 3, _label(t), anchor="right")
    canvas.line(left, bottom, right, bottom, black)
    canvas.line(left, top, left, bottom, black)
    canvas.text((left + right) / 2, 8, chart.title, scale=2, anchor="center")
    canvas.text((left + right) / 2, bottom + 22, chart.x_label, anchor="center")
    canvas.text(8, (top + bottom) / 2, chart.y_label, anchor="center", vertical=True)
    for x, label in chart.marks:
        if x_low <= x <= x_high:
            for y in range(top, bottom, 6):
                canvas.line(px(x), y, px(x), min(y + 3, bottom), (200, 0, 0))
            canvas.text(px(x) + 3, top + 2, label, color=(200, 0, 0))
    for k, (name, series) in enumerate(chart.series.items()):
        color = PALETTE[k % len(PALETTE)]
        kept = [(px(x), py(y)) for x, y in series
                if math.isfinite(x) and math.isfinite(y)
                and (x > 0 or not chart.log_x) and (y > 0 or not chart.log_y)]
        for (x0, y0), (x1, y1) in zip(kept, kept[1:]):
            canvas.line(x0, y0, x1, y1, color)
        for x, y in kept:
            canvas.dot(x, y, color, 1)
        legend_y = top + 4 + 14 * k
        canvas.line(right + 10, legend_y + 3, right + 26, legend_y + 3, color, 1)
        canvas.text(right + 30, legend_y, name[:22])
    return canvas


def write_png(chart: Chart, path: Path) -> None:
    path.write_bytes(render(chart).png())

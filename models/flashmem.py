"""
FlashMem's overlap plan (§3, issue 21): which weights are preloaded before the first kernel
and, for the others, at which layers their chunks move into their textures. The LC-OPG model
of §3.2 in CP-SAT, its tiered fallbacks, the two naive baselines of §5.4, and a checker that
replays a plan without the model. The `flashmem-plan` pass plans a lowered module with it
and records `plan_attributes` (`#stream.plan`, `#stream.weight_plan`); `flashmem-fuse`
plans the onnx-level graph with it to choose the fused kernels to split (§4.3).

Problem. Layers 1..N are the kernels in execution order; layer 0 is the preload phase before
the first. A weight w of B(w) bytes is cut into T(w) = ceil(B(w) / S) chunks of S bytes and
is read from layer i_w (its first use) to e_w (its last use). A plan chooses
- W, the preloaded weights: all T(w) chunks move at layer 0, and z_w = 0;
- for every other weight its load layer z_w, 1 <= z_w < i_w, and the chunks x_{w,l} that move
  while layer l runs, only at z_w <= l < i_w (C1) and T(w) in all (C0). A weight that layer 1
  reads is therefore preloaded.

Memory. The replay (`replay`, `check`) and the CP-SAT model count the same bytes: at layer l
- the layer's activations (`Layer.activation_bytes`; none at layer 0);
- every streamed weight from z_w to e_w, whole: a weight's texture is one image, allocated
  whole when its load starts, so a weight with half its chunks moved already takes all its
  bytes; it is freed after its last reader, and streamed again by the next run;
- every weight of W, at every layer: it is loaded once and stays for the runs that follow;
- staging: the runtime's ring of S-byte staging buffers, held from the first load to the
  end of the run. A layer's chunks are in flight together while it runs, each in a buffer
  of its own, so the ring has R = max_l x_l buffers (x_l: the chunks moved at layer l >= 1),
  and at least one where any weight exists (the preload phase moves chunks one at a time).
  Every layer holds the R · S bytes.
The budget bounds the peak of that sum over layers 0..N (C2). The paper's C2 bounds only the
bytes in flight, with W's weights beside them (§3.2, "Hyperparameters"); here the budget is
all the memory the run holds, which a counting allocator can check.

C3: at layer l >= 1 at most C_l chunks move (`Layer.capacity_chunks`, None for no limit;
`load_capacity` derives it from §4.2's operator classes, with the ratios the device profile
measured, `load_ratios`). Layer 0 has no limit.

Objective, minimised (§3.1.1 and §4.3 weigh the preload set by λ and the loading distance
i_w - z_w by μ; §4.3 calls M_peak's minimisation an objective too):

    peak + λ · (bytes of W) + μ · (Σ_w B(w) · (i_w - z_w)) / N

so λ prices a preloaded byte against a byte of peak, and μ the mean bytes held before their
first use (weights loaded early). λ and μ are used to 1/100 (`SCALE`); their defaults, 0.01,
mostly break ties between plans of one peak. The solver loads a streamed weight at most
`WINDOW` layers before its first use (§3.2's rolling window); the checker has no window.

Tiers (§3.2, C4), each solve given half of the time left:
1. CP-SAT with C3;
2. C3 soft: the chunks over C_l are minimised first, then the objective at that excess;
   infeasible here means that no plan fits the budget (`BudgetError`);
3. while CP-SAT finds nothing in time: the largest weight not yet in W is forced into it and
   the model (C3 soft) solved again, a smaller search each time;
4. `greedy`.

What an OPTIMAL plan guarantees: against any plan that fits the same budget and loads within
the window (the baselines, say), no more chunks over C3 (none in tier 1), and at the same
excess no higher cost; with λ = μ = 0, no higher peak. It need not hold less than a baseline
that breaks C3: the budget it may use is traded for staying within the capacities.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from mobile_opt.dialects.stream.attributes import (
    PRELOAD_LAYER,
    Decision,
    PlanAttr,
    SolverStatus,
    WeightPlanAttr,
    chunks_of,
)
from mobile_opt.models.device_profile import ProfileError

MB = 1 << 20
SCALE = 100
"""λ and μ are rounded to multiples of 1 / SCALE, so that the CP-SAT objective is integral."""
WINDOW = 32
"""The most layers before its first use that the solver loads a streamed weight (§3.2's
rolling window, which keeps the model's size linear in the layers)."""


class PlanError(ValueError):
    """A plan breaks a rule of the problem, or no plan within the budget was found in time."""


class BudgetError(ValueError):
    """No plan fits the budget; the message names the least budget that works."""


# Load capacity (§4.2) ------------------------------------------------------------------


class OpClass(StrEnum):
    """§4.2's operator classes, by how much extra data a kernel tolerates moving beside it."""

    ELEMENTAL = "elemental"
    """Elementwise and activations: low baseline latency, so a large extra load is cheap."""
    REUSABLE = "reusable"
    """Conv, MatMul: high arithmetic intensity; the latency grows slowest with extra load."""
    HIERARCHICAL = "hierarchical"
    """Softmax, normalisations, reductions: stepwise and synchronising; no overlap."""


LOAD_RATIO = {OpClass.ELEMENTAL: 3.0, OpClass.REUSABLE: 0.2, OpClass.HIERARCHICAL: 0.0}
"""§4.2's thresholds: the extra bytes a layer may move, as a share of its own input bytes;
what a device profile without measured ratios gets (`load_ratios`)."""

_REUSABLE = {"Conv", "FusedConv", "FusedMatMul", "FusedGemm", "ConvTranspose", "ConvInteger",
             "QLinearConv", "MatMul", "MatMulInteger", "QLinearMatMul", "Gemm", "Einsum",
             "Attention"}
_HIERARCHICAL = {"Softmax", "LogSoftmax", "LayerNormalization", "GroupNormalization",
                 "InstanceNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                 "LpNormalization", "TopK", "ArgMax", "ArgMin", "CumSum", "NonMaxSuppression"}
_ELEMENTAL = {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Relu",
              "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu",
              "Clip", "Min", "Max", "Where", "Cast", "Equal", "Less", "Greater", "Not", "And",
              "Or", "BatchNormalization", "Reshape", "Transpose", "Concat", "Split", "Slice",
              "Gather", "Expand", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Pad",
              "Resize", "MaxPool", "AveragePool", "QuantizeLinear", "DequantizeLinear",
               "Reciprocal", "Sign", "Mod", "Dropout", "Shrink", "Trilu"}


def op_class(op_type: str) -> OpClass:
    """The class of an ONNX op type; reductions and ops not listed count as hierarchical, the
    class that moves nothing, so that no unmeasured kernel is slowed."""
    if op_type in _REUSABLE:
        return OpClass.REUSABLE
    if op_type in _ELEMENTAL:
        return OpClass.ELEMENTAL
    return OpClass.HIERARCHICAL


def kernel_class(op_types: Sequence[str], ratios: Mapping[OpClass, float] = LOAD_RATIO
                 ) -> OpClass:
    """
    The class of a kernel that computes `op_types` (fused): the part that tolerates least,
    as a fused kernel's capacity is about the least of its parts' (§4.3), at `ratios`;
    hierarchical for a kernel of no known op.
    """
    classes = [op_class(t) for t in op_types] or [OpClass.HIERARCHICAL]
    return min(classes, key=lambda c: ratios[c])


def load_ratios(profile: Mapping | None) -> dict[OpClass, float]:
    """
    Per class, the extra bytes a layer may move per byte of its input on the device of
    `profile` (a device profile: its `load_capacity.ratios`, which `mobile-probe`
    measures); `LOAD_RATIO` for a class it has no ratio of, or without a profile.
    """
    section = (profile or {}).get("load_capacity") or {}
    measured = section.get("ratios") or {}
    name = (profile or {}).get("identity", {}).get("name", "profile")
    unknown = sorted(set(measured) - {c.value for c in OpClass})
    if unknown:
        raise ProfileError(f"{name}: load_capacity.ratios of no operator class: "
                           f"{', '.join(unknown)}")
    ratios = dict(LOAD_RATIO)
    for cls in OpClass:
        value = measured.get(cls.value)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ProfileError(f"{name}: load_capacity.ratios.{cls.value} is {value!r}, "
                               "not a ratio >= 0")
        ratios[cls] = float(value)
    return ratios


def load_capacity(cls: OpClass, input_bytes: int, chunk_bytes: int,
                  ratios: Mapping[OpClass, float] = LOAD_RATIO) -> int:
    """C_l: the chunks a layer of class `cls` reading `input_bytes` may move (§4.2), at
    `ratios` (`load_ratios` of the device's profile)."""
    return int(ratios[cls] * input_bytes) // chunk_bytes


# The problem --------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One kernel, in execution order."""

    name: str
    op_class: OpClass = OpClass.ELEMENTAL
    activation_bytes: int = 0
    """The activations live while it runs (its arena's need)."""
    capacity_chunks: int | None = None
    """C_l; None: no limit."""


@dataclass(frozen=True)
class Weight:
    """A weight and the layers (1..N) that first and last read it."""

    name: str
    bytes: int
    first_use: int
    last_use: int


@dataclass(frozen=True)
class Problem:
    """Layers 1..N (`layers[l - 1]` is layer l), the weights, and the plan's parameters."""

    layers: Sequence[Layer]
    weights: Sequence[Weight]
    budget_bytes: int
    chunk_bytes: int
    lambda_: float = 0.01
    mu: float = 0.01

    def __post_init__(self):
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "weights", tuple(self.weights))
        n = len(self.layers)
        if n < 1:
            raise ValueError("a problem has at least one layer")
        if self.chunk_bytes < 1 or self.budget_bytes < 1:
            raise ValueError("the chunk size and the budget are positive")
        if self.lambda_ < 0 or self.mu < 0:
            raise ValueError(f"λ and μ are not negative (λ = {self.lambda_}, μ = {self.mu})")
        for layer in self.layers:
            if layer.activation_bytes < 0 or (layer.capacity_chunks or 0) < 0:
                raise ValueError(f"layer '{layer.name}': negative activations or capacity")
        names = [w.name for w in self.weights]
        if len(set(names)) != len(names):
            raise ValueError("weight names repeat")
        for w in self.weights:
            if w.bytes < 1 or not 1 <= w.first_use <= w.last_use <= n:
                raise ValueError(
                    f"weight '{w.name}': {w.bytes} bytes read at layers {w.first_use}.."
                    f"{w.last_use}; needs bytes > 0 and 1 <= first <= last <= {n}")

    @property
    def n(self) -> int:
        """N, the number of layers."""
        return len(self.layers)

    def chunks(self, w: Weight) -> int:
        """T(w)."""
        return chunks_of(w.bytes, self.chunk_bytes)

    def layer_name(self, layer: int) -> str:
        return "preload" if layer == PRELOAD_LAYER else self.layers[layer - 1].name

    def activations(self, layer: int) -> int:
        return 0 if layer == PRELOAD_LAYER else self.layers[layer - 1].activation_bytes

    def capacity(self, layer: int) -> int | None:
        return None if layer == PRELOAD_LAYER else self.layers[layer - 1].capacity_chunks


# Plans and their replay ----------------------------------------------------------------


@dataclass(frozen=True)
class WeightPlan:
    """z_w (`load`, 0 for a preloaded weight) and the x_{w,l} that are not 0."""

    load: int
    moves: Mapping[int, int]

    @property
    def preloaded(self) -> bool:
        return self.load == PRELOAD_LAYER


@dataclass(frozen=True)
class Plan:
    """A plan for every weight, and how it was made."""

    weights: Mapping[str, WeightPlan]
    status: SolverStatus
    source: str
    """"cp-sat", "cp-sat, C3 relaxed", "cp-sat, incremental preload", "greedy", or a baseline."""
    tier: int
    """1-4 as in the module's docstring; 0 for a baseline."""
    relaxed: bool
    """C3 was not enforced: `check` accepts layers over their capacity."""
    peak: int
    peak_layer: int
    forced: tuple[str, ...] = ()
    """The weights tier 3 put into W."""
    bound: float | None = None
    """A proven lower bound on `cost` under the tier's model, where CP-SAT gave one."""


@dataclass(frozen=True)
class Replay:
    """What a plan holds at each layer 0..N."""

    resident: tuple[int, ...]
    """Activations + weights + staging, in bytes."""
    staging: tuple[int, ...]
    moved: tuple[int, ...]
    """Chunks moved at each layer."""
    ring: int = 0
    """R, the staging buffers the run holds (`ring_size`)."""
    over_capacity: Mapping[int, int] = field(default_factory=dict)
    """Chunks moved beyond C_l, by layer."""

    @property
    def peak(self) -> int:
        return max(self.resident)

    @property
    def peak_layer(self) -> int:
        return self.resident.index(self.peak)


def ring_size(problem: Problem, moved: Sequence[int]) -> int:
    """R: the most chunks moved at one layer 1..N (`moved[l]`), and one for the preload
    phase's one-at-a-time moves; none without weights."""
    if not problem.weights:
        return 0
    return max(1, max(moved[1:], default=0))


def _check_weight(problem: Problem, w: Weight, wp: WeightPlan) -> None:
    """The rules on one weight's plan (C0, C1, moves before the first use)."""
    chunks = problem.chunks(w)
    bad = [(layer, c) for layer, c in wp.moves.items() if c < 1 or not 0 <= layer <= problem.n]
    if bad:
        raise PlanError(f"weight '{w.name}' moves {bad[0][1]} chunks at layer {bad[0][0]}")
    if sum(wp.moves.values()) != chunks:
        raise PlanError(f"weight '{w.name}' moves {sum(wp.moves.values())} chunks in all, "
                        f"not its T(w) = {chunks} (C0)")
    if wp.preloaded:
        if set(wp.moves) != {PRELOAD_LAYER}:
            layer = max(wp.moves)
            raise PlanError(f"weight '{w.name}' is preloaded but moves chunks at layer {layer}")
        return
    if w.first_use == 1:
        raise PlanError(f"weight '{w.name}' is read by layer 1, so it is preloaded, not loaded "
                        f"at layer {wp.load}")
    if not 1 <= wp.load < w.first_use:
        raise PlanError(f"weight '{w.name}' loads at layer {wp.load}; a streamed weight loads "
                        f"at a layer from 1 to {w.first_use - 1}, before its first use")
    first, last = min(wp.moves), max(wp.moves)
    if first < wp.load:
        raise PlanError(f"weight '{w.name}' moves chunks at layer {first}, before its load at "
                        f"layer {wp.load} (C1)")
    if last >= w.first_use:
        raise PlanError(f"weight '{w.name}' moves chunks at layer {last}, not before its "
                        f"first use at layer {w.first_use}")


def replay(problem: Problem, plan: Plan | Mapping[str, WeightPlan]) -> Replay:
    """
    Play a plan layer by layer, without the CP-SAT model, and count what it holds. Raises
    `PlanError` on a weight missing or unknown, or a weight's plan breaking C0, C1 or the
    first use; the budget and C3 are `check`'s.
    """
    weights = plan.weights if isinstance(plan, Plan) else plan
    known = {w.name for w in problem.weights}
    for name in weights:
        if name not in known:
            raise PlanError(f"the plan has weight '{name}', which the problem does not")
    n, s = problem.n, problem.chunk_bytes
    held = [problem.activations(layer) for layer in range(n + 1)]
    moved = [0] * (n + 1)
    for w in problem.weights:
        if w.name not in weights:
            raise PlanError(f"the plan has no entry for weight '{w.name}'")
        wp = weights[w.name]
        _check_weight(problem, w, wp)
        for layer in range(wp.load, n + 1 if wp.preloaded else w.last_use + 1):
            held[layer] += w.bytes
        for layer, c in wp.moves.items():
            moved[layer] += c
    ring = ring_size(problem, moved)
    staging = [s * ring] * (n + 1)
    over = {}
    for layer in range(1, n + 1):
        cap = problem.capacity(layer)
        if cap is not None and moved[layer] > cap:
            over[layer] = moved[layer] - cap
    return Replay(tuple(h + st for h, st in zip(held, staging)), tuple(staging), tuple(moved),
                  ring, over)


def check(problem: Problem, plan: Plan) -> Replay:
    """
    The independent checker: `replay`, then C3 (unless the plan relaxed it), the budget, and
    the peak the plan records. Raises `PlanError` with one line naming the weight or layer.
    """
    r = replay(problem, plan)
    if not plan.relaxed and r.over_capacity:
        layer = min(r.over_capacity)
        raise PlanError(f"layer {layer} ('{problem.layer_name(layer)}') moves {r.moved[layer]} "
                        f"chunks, over its load capacity of {problem.capacity(layer)} (C3)")
    if r.peak > problem.budget_bytes:
        layer = r.peak_layer
        raise PlanError(f"layer {layer} ('{problem.layer_name(layer)}') holds {r.peak} bytes, "
                        f"over the budget of {problem.budget_bytes} (C2)")
    if plan.peak != r.peak:
        raise PlanError(f"the plan records a peak of {plan.peak} bytes, but it holds {r.peak} "
                        f"at layer {r.peak_layer} ('{problem.layer_name(r.peak_layer)}')")
    return r


def _scaled_cost(problem: Problem, plan: Plan | Mapping[str, WeightPlan]) -> int:
    """The objective times SCALE · N, an integer, as CP-SAT minimises it."""
    weights = plan.weights if isinstance(plan, Plan) else plan
    lam, mu = round(problem.lambda_ * SCALE), round(problem.mu * SCALE)
    n = problem.n
    preloaded = sum(w.bytes for w in problem.weights if weights[w.name].preloaded)
    early = sum(w.bytes * (w.first_use - weights[w.name].load) for w in problem.weights)
    return SCALE * n * replay(problem, weights).peak + lam * n * preloaded + mu * early


def cost(problem: Problem, plan: Plan | Mapping[str, WeightPlan]) -> float:
    """The objective of the module's docstring, in bytes."""
    return _scaled_cost(problem, plan) / (SCALE * problem.n)


def _make(problem: Problem, weights: Mapping[str, WeightPlan], status: SolverStatus,
          source: str, tier: int, relaxed: bool, forced: Sequence[str] = (),
          bound: float | None = None) -> Plan:
    r = replay(problem, weights)
    return Plan(dict(weights), status, source, tier, relaxed, r.peak, r.peak_layer,
                tuple(forced), bound)


# Baselines (§5.4) and the greedy tier --------------------------------------------------


def _whole_at(problem: Problem, layer_of) -> dict[str, WeightPlan]:
    """Each weight moved whole at `layer_of(w)` (None or 0: preloaded)."""
    result = {}
    for w in problem.weights:
        layer = layer_of(w) or PRELOAD_LAYER
        result[w.name] = WeightPlan(layer, {layer: problem.chunks(w)})
    return result


def preload_all(problem: Problem) -> Plan:
    """Every weight in W: what a framework without streaming holds."""
    weights = _whole_at(problem, lambda w: None)
    return _make(problem, weights, SolverStatus.HEURISTIC, "preload-all", 0, True)


def load_next_layer(problem: Problem) -> Plan:
    """
    §5.4's Always-Next Loading: each weight moves whole while the layer before its first
    use runs (preloaded when that is layer 1), whatever that layer's capacity.
    """
    weights = _whole_at(problem, lambda w: w.first_use - 1)
    return _make(problem, weights, SolverStatus.HEURISTIC, "load-next-layer", 0, True)


def same_type_prefetch(problem: Problem) -> Plan:
    """
    §5.4's Same-Op-Type Prefetching: a layer prefetches the weights of the next layer of its
    own class, so each weight moves whole while the last earlier layer of its first reader's
    class runs (preloaded if there is none). Capacity is only respected as far as layers of a
    class tolerate the loads of their own class.
    """
    def layer_of(w: Weight) -> int | None:
        cls = problem.layers[w.first_use - 1].op_class
        same = [j for j in range(1, w.first_use) if problem.layers[j - 1].op_class == cls]
        return same[-1] if same else None

    weights = _whole_at(problem, layer_of)
    return _make(problem, weights, SolverStatus.HEURISTIC, "same-type-prefetch", 0, True)


def _spread(total: int, room: np.ndarray) -> np.ndarray:
    """`total` chunks over len(room) layers, evenly (remainder to the latest), as far as each
    layer's room allows; what no room takes goes to the last layer."""
    k = len(room)
    x = np.full(k, total // k, dtype=np.int64)
    if total % k:
        x[k - total % k:] += 1
    x = np.minimum(x, room)
    left = total - int(x.sum())
    for j in reversed(range(k)):
        if left == 0:
            break
        add = min(left, int(room[j] - x[j]))
        x[j] += add
        left -= add
    x[-1] += left
    return x


def greedy(problem: Problem, window: int | None = None) -> Plan:
    """
    Tier 4, and the hint that CP-SAT starts from: the weights that layer 1 reads are
    preloaded; then, largest first, each other weight takes the cheapest of preloading or
    moving evenly over the last k layers before its first use (k = 1, 2, 4, ... up to
    `window`), counted as (bytes over the budget, chunks over C3, peak, peak over its own
    span, bytes held early).
    """
    n, s = problem.n, problem.chunk_bytes
    unlimited = sum(problem.chunks(w) for w in problem.weights) + 1
    cap = np.array([unlimited] + [unlimited if c is None else c
                                  for c in (layer.capacity_chunks for layer in problem.layers)],
                   dtype=np.int64)
    held = np.array([problem.activations(layer) for layer in range(n + 1)], dtype=np.int64)
    moved = np.zeros(n + 1, dtype=np.int64)
    ring = 1 if problem.weights else 0
    weights: dict[str, WeightPlan] = {}

    def preload(w: Weight):
        held[:] += w.bytes
        moved[0] += problem.chunks(w)
        weights[w.name] = WeightPlan(PRELOAD_LAYER, {PRELOAD_LAYER: problem.chunks(w)})

    streamed = []
    for w in problem.weights:
        if w.first_use == 1:
            preload(w)
        else:
            streamed.append(w)
    for w in sorted(streamed, key=lambda w: (-w.bytes, w.first_use, w.name)):
        chunks, i, e = problem.chunks(w), w.first_use, w.last_use
        add = np.zeros(n + 1, dtype=np.int64)
        add[:] = w.bytes
        after = held + add + s * ring
        best = ((max(0, int(after.max()) - problem.budget_bytes), 0, int(after.max()),
                 int(after.max()), w.bytes * i), None)
        most = min(i - 1, window or i)
        spans = sorted({1 << j for j in range(most.bit_length()) if 1 << j <= most} | {most})
        for k in spans:
            z = i - k
            x = _spread(chunks, np.maximum(cap[z:i] - moved[z:i], 0))
            load = z + int(np.flatnonzero(x)[0])
            add = np.zeros(n + 1, dtype=np.int64)
            add[load : e + 1] = w.bytes
            grown = max(ring, int((moved[z:i] + x).max()))
            after = held + add + s * grown
            over = int((np.maximum(moved[z:i] + x - cap[z:i], 0)
                        - np.maximum(moved[z:i] - cap[z:i], 0)).sum())
            key = (max(0, int(after.max()) - problem.budget_bytes), over, int(after.max()),
                   int(after[load : e + 1].max()), w.bytes * (i - load))
            if key < best[0]:
                best = (key, (load, z, x, add, grown))
        if best[1] is None:
            preload(w)
            continue
        load, z, x, add, ring = best[1]
        held += add
        moved[z:i] += x
        weights[w.name] = WeightPlan(load, {z + j: int(c) for j, c in enumerate(x) if c})
    relaxed = bool(replay(problem, weights).over_capacity)
    return _make(problem, weights, SolverStatus.HEURISTIC, "greedy", 4, relaxed)


# The LC-OPG model in CP-SAT ------------------------------------------------------------


@dataclass
class _Solved:
    status: str
    """"optimal", "feasible", "infeasible" or "unknown" (nothing found in time)."""
    weights: dict[str, WeightPlan] | None = None
    bound: float | None = None


class _Model:
    """
    The CP-SAT model of one tier. Per streamable weight w: Booleans a_{w,l}, l = 0..i_w-1,
    true from z_w on (so a_{w,0} is "w in W" and i_w - z_w = Σ_l a_{w,l}), and integers
    x_{w,l}. A weight's load layer is the first that moves a chunk of it (no plan gets worse
    by that, and it removes equivalent solutions). With a `window`, a streamed weight loads
    at most `window` layers before its first use (§3.2's rolling window): before that,
    a_{w,l} is a_{w,0}, and the preloaded bytes waiting there are one running sum per layer,
    so a layer's row holds only the weights whose window it is in.
    """

    def __init__(self, problem: Problem, relaxed: bool, forced: Sequence[str], peak_cap: int,
                 window: int | None):
        from ortools.sat.python import cp_model

        self.problem, self.cp = problem, cp_model
        m = self.m = cp_model.CpModel()
        n, s = problem.n, problem.chunk_bytes
        total = sum(problem.chunks(w) for w in problem.weights)
        held = [problem.activations(layer) for layer in range(n + 1)]
        terms: list[list] = [[] for _ in range(n + 1)]
        moving: list[list] = [[] for _ in range(n + 1)]
        waiting: list[list] = [[] for _ in range(n + 2)]
        ended: list[list] = [[] for _ in range(n + 1)]
        lam, mu = round(problem.lambda_ * SCALE), round(problem.mu * SCALE)
        cost_vars, cost_coeffs, cost_const = [], [], 0
        self.a: dict[str, list] = {}
        self.x: dict[str, dict[int, object]] = {}
        for w in problem.weights:
            chunks, i, e = problem.chunks(w), w.first_use, w.last_use
            for layer in range(i, e + 1):
                held[layer] += w.bytes
            if i == 1 or w.name in forced:
                for layer in [*range(i), *range(e + 1, n + 1)]:
                    held[layer] += w.bytes
                cost_const += lam * n * w.bytes + mu * w.bytes * i
                continue
            first = max(1, i - window) if window else 1
            a0 = m.new_bool_var(f"a_{w.name}_0")
            a = [a0] * first + [m.new_bool_var(f"a_{w.name}_{layer}") for layer in range(first, i)]
            m.add(a[i - 1] == 1)
            x = {}
            for layer in range(first, i):
                m.add_implication(a[layer - 1], a[layer])
                terms[layer].append((a[layer], w.bytes))
                cap = problem.capacity(layer)
                top = chunks if relaxed or cap is None else min(chunks, cap)
                if top == 0:
                    # no chunk moves here, so the load cannot start here either
                    m.add(a[layer] == a[layer - 1])
                    continue
                x[layer] = m.new_int_var(0, top, f"x_{w.name}_{layer}")
                m.add(x[layer] == 0).only_enforce_if(~a[layer])
                m.add(x[layer] >= 1).only_enforce_if([a[layer], ~a[layer - 1]])
                moving[layer].append(x[layer])
            m.add(cp_model.LinearExpr.sum(list(x.values())) + chunks * a0 == chunks)
            waiting[first].append((a0, w.bytes))
            if e < n:
                ended[e + 1].append((a0, w.bytes))
            cost_vars += [a0, *a[first:]]
            cost_coeffs += [(lam * n + mu * first) * w.bytes] + [mu * w.bytes] * (i - first)
            self.a[w.name], self.x[w.name] = a, x
        # R, the staging ring: at least one buffer, and one per chunk a layer moves
        self.ring = m.new_int_var(1 if problem.weights else 0, max(1, total), "ring")
        # at layer l, the preloaded weights whose window starts after l
        later: list = [0] * (n + 1)
        most = 0
        for layer in reversed(range(n)):
            later[layer] = later[layer + 1]
            if waiting[layer + 1]:
                most += sum(c for _, c in waiting[layer + 1])
                v = m.new_int_var(0, most, f"later_{layer}")
                m.add(v == later[layer + 1] + cp_model.LinearExpr.weighted_sum(
                    [b for b, _ in waiting[layer + 1]], [c for _, c in waiting[layer + 1]]))
                later[layer] = v
        # at layer l, the preloaded weights whose last use is before l: W stays resident
        kept: list = [0] * (n + 1)
        most = 0
        for layer in range(1, n + 1):
            kept[layer] = kept[layer - 1]
            if ended[layer]:
                most += sum(c for _, c in ended[layer])
                v = m.new_int_var(0, most, f"kept_{layer}")
                m.add(v == kept[layer - 1] + cp_model.LinearExpr.weighted_sum(
                    [b for b, _ in ended[layer]], [c for _, c in ended[layer]]))
                kept[layer] = v
        self.peak = m.new_int_var(0, peak_cap, "peak")
        self.excess = []
        for layer in range(n + 1):
            row = cp_model.LinearExpr.weighted_sum([v for v, _ in terms[layer]],
                                                   [c for _, c in terms[layer]])
            chunks_here = cp_model.LinearExpr.sum(moving[layer])
            m.add(row + later[layer] + kept[layer] + s * self.ring + held[layer] <= self.peak)
            if moving[layer]:
                m.add(chunks_here <= self.ring)
            cap = problem.capacity(layer)
            if layer == PRELOAD_LAYER or cap is None or not moving[layer]:
                continue
            if relaxed:
                e = m.new_int_var(0, max(0, total - cap), f"excess_{layer}")
                m.add(chunks_here <= cap + e)
                self.excess.append(e)
            else:
                m.add(chunks_here <= cap)
        self.cost = (SCALE * n * self.peak
                     + cp_model.LinearExpr.weighted_sum(cost_vars, cost_coeffs) + cost_const)

    def hint(self, weights: Mapping[str, WeightPlan]):
        self.m.clear_hints()
        for name, a in self.a.items():
            wp = weights[name]
            seen = set()
            for layer, b in enumerate(a):
                if b.index not in seen:
                    seen.add(b.index)
                    self.m.add_hint(b, layer >= wp.load)
            for layer, x in self.x[name].items():
                self.m.add_hint(x, wp.moves.get(layer, 0))

    def solve(self, objective, limit: float, workers: int) -> tuple[str, object]:
        cp = self.cp
        self.m.minimize(objective)
        solver = cp.CpSolver()
        solver.parameters.max_time_in_seconds = max(limit, 0.01)
        solver.parameters.num_workers = workers
        status = solver.solve(self.m)
        if status == cp.MODEL_INVALID:
            raise RuntimeError(f"flashmem: invalid CP-SAT model: {self.m.validate()}")
        name = {cp.OPTIMAL: "optimal", cp.FEASIBLE: "feasible",
                cp.INFEASIBLE: "infeasible"}.get(status, "unknown")
        return name, solver

    def weights(self, solver) -> dict[str, WeightPlan]:
        result = {}
        for w in self.problem.weights:
            chunks = self.problem.chunks(w)
            a = self.a.get(w.name)
            if a is None or solver.value(a[0]):
                result[w.name] = WeightPlan(PRELOAD_LAYER, {PRELOAD_LAYER: chunks})
                continue
            moves = {layer: v for layer, x in self.x[w.name].items() if (v := solver.value(x))}
            result[w.name] = WeightPlan(min(moves), moves)
        return result


def _solve(problem: Problem, relaxed: bool, forced: Sequence[str], limit: float, workers: int,
           hint: Mapping[str, WeightPlan] | None, window: int | None) -> _Solved:
    """
    One tier's solve within `limit` seconds, building included: with C3, or (relaxed) the
    chunks over C3 minimised first and then the objective with no more excess than that.
    """
    deadline = time.monotonic() + limit
    model = _Model(problem, relaxed, forced, problem.budget_bytes, window)
    if hint is not None:
        model.hint(hint)
    optimal, first = True, None
    if relaxed and model.excess:
        excess = model.cp.LinearExpr.sum(model.excess)
        status, solver = model.solve(excess, (deadline - time.monotonic()) / 2, workers)
        if status in ("infeasible", "unknown"):
            return _Solved(status)
        optimal = status == "optimal"
        first = model.weights(solver)
        model.m.add(excess <= round(solver.objective_value))
        model.hint(first)
    status, solver = model.solve(model.cost, deadline - time.monotonic(), workers)
    if status in ("infeasible", "unknown"):
        return _Solved(status) if first is None else _Solved("feasible", first)
    bound = solver.best_objective_bound / (SCALE * problem.n)
    optimal &= status == "optimal"
    return _Solved("optimal" if optimal else "feasible", model.weights(solver), bound)


def _needs(problem: Problem) -> list[int]:
    """
    What each layer 0..N holds under every plan: its activations, one staging buffer, and
    the weights read at it or live across it (read before and after); the preload phase,
    the weights that layer 1 reads.
    """
    ring = problem.chunk_bytes if problem.weights else 0
    needs = [problem.activations(layer) + ring for layer in range(problem.n + 1)]
    for w in problem.weights:
        for layer in (range(problem.n + 1) if w.first_use == 1
                      else range(w.first_use, w.last_use + 1)):
            needs[layer] += w.bytes
    return needs


@dataclass(frozen=True)
class LeastBudget:
    """The least budget that works, and the layer that needs most on its own."""

    layer: int
    need: int
    """What `layer` holds under every plan: a lower bound on any budget."""
    least: int
    """The peak of the lowest-peak plan found (C3 soft): a budget that works."""
    exact: bool
    """`least` is proven least."""


def least_budget(problem: Problem, time_limit_s: float = 10.0, workers: int = 8,
                 window: int | None = WINDOW) -> LeastBudget:
    """
    The least budget for which a plan exists (C3 relaxed, so capacity never makes a budget
    fail; z_w within `window` as `plan` has it): the lowest peak of any plan, by CP-SAT from
    the greedy plan; exact when CP-SAT proves it or it meets the largest layer's own need.
    """
    needs = _needs(problem)
    need = max(needs)
    layer = needs.index(need)
    start = greedy(problem, window)
    least = start.peak
    if least > need:
        model = _Model(problem, True, (), least, window)
        model.hint(start.weights)
        status, solver = model.solve(model.peak, time_limit_s, workers)
        if status in ("optimal", "feasible"):
            least = min(least, replay(problem, model.weights(solver)).peak)
            if status == "optimal":
                return LeastBudget(layer, need, least, True)
    return LeastBudget(layer, need, least, least == need)


def _mb(size: int, up: bool) -> str:
    value = size / MB * 100
    return f"{(math.ceil(value) if up else math.floor(value)) / 100:.2f}"


def _budget_error(problem: Problem, time_limit_s: float, workers: int,
                  window: int | None) -> BudgetError:
    bound = least_budget(problem, time_limit_s, workers, window)
    budget = f"{problem.budget_bytes / MB:.2f}"
    least = f"{'' if bound.exact else 'at most '}{_mb(bound.least, True)} MB"
    name = problem.layer_name(bound.layer)
    if problem.budget_bytes < bound.need:
        return BudgetError(f"budget {budget} MB is below what layer '{name}' needs alone: "
                           f"{_mb(bound.need, True)} MB (the least budget that works is {least})")
    return BudgetError(f"budget {budget} MB is below the least budget that works, {least}; "
                       f"layer '{name}' alone needs {_mb(bound.need, True)} MB")


def plan(problem: Problem, time_limit_s: float = 60.0, workers: int = 8,
         window: int | None = WINDOW) -> Plan:
    """
    The overlap plan, by the tiers of the module's docstring within `time_limit_s` (finding
    the least budget for a `BudgetError` may take up to 10 s more). `workers` is CP-SAT's
    portfolio size (see `pbqp.solve_exact`); `window` bounds i_w - z_w of a streamed weight
    (None: no bound). Raises `BudgetError` when no plan fits the budget, and `PlanError`
    when none was found in time and the greedy one does not fit.
    """
    deadline = time.monotonic() + time_limit_s

    def left() -> float:
        return max(0.0, deadline - time.monotonic())

    if problem.budget_bytes < max(_needs(problem)):
        raise _budget_error(problem, min(10.0, time_limit_s), workers, window)
    start = greedy(problem, window)
    for tier, relaxed, source in ((1, False, "cp-sat"), (2, True, "cp-sat, C3 relaxed")):
        solved = _solve(problem, relaxed, (), left() / 2, workers, start.weights, window)
        if solved.weights is not None:
            return _make(problem, solved.weights, SolverStatus(solved.status), source, tier,
                         relaxed, (), solved.bound)
    if solved.status == "infeasible":
        raise _budget_error(problem, max(1.0, min(10.0, left())), workers, window)
    forced: list[str] = []
    candidates = sorted((w for w in problem.weights if w.first_use > 1),
                        key=lambda w: (-w.bytes, w.name))
    for w in candidates:
        if left() < 0.1 * time_limit_s:
            break
        forced.append(w.name)
        solved = _solve(problem, True, forced, left() / 2, workers, start.weights, window)
        if solved.weights is not None:
            # proven optimal, if at all, only among the plans with `forced` in W
            return _make(problem, solved.weights, SolverStatus.FEASIBLE,
                         "cp-sat, incremental preload", 3, True, forced)
        if solved.status == "infeasible":
            break
    if start.peak <= problem.budget_bytes:
        return start
    raise PlanError(
        f"no plan within the budget of {problem.budget_bytes / MB:.2f} MB was found in "
        f"{time_limit_s:g} s: the greedy plan holds {_mb(start.peak, True)} MB at layer "
        f"'{problem.layer_name(start.peak_layer)}'")


# Comparison and the IR's attributes ----------------------------------------------------


@dataclass(frozen=True)
class Score:
    """A plan's numbers, to compare plans of one problem."""

    peak: int
    preloaded_bytes: int
    over_capacity: int
    """Chunks moved beyond C_l, over all layers: §5.4's slowdown, in this model's terms."""
    cost: float
    fits: bool
    """Its peak is within the budget."""


def baselines(problem: Problem) -> dict[str, Plan]:
    """The naive plans FlashMem is compared with (§5.4), and preloading everything."""
    return {"load-next-layer": load_next_layer(problem),
            "same-type-prefetch": same_type_prefetch(problem),
            "preload-all": preload_all(problem)}


def compare(problem: Problem, flashmem: Plan) -> dict[str, Score]:
    """The scores of `flashmem` (key "flashmem") and of each baseline."""
    result = {}
    for name, p in {"flashmem": flashmem, **baselines(problem)}.items():
        r = replay(problem, p)
        preloaded = sum(w.bytes for w in problem.weights if p.weights[w.name].preloaded)
        result[name] = Score(r.peak, preloaded, sum(r.over_capacity.values()),
                             cost(problem, p), r.peak <= problem.budget_bytes)
    return result


def plan_attributes(problem: Problem, plan: Plan) -> tuple[PlanAttr, dict[str, WeightPlanAttr]]:
    """
    The plan as the `stream` dialect records it: the module's `#stream.plan` (S, the budget,
    N, the status) and each weight's `#stream.weight_plan` (decision, T(w), z_w, i_w, moves).
    The budget recorded is this module's, all the memory the run holds.
    """
    weights = {}
    for w in problem.weights:
        wp = plan.weights[w.name]
        chunks = problem.chunks(w)
        if wp.preloaded:
            weights[w.name] = WeightPlanAttr.preloaded(chunks, w.first_use)
        else:
            weights[w.name] = WeightPlanAttr(Decision.STREAM, chunks, wp.load, w.first_use,
                                             wp.moves)
    head = PlanAttr(problem.chunk_bytes, problem.budget_bytes, problem.n, plan.status)
    return head, weights


def weight_plans(attributes: Mapping[str, WeightPlanAttr]) -> dict[str, WeightPlan]:
    """The weights' plans back from their attributes, for `replay` and `check`."""
    return {name: WeightPlan(a.load.data, {int(k): int(v) for k, v in a.moves.items()})
            for name, a in attributes.items()}

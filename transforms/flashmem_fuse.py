"""
`flashmem-fuse{budget-mb=B chunk-kb=64 alpha=0.2 lambda=0.01 mu=0.01 time-limit-s=10
device=D}`:
FlashMem's adaptive fusion (§4.3, issue 21). Run on the `onnx` dialect after `onnx-fuse`
and before lowering, it splits fused kernels where the overlap plan needs their load
capacity more than the kernel needs its fusion.

Fusing kernels shrinks the load capacity C_l of §4.2 (C3): a fused kernel is one layer whose
capacity is about the least of its parts' (`kernel_capacity`), where split it would be two
layers offering the sum. A kernel's capacity is `flashmem-plan`'s: `flashmem.load_capacity`
of its class (`flashmem.kernel_class`, the part that tolerates least) and the bytes it
reads, at the load ratios the profile `device` measured (`flashmem.load_ratios`). The pass
1. builds FlashMem's `Problem` of each function (`graph_problem`): the kernels in order are
   the layers, each `onnx.Weight` read is a weight with its first and last reading layer,
   a layer's activations are the tensors live while it runs;
2. plans it (`flashmem.plan`) within the budget. A plan that keeps C3 (tier 1) needs no
   capacity: nothing is split. A plan that had to break C3 to fit the budget (§4.3's
   "residual capacity violations") names the chunks moved over capacity;
3. ranks the fused kernels by Penalty(v) = λ |W_new| + μ Δz (`penalty`): replaying C3 on the
   plan, each chunk moved over capacity goes to the free capacity of the latest layers in its
   weight's window (Δz, the loading distance that adds) or its weight is preloaded (W_new, in
   bytes); a kernel's penalty is how much of that the capacity its split gains would save;
4. splits the top candidates, greedily, each ranked again against the capacity the ones
   before it gained, while a split still saves something. A split peels the last part off
   (`FusedConv{act}` -> Conv, act; `FusedMatMul{act}` with a bias -> `FusedMatMul`, act; a
   bias-only `FusedMatMul` -> MatMul, Add) and must gain capacity by the α rule
   C_{v1} + C_{v2} >= (1 + α) C_fused (`Split`). Kernels with a hierarchical part (Softmax,
   normalisations, reductions; none of `onnx-fuse`'s kernels has one) stay whole, and so
   do the hierarchical ops themselves;
5. plans again, and keeps the splits while the plan improves: fewer chunks over capacity,
   then a lower cost. It stops when C3 holds, nothing qualifies, or the plan got no better
   (then the last round's splits are undone).

Each split op records why in `flashmem.split`: the capacities and the penalty. With
`explain` (`mobile-opt --explain`), the rounds, plans and candidates go to stderr.
`time-limit-s` bounds each `flashmem.plan` call; `workers` is CP-SAT's (1: reproducible).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod
from typing import Self

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, NoneType, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.onnx.base import OnnxConstantOp, OnnxOp, is_constant_expression, is_none
from mobile_opt.dialects.onnx.constants import NoneOp, WeightOp
from mobile_opt.dialects.onnx.elementwise import AddOp
from mobile_opt.dialects.onnx.fused import FusedConvOp, FusedGemmOp, FusedMatMulOp
from mobile_opt.dialects.onnx.nn import ConvOp, GemmOp, MatMulOp
from mobile_opt.dialects.stream.attributes import SPLIT, element_bytes
from mobile_opt.models import flashmem
from mobile_opt.models.device_profile import ProfileError, load_profile
from mobile_opt.models.flashmem import (
    LOAD_RATIO,
    MB,
    WINDOW,
    BudgetError,
    Layer,
    OpClass,
    Plan,
    PlanError,
    Problem,
    Weight,
    kernel_class,
    load_capacity,
    load_ratios,
    op_class,
    replay,
)

from .flashmem_plan import LambdaOption
from .onnx_fuse import activation_op

# The onnx-level graph as FlashMem's problem -------------------------------------------


def value_bytes(value: SSAValue) -> int:
    """The bytes of a tensor value (0 for `none`); a dynamic shape is a user error."""
    t = value.type
    if isinstance(t, NoneType):
        return 0
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise DiagnosticException(f"flashmem-fuse: value '{value.name_hint or '?'}' has type "
                                  f"{t}, not a tensor of static shape")
    size = element_bytes(t)
    if size is None:
        raise DiagnosticException(f"flashmem-fuse: value '{value.name_hint or '?'}' of type "
                                  f"{t} has no element size")
    return prod(t.get_shape()) * size


@dataclass(frozen=True)
class Part:
    """One operator of a kernel: its ONNX type and the bytes it reads (§4.2's input)."""

    op_type: str
    input_bytes: int
    made_bytes: int = 0
    """Of `input_bytes`, what the part before it made (0 for a kernel's first part)."""

    @property
    def op_class(self) -> OpClass:
        return op_class(self.op_type)


def kernel_parts(op: OnnxOp) -> tuple[Part, ...]:
    """The operators a kernel computes, in order: a fused op's product, bias and activation
    (each reading what the one before made), or the op alone."""
    def reads(*values: SSAValue) -> int:
        return sum(value_bytes(v) for v in values)

    out = value_bytes(op.results[0]) if op.results else 0
    match op:
        case FusedConvOp() | FusedGemmOp():
            parts = [Part("Conv" if isinstance(op, FusedConvOp) else "Gemm", reads(*op.operands))]
        case FusedMatMulOp():
            parts = [Part("MatMul", reads(op.A, op.B))]
            if not is_none(op.Bias):
                parts.append(Part("Add", out + reads(op.Bias), out))
        case _:
            return (Part(op.onnx_type, reads(*op.operands)),)
    if op.activation.data:
        parts.append(Part(op.activation.data, out, out))
    return tuple(parts)


def kernel_capacity(parts: Sequence[Part], chunk_bytes: int,
                    ratios: Mapping[OpClass, float] = LOAD_RATIO) -> int:
    """
    C of a kernel of `parts` (a kernel, or a run of a kernel's parts as a split makes it):
    `load_capacity` of its `kernel_class` and the bytes it reads from outside it, as
    `flashmem-plan` takes a fused kernel's (§4.3, C_fused ≈ min(C_1, ..., C_k)).
    """
    reads = parts[0].input_bytes + sum(p.input_bytes - p.made_bytes for p in parts[1:])
    cls = kernel_class([p.op_type for p in parts], ratios)
    return load_capacity(cls, reads, chunk_bytes, ratios)


def kernels(function: func.FuncOp) -> list[OnnxOp]:
    """The function's kernels in execution order: its `onnx` ops that compute something on
    the device (a constant expression, such as `flashmem-split`'s column blocks, the host
    packs instead)."""
    return [op for op in function.body.ops
            if isinstance(op, OnnxOp) and not isinstance(op, OnnxConstantOp | NoneOp)
            and not (op.results and all(is_constant_expression(r) for r in op.results))]


def _is_weight(value: SSAValue) -> bool:
    """A kernel operand that the host packs into a texture of its own: an `onnx.Weight`,
    or a constant expression over one (inline `onnx.Constant`s are kernel arguments)."""
    owner = value.owner
    return isinstance(owner, WeightOp) or (
        isinstance(owner, OnnxOp) and not isinstance(owner, OnnxConstantOp)
        and is_constant_expression(value) and any(_is_weight(v) for v in owner.operands))


def _layer_name(op: Operation, layer: int) -> str:
    # imported here: the interpreter's import is slow, and only a run of the pass needs it
    from mobile_opt.reference.interpreter import describe_location

    where = describe_location(op.location)
    if where:
        return where
    hint = op.results[0].name_hint if op.results else None
    return hint or f"{op.name}#{layer}"


@dataclass(frozen=True)
class Graph:
    """A function as FlashMem's problem: `ops[l - 1]` is layer l."""

    ops: tuple[OnnxOp, ...]
    parts: tuple[tuple[Part, ...], ...]
    problem: Problem


def graph_problem(function: func.FuncOp, budget_bytes: int, chunk_bytes: int,
                  lambda_: float = 0.01, mu: float = 0.01,
                  ratios: Mapping[OpClass, float] = LOAD_RATIO) -> Graph | None:
    """
    The `Problem` of `function`, or None when it has no kernel or reads no `onnx.Weight`:
    layers are the kernels, weights the values they read that the host packs from
    `onnx.Weight`s (the weights, or constant expressions of them such as `flashmem-split`'s
    column blocks; inline `onnx.Constant`s are a few elements, passed as kernel arguments),
    a layer's activations
    the non-constant tensors live while it runs (from their producer, or the start for the
    arguments, to their last reader, or the end for the results), its class and capacity
    at the device's load `ratios` (`kernel_capacity`).
    """
    ops = kernels(function)
    if not ops:
        return None
    layer_of = {op: layer for layer, op in enumerate(ops, 1)}
    n = len(ops)

    def readers(value: SSAValue) -> list[int]:
        return [n if isinstance(use.operation, func.ReturnOp) else layer_of[use.operation]
                for use in value.uses
                if use.operation in layer_of or isinstance(use.operation, func.ReturnOp)]

    live = [0] * (n + 2)  # a difference array over layers 1..N
    values = [(1, a) for a in function.args] + [(layer_of[op], r) for op in ops
                                                 for r in op.results]
    for start, value in values:
        if isinstance(value.type, NoneType):
            continue
        end = max(readers(value), default=start)
        live[start] += value_bytes(value)
        live[end + 1] -= value_bytes(value)
    parts = tuple(kernel_parts(op) for op in ops)
    layers, running = [], 0
    for layer, (op, p) in enumerate(zip(ops, parts, strict=True), 1):
        running += live[layer]
        layers.append(Layer(_layer_name(op, layer), kernel_class([q.op_type for q in p], ratios),
                            running, kernel_capacity(p, chunk_bytes, ratios)))
    weights, seen = [], set()
    for op in function.body.ops:
        for value in op.results:
            if not _is_weight(value):
                continue
            used = [layer_of[u.operation] for u in value.uses if u.operation in layer_of]
            if not used:
                continue
            base = op.key.data if isinstance(op, WeightOp) else (
                value.name_hint or f"{op.name}#{len(weights)}")
            name, k = base, 1
            while name in seen:
                name, k = f"{base}#{k}", k + 1
            seen.add(name)
            weights.append(Weight(name, value_bytes(value), min(used), max(used)))
    if not weights:
        return None
    problem = Problem(layers, weights, budget_bytes, chunk_bytes, lambda_, mu)
    return Graph(tuple(ops), parts, problem)


# Splits and their penalty -------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    """A fused kernel cut into its parts but the last (v1) and the last (v2)."""

    layer: int
    fused: int
    """C_fused, in chunks."""
    first: int
    """C_{v1}."""
    second: int
    """C_{v2}."""

    @property
    def gain(self) -> int:
        """The chunks the split adds: C_{v1} + C_{v2} - C_fused (§4.3)."""
        return self.first + self.second - self.fused

    @classmethod
    def of(cls, layer: int, parts: Sequence[Part], chunk_bytes: int, alpha: float,
           ratios: Mapping[OpClass, float] = LOAD_RATIO) -> Self | None:
        """The split of a kernel of `parts` at `layer`, if it may be split: it has two parts
        or more, none hierarchical (§4.3's rule 2), and it gains capacity by the α rule, at
        the device's load `ratios`."""
        if len(parts) < 2 or any(p.op_class == OpClass.HIERARCHICAL for p in parts):
            return None
        split = cls(layer, *(kernel_capacity(p, chunk_bytes, ratios)
                             for p in (parts, parts[:-1], parts[-1:])))
        if split.gain <= 0 or split.first + split.second < (1 + alpha) * split.fused:
            return None
        return split


@dataclass(frozen=True)
class Forced:
    """What keeping C3 forces on a plan's chunks over capacity (§4.3's penalty terms)."""

    preloaded: int
    """|W_new|: bytes of the weights that find no capacity in their window."""
    distance: int
    """Δz: Σ B(w) times the layers each weight's load moves earlier."""

    def cost(self, problem: Problem) -> float:
        """λ |W_new| + μ Δz, weighed as `flashmem.cost` weighs W and the distance."""
        return problem.lambda_ * self.preloaded + problem.mu * self.distance / problem.n


class Residual:
    """A plan's chunks over capacity, by weight, and every layer's capacity left."""

    def __init__(self, problem: Problem, plan: Plan):
        self.problem, self.plan = problem, plan
        r = replay(problem, plan)
        self.over = sum(r.over_capacity.values())
        self.free = [0] + [max(0, (problem.capacity(layer) or 0) - r.moved[layer])
                           for layer in range(1, problem.n + 1)]
        starved: dict[str, int] = {}
        for layer, excess in r.over_capacity.items():
            # the layer's excess is charged to its largest movers first
            movers = sorted(((wp.moves.get(layer, 0), name)
                             for name, wp in plan.weights.items()), reverse=True)
            for moved, name in movers:
                if excess == 0 or moved == 0:
                    break
                take = min(moved, excess)
                starved[name] = starved.get(name, 0) + take
                excess -= take
        by_name = {w.name: w for w in problem.weights}
        self.starved = sorted(((by_name[name], c) for name, c in starved.items()),
                              key=lambda wc: (wc[0].first_use, wc[0].name))

    def window(self, w: Weight) -> range:
        """The layers where the solver may move w's chunks."""
        return range(max(1, w.first_use - WINDOW), w.first_use)

    def forced(self, extra: Mapping[int, int]) -> Forced:
        """
        C3 kept with `extra` chunks of capacity at some layers: each weight's chunks over
        capacity, earliest first use first, take the capacity left at the latest layers of
        its window, and its load moves earlier to the first of them; a weight that finds
        too little is preloaded.
        """
        free = list(self.free)
        for layer, gain in extra.items():
            free[layer] += gain
        preloaded = distance = 0
        for w, chunks in self.starved:
            taken = {}
            for layer in reversed(self.window(w)):
                take = min(chunks, free[layer])
                if take:
                    taken[layer] = take
                    chunks -= take
                if chunks == 0:
                    break
            if chunks:
                preloaded += w.bytes
                continue
            for layer, take in taken.items():
                free[layer] -= take
            distance += w.bytes * max(0, self.plan.weights[w.name].load - min(taken))
        return Forced(preloaded, distance)


@dataclass(frozen=True)
class Candidate:
    """A split chosen, and what its capacity saves: Penalty(v_fused) and its two terms."""

    split: Split
    penalty: float
    preload_saved: int
    distance_saved: int


def choose(problem: Problem, residual: Residual, splits: Sequence[Split]) -> list[Candidate]:
    """
    The splits to make, greedily: the one whose gain saves most of `residual.forced`
    (Penalty, then preloaded bytes, then the latest: nearest the first uses), then the next
    given the capacity the first gained, while one still saves something.
    """
    in_window = {layer for w, _ in residual.starved for layer in residual.window(w)}
    left = [s for s in splits if s.layer in in_window]
    extra: dict[int, int] = {}
    base = residual.forced(extra)
    chosen = []
    while left and (base.preloaded or base.distance):
        scored = []
        for s in left:
            after = residual.forced({**extra, s.layer: s.gain})
            saved = (base.cost(problem) - after.cost(problem), base.preloaded - after.preloaded)
            scored.append((saved, s.layer, s, after))
        (penalty, preload), _, best, after = max(scored, key=lambda x: (x[0], x[1]))
        if penalty < 0 or (penalty, preload) <= (0, 0):
            break
        chosen.append(Candidate(best, penalty, preload, base.distance - after.distance))
        extra[best.layer] = best.gain
        left.remove(best)
        base = after
    return chosen


# The rewrite --------------------------------------------------------------------------


def split_kernel(op: OnnxOp, reason: str) -> None:
    """
    Replace a fused kernel (`FusedConv`, `FusedGemm` or `FusedMatMul` of two parts or more)
    by its parts but the last, and the last, both recording `reason`. The last keeps the
    kernel's result name; the first's is that name with its part's, e.g. `%y_conv`.
    """
    if not isinstance(op, FusedConvOp | FusedGemmOp | FusedMatMulOp) or len(kernel_parts(op)) < 2:
        raise ValueError(f"{op.name}: not a fused kernel of two parts or more")
    act, y = op.activation.data, op.results[0]
    if isinstance(op, FusedMatMulOp):
        part = "matmul"
        if act and not is_none(op.Bias):
            first = FusedMatMulOp.create(operands=list(op.operands), result_types=[y.type])
        else:
            first = MatMulOp.create(operands=[op.A, op.B], result_types=[y.type])
    else:
        part, cls = ("conv", ConvOp) if isinstance(op, FusedConvOp) else ("gemm", GemmOp)
        props = {k: v for k, v in op.properties.items()
                 if k not in ("activation", "activation_params")}
        first = cls.create(operands=list(op.operands), result_types=[y.type], properties=props)
    if act:
        second = activation_op(act, op.floats_attr("activation_params") or (), first.results[0])
    else:  # a bias-only FusedMatMul
        second = [AddOp.create(operands=[first.results[0], op.Bias], result_types=[y.type])]
    first.results[0].name_hint = f"{y.name_hint or 'y'}_{part}"
    second[-1].results[0].name_hint = y.name_hint
    for new in (first, second[-1]):
        new.location = op.location
        new.attributes[SPLIT] = StringAttr(reason)
    Rewriter.replace_op(op, [first, *second], [second[-1].results[0]])


def _reason(c: Candidate, alpha: float) -> str:
    """`flashmem.split`'s text: C_fused -> C_{v1} + C_{v2} by the α rule, then Penalty with
    its two terms as the split saves them."""
    s = c.split
    return (f"capacity {s.fused} -> {s.first} + {s.second} chunks, alpha {alpha:g}; "
            f"penalty {c.penalty:.6g} (W_new {c.preload_saved} B, "
            f"dz {c.distance_saved} B*layers)")


# The pass -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """A plan and how it is compared: chunks over capacity first, then its cost."""

    graph: Graph
    plan: Plan
    residual: Residual

    @property
    def key(self) -> tuple[int, float]:
        return self.residual.over, flashmem.cost(self.graph.problem, self.plan)

    def describe(self) -> str:
        over, cost = self.key
        p, problem = self.plan, self.graph.problem
        where = ", ".join(f"'{problem.layer_name(layer)}' {c}" for layer, c
                          in sorted(replay(problem, p).over_capacity.items()))
        return (f"{problem.n} layers, plan {p.source} ({p.status.value}), peak {p.peak} B, "
                f"{over} chunks over capacity{f' ({where})' if where else ''}, cost {cost:.6g}")


@dataclass(frozen=True)
class FlashMemFusePass(LambdaOption):
    """
    Splits fused kernels whose load capacity the overlap plan needs (FlashMem §4.3); see
    the module's docstring.
    """

    name = "flashmem-fuse"

    budget_mb: int | float
    """The memory the run may hold, in MiB (`flashmem.Problem.budget_bytes`)."""

    chunk_kb: int | float = 64
    """S, the chunk size, in KiB."""

    alpha: int | float = 0.2
    """α: a split must give at least (1 + α) times the fused kernel's capacity."""

    lambda_: int | float = 0.01
    """λ, per preloaded byte (the spec's `lambda`)."""

    mu: int | float = 0.01
    """μ, per byte held a layer before its first use."""

    time_limit_s: int | float = 10
    """Each plan's CP-SAT time limit, in seconds."""

    workers: int = 1
    """CP-SAT's workers; 1 gives the same plan, and so the same splits, every run."""

    explain: bool = False
    """Print each round's plan, candidates and splits to stderr (`mobile-opt --explain`)."""

    device: str = ""
    """The device profile whose measured load ratios give C_l (`mobile-probe`), as
    `flashmem-plan`'s; none: §4.2's."""

    def __post_init__(self) -> None:
        for option, value in (("budget-mb", self.budget_mb), ("chunk-kb", self.chunk_kb),
                              ("time-limit-s", self.time_limit_s), ("workers", self.workers)):
            if value <= 0:
                raise ValueError(f"flashmem-fuse: {option} must be positive, not {value}")
        for option, value in (("alpha", self.alpha), ("lambda", self.lambda_), ("mu", self.mu)):
            if value < 0:
                raise ValueError(f"flashmem-fuse: {option} must not be negative, not {value}")
        if self.chunk_bytes < 1:
            raise ValueError(f"flashmem-fuse: chunk-kb {self.chunk_kb} is under a byte")

    @property
    def chunk_bytes(self) -> int:
        return round(self.chunk_kb * 1024)

    @property
    def budget_bytes(self) -> int:
        return round(self.budget_mb * MB)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            ratios = load_ratios(load_profile(self.device) if self.device else None)
        except ProfileError as e:
            raise DiagnosticException(f"flashmem-fuse: {e}") from None
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            self._refine(function, ratios)

    def _outcome(self, function: func.FuncOp, ratios: Mapping[OpClass, float]
                 ) -> Outcome | None:
        graph = graph_problem(function, self.budget_bytes, self.chunk_bytes, self.lambda_,
                              self.mu, ratios)
        if graph is None:
            return None
        try:
            plan = flashmem.plan(graph.problem, self.time_limit_s, self.workers)
        except (BudgetError, PlanError) as e:
            raise DiagnosticException(f"flashmem-fuse: @{function.sym_name.data}: {e}") from None
        return Outcome(graph, plan, Residual(graph.problem, plan))

    def _say(self, text: str) -> None:
        if self.explain:
            print(text, file=sys.stderr)

    def _refine(self, function: func.FuncOp, ratios: Mapping[OpClass, float]) -> None:
        current = self._outcome(function, ratios)
        if current is None:
            return
        self._say(f"flashmem-fuse @{function.sym_name.data}: {current.describe()}")
        round_ = 0
        while current.residual.over:
            round_ += 1
            graph = current.graph
            splits = [s for layer, parts in enumerate(graph.parts, 1)
                      if (s := Split.of(layer, parts, self.chunk_bytes, self.alpha, ratios))]
            chosen = choose(graph.problem, current.residual, splits)
            for c in chosen:
                s = c.split
                self._say(f"  round {round_}: split layer {s.layer} "
                          f"('{graph.problem.layer_name(s.layer)}'): {_reason(c, self.alpha)}")
            if not chosen:
                self._say(f"  round {round_}: no fused kernel qualifies")
                return
            trial = function.clone()
            ops = kernels(trial)
            for c in chosen:
                split_kernel(ops[c.split.layer - 1], _reason(c, self.alpha))
            after = self._outcome(trial, ratios)
            assert after is not None
            self._say(f"  round {round_}: {after.describe()}")
            if after.key >= current.key:
                self._say(f"  round {round_}: no better; its splits are undone")
                return
            Rewriter.replace_op(function, trial)
            function, current = trial, after


__all__ = [
    "SPLIT",
    "Candidate",
    "FlashMemFusePass",
    "Forced",
    "Graph",
    "Part",
    "Residual",
    "Split",
    "choose",
    "graph_problem",
    "kernel_capacity",
    "kernel_parts",
    "kernels",
    "split_kernel",
]

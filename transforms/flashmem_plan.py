"""
`flashmem-plan{budget-mb chunk-kb lambda mu time-limit-s}`: FlashMem's overlap plan
(issue 21) for a lowered module (after `onnx-to-texture,texture-to-ocl`), recorded for the
streaming runtime to follow.

The host function's kernel launches are the layers 1..N. Each weight is a `texture.pack`
of a constant expression: its device bytes are its texture's, cut into chunks of
`chunk-kb` KiB of that texture's pixel rows as the weight store holds them
(`backends/opencl/weight_store.py`). Every layer holds the activation arena: the transient
slots the host plan allocates for the whole run (`models/storage.py`). A layer's load
capacity C_l comes from its kernel's operator class (§4.2; a fused kernel takes its
parts' least class), its input bytes and the class's load ratio: measured in the profile
`device` (`mobile-probe`'s load-capacity probe), else §4.2's. `models/flashmem.plan` solves the LC-OPG model
(tiers, checker); the plan that it returns is checked again here by `flashmem.check`.

It records `stream.plan = #stream.plan<...>` on the module (S, the budget, N, the status)
and `stream.weight_plan = #stream.weight_plan<...>` on each weight's `texture.pack`. A
budget that no plan fits is one line naming the layer that needs most and the least
budget that works.
"""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects import texture
from mobile_opt.dialects.onnx.constants import WeightOp
from mobile_opt.dialects.stream.attributes import PLAN, WEIGHT_PLAN
from mobile_opt.dialects.stream.ops import streamed_from
from mobile_opt.models import flashmem
from mobile_opt.models.device_profile import ProfileError, load_profile
from mobile_opt.models.storage import HostStorage, host_storage

MB = flashmem.MB
_PART = re.compile(r"node '((?:[^']|'(?! \())*)' \((\w+)\)|op onnx\.(\w+)")


def kernel_parts(label: str) -> list[tuple[str, str]]:
    """(node name, op type) of each part of a kernel's `onnx.node` label, as
    `onnx-to-texture` writes it: "node 'c' (Conv) + node 'r' (Relu)"; "op onnx.Relu" for
    a node without a name ("" for its name)."""
    return [(name, a or b) for name, a, b in _PART.findall(label)]


def weight_name(pack: texture.PackOp, index: int) -> str:
    """A weight's name in the problem: its store key (or value name) and layout."""
    owner = pack.source.owner
    base = owner.key.data if isinstance(owner, WeightOp) else (pack.source.name_hint or "const")
    return f"{base}@{pack.layout.data.value}#{index}"


def flashmem_problem(function: func.FuncOp, budget_bytes: int, chunk_bytes: int,
                     lambda_: float = 0.01, mu: float = 0.01,
                     kernels: dict[str, object] | None = None,
                     ratios: Mapping[flashmem.OpClass, float] = flashmem.LOAD_RATIO,
                     ) -> tuple[flashmem.Problem, dict[str, texture.PackOp], HostStorage]:
    """
    The FlashMem problem of a lowered host function, the pack of each weight by name, and
    its storage. `kernels` maps kernel names to their `ocl.kernel` ops (for op classes);
    `ratios` are the device's load ratios per class (`flashmem.load_ratios`).
    """
    storage = host_storage(function)
    launches = storage.launches
    n = len(launches)
    if n == 0:
        raise DiagnosticException(f"flashmem-plan: @{function.sym_name.data} launches no kernel")
    arena = storage.arena_bytes()
    first_launch: dict[object, int] = {}
    last_launch: dict[object, int] = {}
    for layer, (_, op) in enumerate(launches, 1):
        for v in op.args:
            first_launch.setdefault(v, layer)
            last_launch[v] = layer
    resident = 0  # constants no kernel reads (an output that is a constant): held all run
    weights, packs = [], {}
    for value, s in storage.values.items():
        if not s.permanent:
            continue
        if value not in first_launch:
            resident += s.nbytes
            continue
        # a weight also unpacked (a constant output) stays to the end of the run
        last = n if s.last_use > launches[last_launch[value] - 1][0] else last_launch[value]
        pack = value.owner
        if not isinstance(pack, texture.PackOp):
            load = streamed_from(value)
            source = load.weight.name_hint if load is not None else None
            raise DiagnosticException(
                f"flashmem-plan: weight {source or value.name_hint or s.value} already streams "
                "(flashmem-stream ran): plan the module before it")
        name = weight_name(pack, len(weights))
        weights.append(flashmem.Weight(name, s.nbytes, first_launch[value], last))
        packs[name] = pack
    layers = []
    for layer, (_, op) in enumerate(launches, 1):
        kernel = (kernels or {}).get(op.kernel.root_reference.data)
        label = kernel.attributes.get("onnx.node") if kernel is not None else None
        parts = kernel_parts(label.data) if isinstance(label, StringAttr) else []
        cls = flashmem.kernel_class([t for _, t in parts], ratios)
        kernel_name = op.kernel.root_reference.data
        name = " + ".join(n for n, _ in parts if n) or kernel_name
        # a kernel's inputs: the storage it reads that it did not allocate itself
        inputs = sum(storage.values[v].nbytes for v in set(op.args) if v in storage.values
                     and not (isinstance(v.owner, texture.AllocOp)
                              and first_launch[v] == layer))
        layers.append(flashmem.Layer(name, cls, arena + resident,
                                     flashmem.load_capacity(cls, inputs, chunk_bytes, ratios)))
    problem = flashmem.Problem(layers, weights, budget_bytes, chunk_bytes, lambda_, mu)
    return problem, packs, storage


class LambdaOption(ModulePass, ABC):
    """A pass with FlashMem's λ: the option `lambda`, a Python keyword, is the field `lambda_`."""

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        renamed = {("lambda_" if k == "lambda" else k): v for k, v in spec.parameters.items()}
        return super().from_spec(ArgSpec(spec.name, renamed))

    def spec(self, *, include_default: bool = False) -> ArgSpec:
        spec = super().spec(include_default=include_default)
        return ArgSpec(spec.name, {("lambda" if k == "lambda_" else k): v
                                   for k, v in spec.parameters.items()})


@dataclass(frozen=True)
class FlashMemPlanPass(LambdaOption):
    """Plan which weights stream, and when their chunks move (see the module docstring)."""

    name = "flashmem-plan"

    budget_mb: float = 0.0
    """The bytes the run may hold (weights, activations, staging), in MiB; required."""
    chunk_kb: int = 256
    """S, the chunk size, in KiB."""
    lambda_: float = 0.01
    mu: float = 0.01
    time_limit_s: float = 60.0
    workers: int = 8
    function: str = "main_graph"
    device: str = ""
    """The device profile whose measured load ratios give C_l (`mobile-probe`); none: §4.2's."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.budget_mb <= 0:
            raise DiagnosticException("flashmem-plan: budget-mb is required and positive")
        if self.chunk_kb < 1:
            raise DiagnosticException("flashmem-plan: chunk-kb is at least 1")
        function = next((f for f in op.body.block.ops if isinstance(f, func.FuncOp)
                         and f.sym_name.data == self.function), None)
        if function is None:
            raise DiagnosticException(f"flashmem-plan: the module has no @{self.function}")
        kernels = {k.sym_name.data: k for k in op.body.block.ops
                   if k.name == "ocl.kernel"}
        budget = round(self.budget_mb * MB)
        try:
            ratios = flashmem.load_ratios(load_profile(self.device) if self.device else None)
        except ProfileError as e:
            raise DiagnosticException(f"flashmem-plan: {e}") from None
        problem, packs, _ = flashmem_problem(function, budget, self.chunk_kb * 1024,
                                             self.lambda_, self.mu, kernels, ratios)
        try:
            plan = flashmem.plan(problem, self.time_limit_s, self.workers)
            flashmem.check(problem, plan)
        except (flashmem.BudgetError, flashmem.PlanError) as e:
            raise DiagnosticException(f"flashmem-plan: {e}") from None
        head, weights = flashmem.plan_attributes(problem, plan)
        op.attributes[PLAN] = head
        for name, attr in weights.items():
            packs[name].attributes[WEIGHT_PLAN] = attr

"""
CDMPP as `texture-tile`'s cost model (`cost-model=cdmpp`): a configuration's predicted
latency is the shipped predictor's (`models/cdmpp.py`) over the compact ASTs of the kernels
the node compiles to under it. The node is lowered alone, as `mobile-tune` builds it to
measure (tensors in images; `select-layouts`, `onnx-to-texture`, `texture-to-ocl`, `ace`
with its `cse`), once per thread tile, layout and blocked plan: a work group is only a launch
parameter, so the configurations that differ in it share the lowering, and each kernel is
walked once for all its launches. `select-layouts` runs once per streamed layout (and
blocked or not), what it depends on for a configured op alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from mobile_opt.dialects import ocl
from mobile_opt.dialects.onnx.graph import ONNX_NAME
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.models.cdmpp import Ensemble, Predictor
from mobile_opt.models.cdmpp_features import KernelLeaves, device_features
from mobile_opt.reference.interpreter import describe_location
from mobile_opt.transforms.ace import AddressCalculationEliminationPass
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.transforms.onnx_to_texture.nodes import names_node
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from mobile_opt.transforms.texture_to_ocl import TextureToOclPass


def single_node_module(node: Operation) -> ModuleOp:
    """
    A module whose `@main_graph` computes `node` alone: its constants and weights (ops of
    no operands) cloned, its other operands graph inputs, its results the graph's outputs.
    """
    inputs = [v for v in node.operands
              if not (isinstance(v.owner, Operation) and not v.owner.operands)]
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for value in node.operands:
        if value not in mapping:
            weight = value.owner.clone()
            block.add_op(weight)
            mapping[value] = weight.results[0]
    copy = node.clone(value_mapper=mapping)
    block.add_op(copy)
    block.add_op(func.ReturnOp(*copy.results))
    names = lambda prefix, count: ArrayAttr([  # noqa: E731
        DictionaryAttr({ONNX_NAME: StringAttr(f"{prefix}{i}")}) for i in range(count)])
    function = func.FuncOp("main_graph", ([v.type for v in inputs],
                                          [r.type for r in node.results]),
                           Region(block), arg_attrs=names("input_", len(inputs)),
                           res_attrs=names("output_", len(node.results)))
    return ModuleOp([function])


def lowering_passes(profile: str, max_image: tuple[int, int], blocked: bool) -> list:
    """The passes after `texture-tile` of a GPU compile with tensors in images
    (`pipelines.gpu_pipeline("onnx-to-texture{buffers=false}")`, less the graph passes and
    the trailing `cse`: `ace` ends with one, so the second finds nothing, and it took a
    fifth of the lowering's time)."""
    width, height = max_image
    return [SelectLayoutsPass(target="gpu", solver="gcd2", device=profile,
                              max_image_width=width, max_image_height=height),
            OnnxToTexturePass(max_image_width=width, max_image_height=height, buffers=False,
                              blocked=blocked, remarks=False),
            TextureToOclPass(), AddressCalculationEliminationPass()]


def node_kernels(module: ModuleOp, node: str
                 ) -> list[tuple[ocl.KernelOp, tuple[int, ...], tuple[int, ...] | None]]:
    """The kernels a lowered module launches for node `node` (its ONNX name), in launch
    order, each with its global and local size as built."""
    kernels = {op.sym_name.data: op for op in module.walk() if isinstance(op, ocl.KernelOp)}
    found = []
    for op in module.walk():
        if isinstance(op, ocl.LaunchOp):
            kernel = kernels[op.kernel.root_reference.data]
            label = kernel.attributes.get("onnx.node")
            if isinstance(label, StringAttr) and names_node(label.data, node):
                local = op.local_size.get_values() if op.local_size is not None else None
                found.append((kernel, tuple(op.global_size.get_values()),
                              tuple(local) if local is not None else None))
    return found


@dataclass
class CdmppCost:
    """CDMPP's latency (seconds) of one node's configurations, as a `CostModel` of them."""

    predictor: Predictor | Ensemble
    profile: dict
    profile_name: str
    node: Operation
    blocked: bool
    max_image: tuple[int, int]
    name = "cdmpp"
    unit = "seconds"
    _lowered: dict[TileConfig, list] = field(default_factory=dict)
    _selected: dict[tuple, ModuleOp] = field(default_factory=dict)
    """The module after `select-layouts`, by what the selection depends on."""

    def __post_init__(self) -> None:
        self._device = device_features(self.profile)
        self._cores = self.profile["compute"]["cores"]
        self._alone = single_node_module(self.node)
        self._label = describe_location(self.node.location) or self.node.name

    def kernels(self, config: TileConfig) -> list:
        """The node's kernels under `config` (lowered once per configuration less its group,
        each walked once: `KernelLeaves`), each with the global and local size it runs
        with."""
        key = replace(config, group=None)
        if key not in self._lowered:
            select, *rest = lowering_passes(self.profile_name, self.max_image, self.blocked)
            # a configured op keeps the local rules' layout whatever its tile: the selection
            # depends on the streamed operand's layout and on being blocked alone
            chosen = (key.layout, key.plan is None)
            if chosen not in self._selected:
                self._selected[chosen] = self._configured(self._alone, key)
                select.apply(Context(allow_unregistered=True), self._selected[chosen])
            module = self._configured(self._selected[chosen], key)
            for p in rest:
                p.apply(Context(allow_unregistered=True), module)
            self._lowered[key] = [(KernelLeaves.of(k), g, local)
                                  for k, g, local in node_kernels(module, self._label)]
        if config.plan is not None:  # a blocked plan launches as built
            return self._lowered[key]
        return [(k, g, config.group) for k, g, _ in self._lowered[key]]

    def _configured(self, module: ModuleOp, config: TileConfig) -> ModuleOp:
        """A copy of `module` whose node has `config`."""
        module = module.clone()
        config.apply(next(op for op in module.walk() if op.name == self.node.name))
        return module

    def costs(self, candidates: list[TileConfig]) -> np.ndarray:
        """The candidates' costs, their kernels predicted in batches."""
        asts, owner = [], []
        for i, candidate in enumerate(candidates):
            for leaves, global_size, local_size in self.kernels(candidate):
                asts.append(leaves.launched(global_size, local_size, self._cores))
                owner.append(i)
        total = np.zeros(len(candidates))
        np.add.at(total, owner, self.predictor.seconds_of(asts, self._device))
        return total

    def cost(self, candidate: TileConfig) -> float:
        return float(self.costs([candidate])[0])

    def choose(self, configs: list[TileConfig]) -> TileConfig:
        return configs[int(np.argmin(self.costs(configs)))]

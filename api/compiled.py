"""
`compile` a model for the GPU (OpenCL) or the DSP (Hexagon HVX), run the `Compiled`
model, `Compiled.save` it and `load` it back.

The saved form is, for now, the folder layout that `mobile-run --save-dir` writes (a
versioned package format will replace it), written as one set (`files.staged_save_dir`);
`Compiled.save` lists its files. Its weights stay where the model keeps them
(`dialects/weights.py`).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import onnx
from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, ModuleOp

from mobile_opt import pipelines
from mobile_opt.api.errors import USER_ERRORS, one_line, user_error
from mobile_opt.api.files import staged_save_dir, write_atomically
from mobile_opt.checking import format_table
from mobile_opt.dialects.dominance import verify_dominance
from mobile_opt.dialects.limits import LimitedParser, LimitError, parse_size
from mobile_opt.dialects.onnx.constants import WeightOp
from mobile_opt.dialects.weights import derived_weight_dir
from mobile_opt.frontend.errors import UserError, check_input_file
from mobile_opt.frontend.onnx_import import import_onnx

if TYPE_CHECKING:
    from mobile_opt.backends.opencl.devices import DeviceInfo
    from mobile_opt.backends.opencl.executor import CompiledModel, KernelTime, RunResult
    from mobile_opt.backends.opencl.plan import Plan
    from mobile_opt.backends.hexagon.runner import Port

Target = Literal["gpu", "dsp"]
"""Where a model runs: `gpu`, OpenCL (images or buffers); `dsp`, Hexagon HVX under QEMU."""

ModelSource = str | Path | onnx.ModelProto | ModuleOp
"""What `compile` takes: an `.onnx` file, `.mlir` IR (imported or lowered), an ONNX
model in memory, or a module already imported (compiled in place)."""

KERNEL_TABLE_ROWS = 15
"""Rows of the report's kernel table before the rest are summed."""

SAVED = "compiled.json"
"""The saved model's settings file (`Compiled.save`)."""


# the model ---------------------------------------------------------------------------
def read_model(model: ModelSource, dims: Mapping[str, int] | None = None,
               ctx: Context | None = None) -> tuple[Path | None, ModuleOp]:
    """
    The file behind `model` (None for a module given) and its module as imported: an
    `.onnx` file imported (`dims` sizing its dynamic dims), `.mlir` parsed and verified,
    an in-memory model written first to a file named by its contents under the derived
    weight folder (its weights are read from a file by reference).

    Raises:
        UserError: The model cannot be read or imported.
    """
    if isinstance(model, ModuleOp):
        return None, model
    if isinstance(model, onnx.ModelProto):
        data = model.SerializeToString()
        path = derived_weight_dir() / "models" / f"{hashlib.sha256(data).hexdigest()[:24]}.onnx"
        if not path.is_file():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise UserError(f"cannot write: {e.strerror}", path.parent) from None
            write_atomically(path, data)
    else:
        path = Path(model)
    if path.suffix not in (".onnx", ".mlir"):
        raise UserError("expected an .onnx or .mlir file", path)
    if dims and path.suffix == ".mlir":
        raise UserError("--dim applies to .onnx models only")
    try:
        if path.suffix == ".onnx":
            return path, import_onnx(path, dims=dims)
        return path, _parse_mlir(path, ctx or pipelines.context())
    except USER_ERRORS as e:
        raise user_error(e, path) from None


def _parse_mlir(path: Path, ctx: Context) -> ModuleOp:
    try:
        text = check_input_file(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError("not UTF-8 text", path) from None
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", path) from None
    try:
        module = LimitedParser(ctx, text, str(path)).parse_module()
        verify_dominance(module)  # first: the verifier's shape rules walk operands
        module.verify()
    except RecursionError:
        raise UserError("nesting too deep", path) from None
    return module


def _device(device: str | DeviceInfo | None) -> tuple[DeviceInfo, list[str]]:
    """The OpenCL device `device` names (None: the default one) and remarks on the choice."""
    # first: it points the ICD loader at pip-installed runtimes before pyopencl loads
    from mobile_opt.backends.opencl.devices import DeviceError, named_or_default

    if device is not None and not isinstance(device, str):
        return device, []
    try:
        info, remark = named_or_default(device)
    except DeviceError as e:
        raise UserError(str(e)) from None
    return info, [remark] if remark else []


def _budget(memory_budget: int | str | None) -> int | None:
    if memory_budget is None or isinstance(memory_budget, int):
        return memory_budget
    try:
        return parse_size(memory_budget, "memory budget")
    except LimitError as e:
        raise UserError(str(e)) from None


# compiling ---------------------------------------------------------------------------
def compile(  # noqa: A001 - the API's verb, as `mobile_opt.compile`
    model: ModelSource,
    target: Target = "gpu",
    *,
    device: str | DeviceInfo | None = None,
    dims: Mapping[str, int] | None = None,
    fp16: bool = False,
    memory_budget: int | str | None = None,
    solver: str = "gcd2",
    passes: str | None = None,
    function: str = "main_graph",
    layout: str = "auto",
    packing: str = "sda",
    count_packets: bool = False,
    chunk_kb: int = 256,
    time_limit: float = 60.0,
    build: bool = True,
) -> Compiled:
    """
    Compile `model` for `target` with the pipeline `pipelines.py` builds for it.

    Args:
        model: An `.onnx` file, `.mlir` IR (a lowered module takes only `passes`), an
            `onnx.ModelProto`, or an imported `ModuleOp` (compiled in place).
        target: `gpu` (OpenCL) or `dsp` (Hexagon HVX, a quantized model).
        device: GPU: `pocl`, `gpu`, `cpu`, a platform or device name substring, or a
            `DeviceInfo`; None for the default device (PoCL, or the Intel CPU runtime
            where PoCL cannot compile for the CPU).
        dims: Sizes of dynamic input dims: `NAME` or `INPUT:AXIS` to a size.
        fp16: GPU: store every tensor as half (kernels still compute in float).
        memory_budget: GPU: stream the weights within this many bytes of device memory
            (an int, or a size such as `"200MB"`), planned by `flashmem-plan`.
        solver: How `select-layouts` chooses every layout (`models/solvers.py`).
        passes: Graph passes to run first (a `-p` spec); None for the default ones
            (`pipelines.GRAPH_PASSES` on the GPU, none on the DSP).
        function: The graph function to compile and run.
        layout: DSP: the SIMD layout of every operator, or `auto`.
        packing: DSP: the VLIW packing (`sda`, ..., or the printer's `greedy`, `single`).
        count_packets: DSP: run one packet at a time and count each kernel's packets.
        chunk_kb: With `memory_budget`: the streaming chunk in KiB.
        time_limit: With `memory_budget`: the planner's time limit in seconds.
        build: GPU: build the program and load the weights now; False leaves that to
            the first `Compiled.run`.

    Returns:
        The compiled model.

    Raises:
        UserError: The model, its options or its device are at fault; names the file and
            the ONNX node where there is one.
    """
    if target not in ("gpu", "dsp"):
        raise UserError(f"target must be 'gpu' or 'dsp', not {target!r}")
    budget = _budget(memory_budget)
    if target == "dsp":
        for option, given in (("device", device), ("fp16", fp16), ("memory_budget", budget)):
            if given:
                raise UserError(f"{option} does not apply to the dsp target")
        return _compile_dsp(model, dims, solver, passes, function, layout, packing,
                            count_packets)
    ctx = pipelines.context()
    path, module = read_model(model, dims, ctx)
    imported = module.clone()
    info, remarks = _device(device)
    stream = None
    if budget is not None:
        from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass

        stream = FlashMemPlanPass(budget_mb=budget / (1 << 20), chunk_kb=chunk_kb,
                                  time_limit_s=time_limit, function=function)
    started = time.perf_counter()
    try:
        storage_f16 = _lower_gpu(module, info, fp16, passes, solver, stream, ctx)
    except USER_ERRORS as e:  # a pass diagnostic names the node: add the file
        raise user_error(e, path) from None
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None
    compile_seconds = time.perf_counter() - started

    from mobile_opt.backends.opencl.plan import PlanError, build_plan

    try:
        plan = build_plan(module, function)
    except (PlanError, *USER_ERRORS) as e:
        raise user_error(e, path) from None
    compiled = Compiled("gpu", module, imported, path, function, info, plan,
                        remarks + plan.remarks, fp16=storage_f16, solver=solver,
                        memory_budget=budget, compile_seconds=compile_seconds)
    if build:
        compiled.build()
    return compiled


def _lower_gpu(module: ModuleOp, device: DeviceInfo, fp16: bool, passes: str | None,
               solver: str, stream: Any, ctx: Context) -> bool:
    """Lower `module` in place for `device`; whether it stores tensors as half. A `stream`
    (`flashmem-plan`) plans weight streaming last, realised by `flashmem-stream`."""
    from mobile_opt.backends.opencl.plan import is_lowered
    from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass

    if is_lowered(module):  # lowered IR: only the passes given (and the streaming plan)
        if fp16:
            raise UserError("--fp16 applies to a model that is not lowered yet")
        if passes:
            pipelines.apply(module, pipelines.parse_passes(passes), ctx)
        if stream is not None:
            pipelines.apply(module, [stream, FlashMemStreamPass()], ctx)
        return any(
            isinstance(getattr(op.result.type, "element_type", None), Float16Type)
            for op in module.walk()
            if op.name in ("texture.alloc", "texture.pack")
        )
    spec = pipelines.GRAPH_PASSES if passes is None else passes
    steps, lowering = pipelines.gpu_pipeline(spec, device, fp16, solver=solver, stream=stream)
    pipelines.apply(module, steps, ctx)
    return lowering.storage == "f16"


def _compile_dsp(model: ModelSource, dims: Mapping[str, int] | None, solver: str,
                 passes: str | None, function: str, layout: str, packing: str,
                 count_packets: bool) -> Compiled:
    from mobile_opt.backends.hexagon.runner import ports

    ctx = pipelines.context()
    path, module = read_model(model, dims, ctx)
    imported = module.clone()
    started = time.perf_counter()
    try:
        steps = pipelines.dsp_pipeline(passes or "", layout, function, packing, solver=solver)
        pipelines.apply(module, steps, ctx)
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None
    except USER_ERRORS as e:  # a lowering diagnostic names the node: add the file
        raise user_error(e, path) from None
    return Compiled("dsp", module, imported, path, function, None, ports(module), [],
                    solver=solver, layout=layout, packing=packing,
                    count_packets=count_packets,
                    compile_seconds=time.perf_counter() - started)


# the compiled model ------------------------------------------------------------------
@dataclass(frozen=True)
class Report:
    """
    What compiling and the runs so far took, and what was chosen: the data of
    `mobile-run`'s report, and its printable form (`str(report)`: `header()`, then
    `body()`).

    Attributes:
        target: `gpu` or `dsp`.
        device: The device, described.
        fp16: GPU: whether tensors are stored as half.
        solver: The layout solver that chose the layouts.
        compile_seconds: The passes' time.
        build_seconds: GPU: building the program and loading the weights (None before
            the first build).
        runs: The runs timed so far.
        kernels: GPU: each launch in program order (kernel, ONNX nodes, seconds: the
            median over runs 2..N, or run 1 alone).
        wall_seconds: Each run's wall time (GPU: inputs packed to outputs on the host;
            DSP: assembling and running under QEMU).
        memory: GPU: the host plan's storage (`Plan.memory`); None on the DSP.
        memory_text: GPU: that storage said in one line.
        packets: DSP, with `count_packets`: the packets each kernel executed in the
            last run.
        choices: Per launch (GPU) the kernel and its ONNX nodes; the DSP's layout and
            packing.
    """

    target: str
    device: str
    fp16: bool = False
    solver: str = "gcd2"
    compile_seconds: float = 0.0
    build_seconds: float | None = None
    runs: int = 0
    kernels: list[KernelTime] = field(default_factory=list)
    wall_seconds: list[float] = field(default_factory=list)
    memory: dict[str, int] | None = None
    memory_text: str = ""
    packets: dict[str, int] | None = None
    choices: dict[str, Any] = field(default_factory=dict)

    def header(self) -> str:
        """The device line (`device: ...` or `target: ...`)."""
        if self.target == "dsp":
            return (f"target: {self.device} (layout {self.choices.get('layout')}, "
                    f"packing {self.choices.get('packing')})")
        return f"device: {self.device}" + (" [fp16 storage]" if self.fp16 else "")

    def body(self, rows: int = KERNEL_TABLE_ROWS) -> str:
        """Compile time, kernel times (the `rows` slowest), wall times and memory."""
        if self.target == "dsp":
            run = sum(self.wall_seconds[-1:])
            lines = [f"compile {self.compile_seconds:.1f} s, assemble and run under QEMU "
                     f"{run:.1f} s"]
            if self.packets:
                total = sum(self.packets.values())
                table = [["kernel", "packets", "%"]]
                top = sorted(self.packets.items(), key=lambda kv: -kv[1])[:rows]
                table += [[k, str(n), f"{100 * n / total:.1f}"] for k, n in top]
                table.append(["total", str(total), "100.0"])
                lines += ["", "packets executed (qemu-hexagon -singlestep):", format_table(table)]
            return "\n".join(lines)
        build = self.build_seconds or 0.0
        lines = [f"compile {self.compile_seconds:.1f} s (passes), {build:.1f} s more to "
                 "build the program and upload the weights"]
        if self.runs:
            how = f"median of runs 2..{self.runs}" if self.runs > 1 else "run 1"
            lines += ["", f"kernel time ({how}, profiling events):",
                      *kernel_time_rows(self.kernels, rows)]
            walls = [w * 1e3 for w in self.wall_seconds]
            if len(walls) <= 10:
                lines.append("wall time per run (ms): " + ", ".join(f"{w:.3f}" for w in walls))
            else:
                lines.append(f"wall time per run (ms): first {walls[0]:.3f}, median "
                             f"{statistics.median(walls[1:]):.3f}, min {min(walls[1:]):.3f} "
                             f"over {len(walls)} runs")
        lines.append(self.memory_text)
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.header()}\n{self.body()}"


def kernel_time_rows(kernels: Sequence[KernelTime], limit: int = KERNEL_TABLE_ROWS) -> list[str]:
    """The kernel table: slowest first, `limit` rows, then the rest summed, then the total."""
    import re

    times = [k.seconds for k in kernels]
    total = sum(times)
    order = sorted(range(len(times)), key=lambda i: -times[i])
    rows = [["kernel", "onnx node(s)", "ms", "%"]]
    for i in order[:limit]:
        node = re.sub(r"node '([^']*)' ", r"\1 ", kernels[i].node)
        if len(node) > 60:
            node = node[:57] + "..."
        share = 100 * times[i] / total if total else 0.0
        rows.append([kernels[i].kernel, node, f"{times[i] * 1e3:.3f}", f"{share:.1f}"])
    rest = order[limit:]
    if rest:
        rest_time = sum(times[i] for i in rest)
        share = 100 * rest_time / total if total else 0.0
        rows.append([f"({len(rest)} more)", "", f"{rest_time * 1e3:.3f}", f"{share:.1f}"])
    rows.append([f"total ({len(times)} launches)", "", f"{total * 1e3:.3f}", "100.0"])
    return format_table(rows).splitlines()


class Compiled:
    """
    A model compiled for one target: run it, read its kernels and host plan, save it.

    Attributes:
        target: `gpu` or `dsp`.
        module: The compiled IR.
        imported: The module as imported, before any pass (what the reference
            interpreter runs; its function gives the inputs' names and types); for a
            model `load` read, the compiled IR.
        path: The model's file (None for a module given to `compile`).
        function: The graph function compiled.
        device: GPU: the OpenCL device (`DeviceInfo`); None on the DSP.
        plan: The host plan: GPU, the `Plan` (`backends/opencl/plan.py`: packs,
            launches, memory slots); DSP, the program's input and output ports.
        remarks: What the compile has to say that is no error (the device chosen by
            default, storage that fell back to buffers).
    """

    def __init__(self, target: Target, module: ModuleOp, imported: ModuleOp, path: Path | None,
                 function: str, device: DeviceInfo | None, plan: Plan | list[Port],
                 remarks: list[str], *, fp16: bool = False, solver: str = "gcd2",
                 memory_budget: int | None = None, layout: str = "auto", packing: str = "sda",
                 count_packets: bool = False, compile_seconds: float = 0.0) -> None:
        self.target = target
        self.module = module
        self.imported = imported
        self.path = path
        self.function = function
        self.device = device
        self.plan = plan
        self.remarks = remarks
        self.fp16 = fp16
        self.solver = solver
        self.memory_budget = memory_budget
        self.layout = layout
        self.packing = packing
        self.count_packets = count_packets
        self.compile_seconds = compile_seconds
        self.build_seconds: float | None = None
        self._executor: CompiledModel | None = None
        self._kernels: str | None = None
        self._runs: list[RunResult] = []
        self._walls: list[float] = []
        self._packets: dict[str, int] | None = None

    # GPU ------------------------------------------------------------------------------
    def build(self) -> CompiledModel:
        """
        GPU: build the program and load the weights, once (`run` does it if not yet);
        under a memory budget, the weights go to a weight store that streams them.

        Returns:
            The OpenCL executor (`executor`).

        Raises:
            UserError: The target is the DSP, or the program does not build.
        """
        if self.target != "gpu":
            raise UserError("build applies to the gpu target")
        if self._executor is not None:
            return self._executor
        from mobile_opt.backends.opencl.executor import CompiledModel
        from mobile_opt.backends.opencl.plan import PlanError
        from mobile_opt.backends.opencl.printer import OpenCLPrintError
        from mobile_opt.backends.opencl.host_pack import OpenCLRunError

        started = time.perf_counter()
        try:
            if self.memory_budget is None:
                self._executor = CompiledModel(self.module, self.device, self.function,
                                               self.plan)
            else:
                self._executor = self._streaming()
        except (OpenCLRunError, OpenCLPrintError, PlanError, *USER_ERRORS) as e:
            raise user_error(e, self.path) from None  # the node, if any, is named
        self.build_seconds = time.perf_counter() - started
        return self._executor

    def _streaming(self) -> CompiledModel:
        from mobile_opt.backends.opencl.streaming import StreamingModel
        from mobile_opt.backends.opencl.weight_store import WeightStore, write_store

        folder = Path(tempfile.mkdtemp(prefix="mobile-opt-store-"))
        weakref.finalize(self, _remove, folder)
        store = folder / "model.weights"
        chunk = self.module.attributes["stream.plan"].chunk.data  # type: ignore[union-attr]
        write_store(store, self.plan, chunk)
        return StreamingModel(self.module, self.device, WeightStore(store), self.function,
                              self.plan, self.memory_budget)

    @property
    def executor(self) -> CompiledModel:
        """GPU: the OpenCL executor (built on first use), whose `run` also gives each
        launch's time (`RunResult`)."""
        return self.build()

    # both targets ---------------------------------------------------------------------
    @property
    def kernels(self) -> str:
        """The kernels' source: GPU, the OpenCL C program; DSP, the HVX assembly."""
        if self._kernels is None:
            if self.target == "gpu":
                from mobile_opt.backends.opencl.printer import opencl_source

                self._kernels = opencl_source(self.module)
            else:
                from mobile_opt.backends.hexagon.runner import assembly

                self._kernels = assembly(self.module, self._printed_packing)
        return self._kernels

    @property
    def _printed_packing(self) -> str:
        from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS

        # the printer keeps vliw-pack's packets; it packs only where that did not run
        return self.packing if self.packing in PRINTER_PACKINGS else "greedy"

    def run(self, inputs: Mapping[str, np.ndarray], trace: bool = False
            ) -> dict[str, np.ndarray]:
        """
        Run the model once.

        Args:
            inputs: Each graph input by name, as the model declares it.
            trace: GPU: record the run's timeline (queues, host work, memory), which
                `trace()` and `report(trace=...)` write as a Chrome trace.

        Returns:
            Each graph output by name.

        Raises:
            UserError: An input is missing or does not fit, or the run fails on a node.
        """
        if self.target == "dsp":
            return self._run_dsp(inputs)
        executor = self.build()
        from mobile_opt.backends.opencl.host_pack import OpenCLRunError

        try:
            result = executor.run(dict(inputs), trace=trace)
        except (OpenCLRunError, *USER_ERRORS) as e:
            raise user_error(e, self.path) from None
        self._runs.append(result)
        self._walls.append(result.wall_seconds)
        return result.outputs

    def _run_dsp(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        from mobile_opt.backends.hexagon.harness import missing_tools
        from mobile_opt.backends.hexagon.runner import run_module

        missing = missing_tools()
        if missing:
            raise UserError(f"{missing[0]} not found: install the Hexagon toolchain with "
                            "`apt-get install qemu-user clang-19 lld-19 llvm-19`")
        started = time.perf_counter()
        try:
            outputs, execution = run_module(self.module, dict(inputs), self.count_packets,
                                            self._printed_packing)
        except USER_ERRORS as e:
            raise user_error(e, self.path) from None
        self._walls.append(time.perf_counter() - started)
        if execution is not None:
            self._packets = dict(execution.packets)
        return outputs

    def trace(self, path: str | Path | None = None) -> dict[str, Any]:
        """
        The Chrome trace-event JSON of the last run, which ran with `trace=True`: a track
        per queue (compute, copy) and one for the host, kernels with their nodes and work
        sizes, streamed chunks, and the allocator's bytes as a counter; for
        https://ui.perfetto.dev or chrome://tracing.

        Args:
            path: Where to write it as JSON too (a directory or link there is refused).

        Raises:
            UserError: No run yet, or the last one was not traced.
        """
        from mobile_opt.api.traces import write_trace

        if self.target == "dsp":
            raise UserError("traces are of GPU runs; the DSP run has its packet counts")
        return write_trace(path, self._runs[-1] if self._runs else None, self.plan,
                           self.path.name if self.path else "model", self.device.name)

    def report(self, trace: str | Path | None = None) -> Report:
        """
        Times, memory and choices so far (`Report`; `str()` of it prints them).

        Args:
            trace: Also write the last run's Chrome trace there (`trace()`).

        Returns:
            The report; `str()` of it is what `mobile-run` prints.

        Raises:
            UserError: `trace` is given but the last run was not traced.
        """
        if trace is not None:
            self.trace(trace)
        if self.target == "dsp":
            return Report("dsp", "hexagonv66 HVX-128 under qemu-hexagon",
                          solver=self.solver, compile_seconds=self.compile_seconds,
                          runs=len(self._walls), wall_seconds=list(self._walls),
                          packets=self._packets,
                          choices={"layout": self.layout, "packing": self.packing})
        from mobile_opt.backends.opencl.executor import KernelTime
        from mobile_opt.backends.opencl.plan import memory_line

        plan = self.plan
        timed = self._runs[1:] if len(self._runs) > 1 else self._runs
        kernels = [
            KernelTime(r.kernel, r.node,
                       statistics.median(t.kernel_times[i].seconds for t in timed))
            for i, r in enumerate(plan.launches)
        ] if timed else []
        return Report(
            "gpu", self.device.describe(), fp16=self.fp16, solver=self.solver,
            compile_seconds=self.compile_seconds, build_seconds=self.build_seconds,
            runs=len(self._runs), kernels=kernels, wall_seconds=list(self._walls),
            memory=plan.memory(), memory_text=memory_line(plan),
            choices={"launches": [(r.kernel, r.node) for r in plan.launches]},
        )

    # saving ---------------------------------------------------------------------------
    def files(self) -> dict[str, str]:
        """The files `save` writes: file name to contents."""
        files = {"model.mlir": str(self.module) + "\n",
                 "weights.json": json.dumps(weight_manifest(self.module), indent=1) + "\n",
                 SAVED: json.dumps(self._settings(), indent=1) + "\n"}
        if self.target == "gpu":
            from mobile_opt.backends.opencl.plan import plan_comment

            files["model.cl"] = self.kernels + "\n" + plan_comment(self.plan)
            files["plan.json"] = self.plan.dumps() + "\n"
        else:
            files["program.s"] = self.kernels
        return files

    def _settings(self) -> dict[str, Any]:
        return {"target": self.target, "function": self.function, "fp16": self.fp16,
                "solver": self.solver, "memory_budget": self.memory_budget,
                "layout": self.layout, "packing": self.packing,
                "count_packets": self.count_packets,
                "source": None if self.path is None else str(self.path)}

    def save(self, path: str | Path) -> None:
        """
        Write the model to the folder `path` (made if absent), replacing a previous
        save's files as one set; `load` reads it back. The folder holds the layout that
        `mobile-run --save-dir` writes:

        - `model.mlir`: the compiled IR, whose weights stay where the model keeps them
          (the ONNX file, or `.npy` files derived from it);
        - `weights.json`: each weight file the IR names, with its size;
        - `compiled.json`: the target and the options the model was compiled with;
        - GPU: `model.cl`, the OpenCL C program with its host plan as a trailing
          comment, and `plan.json`, the host plan; DSP: `program.s`, the HVX assembly.

        Args:
            path: The folder.

        Raises:
            UserError: The folder cannot be written.
        """
        with staged_save_dir(path, option="") as staging:
            for name, text in self.files().items():
                (staging / name).write_text(text)


def weight_manifest(module: ModuleOp) -> list[dict[str, Any]]:
    """Each weight store file the IR names, with its size in bytes (None if missing)."""
    stores = sorted({op.store.data for op in module.walk() if isinstance(op, WeightOp)})
    entries = []
    for store in stores:
        try:
            size: int | None = Path(store).stat().st_size
        except OSError:
            size = None
        entries.append({"store": store, "bytes": size})
    return entries


def load(path: str | Path, device: str | DeviceInfo | None = None, build: bool = True
         ) -> Compiled:
    """
    Load a model that `Compiled.save` wrote to the folder `path`, ready to run.

    Args:
        path: The folder.
        device: GPU: the device to run on, as `compile` takes it.
        build: GPU: build the program and load the weights now.

    Returns:
        The compiled model.

    Raises:
        UserError: The folder holds no saved model, or a weight store it names is gone
            or changed.
    """
    folder = Path(path)
    try:
        settings = json.loads((folder / SAVED).read_text())
        manifest = json.loads((folder / "weights.json").read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"no saved model here ({one_line(e)})", folder) from None
    for entry in manifest:
        store = Path(entry["store"])
        size = store.stat().st_size if store.is_file() else None
        if size != entry["bytes"]:
            why = "is gone" if size is None else f"holds {size} bytes, not {entry['bytes']}"
            raise UserError(f"weight store {store} {why}", folder)
    ctx = pipelines.context()
    mlir = folder / "model.mlir"
    try:
        module = _parse_mlir(mlir, ctx)
    except USER_ERRORS as e:
        raise user_error(e, mlir) from None
    source = settings.get("source")
    function = settings["function"]
    if settings["target"] == "dsp":
        from mobile_opt.backends.hexagon.runner import ports

        return Compiled("dsp", module, module, Path(source) if source else None,
                        function, None, ports(module), [], solver=settings["solver"],
                        layout=settings["layout"], packing=settings["packing"],
                        count_packets=settings["count_packets"])
    from mobile_opt.backends.opencl.plan import PlanError, build_plan

    info, remarks = _device(device)
    try:
        plan = build_plan(module, function)
    except (PlanError, *USER_ERRORS) as e:
        raise user_error(e, mlir) from None
    compiled = Compiled("gpu", module, module, Path(source) if source else None,
                        function, info, plan, remarks + plan.remarks, fp16=settings["fp16"],
                        solver=settings["solver"], memory_budget=settings["memory_budget"])
    if build:
        compiled.build()
    return compiled


def _remove(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


__all__ = ["Compiled", "Report", "Target", "compile", "kernel_time_rows", "load",
           "read_model", "weight_manifest"]


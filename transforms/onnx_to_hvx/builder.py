"""
A small builder for `hvx.func` kernels: it appends instructions to the current block,
keeps scalar and splat constants at the function's entry (one of each), and opens
loops whose iteration values it threads for the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects.hvx import ops


@dataclass
class Loop:
    """An open loop: `args` are this iteration's values; call `next` with the next ones."""

    args: list[SSAValue]
    yielded: list[SSAValue] | None = None
    results: list[SSAValue] = field(default_factory=list)

    def next(self, *values: SSAValue) -> None:
        assert len(values) == len(self.args), "a loop yields one value per iteration value"
        self.yielded = list(values)


class KernelBuilder:
    def __init__(self, name: str):
        self.func = ops.FuncOp(name)
        self.entry = self.func.body.block
        self.block = self.entry
        self._constants: dict[int, SSAValue] = {}
        self._splats: dict[int, SSAValue] = {}
        self._entry_ops: list[Operation] = []

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def __call__(self, op: Operation) -> SSAValue:
        """Append a one-result instruction and give its result."""
        self.add(op)
        return op.results[0]

    # constants, materialised once at the function entry
    def _at_entry(self, op: Operation) -> SSAValue:
        if self._entry_ops:
            self.entry.insert_op_after(op, self._entry_ops[-1])
        elif self.entry.first_op is not None:
            self.entry.insert_op_before(op, self.entry.first_op)
        else:
            self.entry.add_op(op)
        self._entry_ops.append(op)
        return op.results[0]

    def const(self, value: int) -> SSAValue:
        value = int(value) & 0xFFFFFFFF
        if value not in self._constants:
            self._constants[value] = self._at_entry(ops.TransferImmOp(value))
        return self._constants[value]

    def splat(self, value: int) -> SSAValue:
        """A vector whose every word is `value`."""
        value = int(value) & 0xFFFFFFFF
        if value not in self._splats:
            scalar = self.const(value)
            op = ops.VzeroOp() if value == 0 else ops.VsplatOp(scalar)
            self._splats[value] = self._at_entry(op)
        return self._splats[value]

    def copy(self, value: SSAValue) -> SSAValue:
        """A scalar copy, for a loop to advance without clobbering `value`."""
        return self(ops.AddImmOp(value, 0))

    def fresh_const(self, value: int) -> SSAValue:
        """A scalar constant made here, not at the entry (for short-lived values)."""
        return self(ops.TransferImmOp(int(value) & 0xFFFFFFFF))

    @contextmanager
    def loop(self, trip: int, kind: str, inits: Sequence[SSAValue]) -> Iterator[Loop]:
        """
        A loop of `trip` iterations carrying `inits`. With one iteration it is inlined.
        A `counted` loop gets its counter as a hidden first iteration value.
        """
        if trip == 1:
            loop = Loop(list(inits))
            yield loop
            assert loop.yielded is not None, "loop body did not call next()"
            loop.results = loop.yielded
            return
        carried = list(inits)
        if kind == "counted":
            carried.insert(0, self.fresh_const(trip))
        body = ops.LoopOp.empty_body(carried)
        args = list(body.block.args)
        loop = Loop(args[1:] if kind == "counted" else args)
        outer, self.block = self.block, body.block
        try:
            yield loop
        finally:
            self.block = outer
        assert loop.yielded is not None, "loop body did not call next()"
        yielded = loop.yielded
        if kind == "counted":
            counter = ops.AddImmOp(args[0], -1)
            body.block.add_op(counter)
            yielded = [counter.d, *yielded]
        body.block.add_op(ops.YieldOp(*yielded))
        op = ops.LoopOp(trip, kind, carried, body)
        self.add(op)
        loop.results = list(op.results[1:] if kind == "counted" else op.results)


def loop_kinds(trips: Sequence[int]) -> list[str]:
    """
    Kinds for a loop nest given outermost first: the innermost two loops that really
    loop (more than one trip, at most 1023) are hardware loops, the rest counted.
    """
    kinds = ["counted"] * len(trips)
    hardware = ["loop0", "loop1"]
    for index in reversed(range(len(trips))):
        if trips[index] == 1:
            kinds[index] = "loop0"  # inlined anyway
            continue
        if hardware and trips[index] <= 1023:
            kinds[index] = hardware.pop(0)
        else:
            hardware = []
    return kinds


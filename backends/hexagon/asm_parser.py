"""
Hexagon assembly text read back: its structure for any assembly (ours or `clang -S`),
and `hvx`/`vliw` IR for the instructions the `hvx` dialect models.

`parse_assembly` reads text with the Lark grammar `hexagon.lark` into functions, their
basic blocks and their packets; `innermost_loops` finds a function's innermost loops
(from the header label to the packet with the back edge), so a benchmark can count
LLVM's packets per iteration.

An instruction becomes the hvx op whose `SYNTAX` it matches: each `SYNTAX` is cut into
the grammar's tokens with a hole per field, so the printer and this parser read the
same strings and cannot drift apart. Registers become allocated register types; SSA
follows the registers: a read takes the value the register last got (through
`hvx.lo`/`hvx.hi` where it reads half of a pair, `hvx.pair` where a pair's halves came
separately), except inside a packet, where a read sees the register as it was before
the packet unless it forwards (`.new`, or a read of a `.cur` load's vector). A
register read before anything wrote it is an `hvx.arg`.

`import_packets` turns straight-line packets into an `hvx.func`; `parse_program` turns
what `-t hexagon-asm` printed (functions, hardware and counted loops, buffers) back into
the module it came from, up to what the text does not say (buffer regions, store keys).
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, SymbolRefAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.vliw.packets import packet_names, packet_problem
from mobile_opt.dialects.hvx import HVX, ops
from mobile_opt.dialects.hvx.registers import (
    HexagonRegisterType,
    PredType,
    RegPairType,
    RegType,
    VecPairType,
    VecType,
)
from mobile_opt.dialects.vliw import PacketOp

GRAMMAR = Path(__file__).with_name("hexagon.lark")


@cache
def _lark() -> Lark:
    return Lark(
        GRAMMAR.read_text(), parser="lalr", lexer="contextual",
        start=["start", "instruction"], propagate_positions=True,
    )


# ----------------------------------------------------------------------------
# The structure of an assembly file
# ----------------------------------------------------------------------------


@dataclass
class AsmInstruction:
    """One instruction: its text as written and its tokens."""

    text: str
    tokens: tuple[Token, ...]
    line: int

    @property
    def compact(self) -> str:
        """The tokens without blanks: `p0=cmp.gt(r10,#0)`."""
        return "".join(self.tokens)

    def names(self) -> list[str]:
        return [str(t) for t in self.tokens if t.type == "NAME"]

    @property
    def is_branch(self) -> bool:
        """Whether it may leave the straight line (a jump or a return)."""
        return any(n in ("jump", "jumpr", "dealloc_return") for n in self.names())

    def branch_target(self) -> str | None:
        """The label a `jump` goes to."""
        tokens = self.tokens
        for i, token in enumerate(tokens):
            if token.type == "NAME" and token == "jump":
                for after in tokens[i + 1 :]:
                    if after.type in ("LOCAL", "NAME"):
                        return str(after)
                    if after.type not in ("SUFFIX", "HASH", "HASH2"):
                        return None
        return None

    def loop_setup(self) -> tuple[str, str] | None:
        """(`loop0`/`loop1`, header label) of a hardware loop setup (`spNloop0` included)."""
        match = re.fullmatch(r"(?:p\d=)?(?:sp\d)?(loop[01])\(#*(\.?[\w.$]+),.*\)", self.compact)
        return (match.group(1), match.group(2)) if match else None


@dataclass
class AsmPacket:
    """`{ ... }` (or a bare instruction, a packet of one), with its `:endloopN` marker."""

    instructions: list[AsmInstruction]
    endloop: str | None
    """`endloop0`, `endloop1` or `endloop01`."""
    line: int

    @property
    def text(self) -> str:
        body = "; ".join(i.text for i in self.instructions)
        return f"{{ {body} }}" + (f":{self.endloop}" if self.endloop else "")

    @property
    def ends_block(self) -> bool:
        return self.endloop is not None or any(i.is_branch for i in self.instructions)


@dataclass
class AsmBlock:
    """A basic block: an optional label, then packets up to a branch or a loop end."""

    label: str | None
    packets: list[AsmPacket] = field(default_factory=list)
    line: int = 0

    @property
    def endloop(self) -> str | None:
        return self.packets[-1].endloop if self.packets else None


@dataclass
class AsmFunction:
    """The code from a global label in a text section (`name` None: code before any)."""

    name: str | None
    blocks: list[AsmBlock]
    line: int

    def packets(self) -> list[AsmPacket]:
        return [p for b in self.blocks for p in b.packets]


@dataclass
class AsmDirective:
    name: str
    args: str
    line: int

    def arguments(self) -> list[str]:
        """The comma-separated arguments, quoted strings kept whole (with their quotes)."""
        return [a.strip() for a in re.findall(r'(?:"(?:[^"\\]|\\.)*"|[^,"])+', self.args)]


@dataclass
class AsmData:
    """A label outside the text sections and the directives that follow it."""

    name: str
    section: str
    directives: list[AsmDirective]
    line: int


@dataclass
class AsmFile:
    source: str
    functions: list[AsmFunction]
    data: list[AsmData]
    directives: list[AsmDirective]
    """Every directive, in order."""

    def function(self, name: str | None) -> AsmFunction:
        for f in self.functions:
            if f.name == name:
                return f
        raise DiagnosticException(f"{self.source}: no function {name}")


def _syntax_error(error: UnexpectedInput, text: str, source: str) -> DiagnosticException:
    line, column = error.line, error.column
    if isinstance(error, UnexpectedEOF) or line < 1:
        return DiagnosticException(f"{source}: syntax error: unexpected end of input")
    if isinstance(error, UnexpectedCharacters):
        what = f"unexpected {error.char!r}"
    elif isinstance(error, UnexpectedToken) and error.token.type == "$END":
        what = "unexpected end of input"
    elif isinstance(error, UnexpectedToken):
        token = str(error.token).strip() or "line break"
        what = f"unexpected {token!r}"
    else:
        what = "unexpected input"
    lines = text.splitlines()
    source_line = lines[line - 1].strip() if line <= len(lines) else ""
    context = f" in '{source_line}'" if source_line else ""
    return DiagnosticException(f"{source}:{line}:{column}: syntax error: {what}{context}")


def _is_text(section: str) -> bool:
    return section == ".text" or section.startswith(".text.")


def _section_of(directive: AsmDirective) -> str | None:
    """The section a directive switches to, if it does."""
    if directive.name in (".text", ".data", ".bss"):
        return directive.name
    if directive.name in (".section", ".pushsection"):
        args = directive.arguments()
        return args[0].strip('"') if args else ""
    return None


def parse_assembly(text: str, source: str = "<input>") -> AsmFile:
    """The functions, blocks, packets, data and directives of assembly text."""
    try:
        tree = _lark().parse(text, start="start")
    except UnexpectedInput as e:
        raise _syntax_error(e, text, source) from None
    asm = AsmFile(source, [], [], [])
    section = ".text"
    function: AsmFunction | None = None
    block: AsmBlock | None = None
    data: AsmData | None = None

    def instruction(node: Tree) -> AsmInstruction:
        tokens = tuple(node.children)  # type: ignore[arg-type]
        return AsmInstruction(text[node.meta.start_pos : node.meta.end_pos], tokens, node.meta.line)

    for node in tree.children:
        assert isinstance(node, Tree)
        line = node.meta.line
        if node.data == "label":
            name = str(node.children[0])[:-1]
            if not _is_text(section):
                data = AsmData(name, section, [], line)
                asm.data.append(data)
            elif name.startswith(".L") and function is not None:
                block = AsmBlock(name, [], line)
                function.blocks.append(block)
            else:
                local = name.startswith(".L")
                block = AsmBlock(name if local else None, [], line)
                function = AsmFunction(None if local else name, [block], line)
                asm.functions.append(function)
            continue
        if node.data == "directive":
            name, *args = node.children
            directive = AsmDirective(str(name), str(args[0]).strip() if args else "", line)
            asm.directives.append(directive)
            switched = _section_of(directive)
            if switched is not None:
                section, function, block, data = switched, None, None, None
            elif data is not None:
                data.directives.append(directive)
            continue
        if node.data == "packet":
            endloop = None
            children = list(node.children)
            while children and isinstance(children[-1], Token):
                endloop = str(children.pop())[1:]
            instructions = [instruction(c) for c in children]  # type: ignore[arg-type]
            packet = AsmPacket(instructions, endloop, line)
        else:
            packet = AsmPacket([instruction(node)], None, line)
        if not _is_text(section):
            raise DiagnosticException(f"{source}:{line}: code in the data section {section}")
        if function is None:
            block = AsmBlock(None, [], line)
            function = AsmFunction(None, [block], line)
            asm.functions.append(function)
        assert block is not None
        if block.packets and block.packets[-1].ends_block:
            block = AsmBlock(None, [], line)
            function.blocks.append(block)
        block.packets.append(packet)
    return asm


# ----------------------------------------------------------------------------
# Loops
# ----------------------------------------------------------------------------


@dataclass
class AsmLoop:
    """A loop as laid out: the packets from its header label to its back edge."""

    header: str
    packets: list[AsmPacket]

    def __len__(self) -> int:
        return len(self.packets)

    def __iter__(self) -> Iterator[AsmPacket]:
        return iter(self.packets)

    def __getitem__(self, index: int) -> AsmPacket:
        return self.packets[index]


def loops(function: AsmFunction) -> list[tuple[int, int, str]]:
    """
    (first packet, back-edge packet, header) of every loop, as packet indices: a back
    edge is an `:endloopN` (to the header of the last `loopN` set up before it) or a
    jump to a label at or before the jump.
    """
    starts: dict[str, int] = {}
    packets: list[AsmPacket] = []
    for block in function.blocks:
        if block.label is not None:
            starts[block.label] = len(packets)
        packets += block.packets
    found: set[tuple[int, int, str]] = set()
    setup: dict[str, str] = {}
    for index, packet in enumerate(packets):
        for inst in packet.instructions:
            target = inst.branch_target()
            if target is not None and starts.get(target, index + 1) <= index:
                found.add((starts[target], index, target))
        if packet.endloop:
            for digit in packet.endloop.removeprefix("endloop"):
                header = setup.get(f"loop{digit}")
                if header in starts and starts[header] <= index:
                    found.add((starts[header], index, header))
        for inst in packet.instructions:
            loop = inst.loop_setup()
            if loop is not None:
                setup[loop[0]] = loop[1]
    return sorted(found)


def innermost_loops(asm: AsmFile, function: str | AsmFunction | None) -> list[AsmLoop]:
    """The loops of `function` that hold no other loop, in layout order."""
    func = function if isinstance(function, AsmFunction) else asm.function(function)
    spans = loops(func)
    packets = func.packets()
    return [
        AsmLoop(header, packets[first : last + 1])
        for first, last, header in spans
        if not any((f, l) != (first, last) and first <= f and l <= last for f, l, _ in spans)
    ]


# ----------------------------------------------------------------------------
# Instructions as hvx ops: forms derived from SYNTAX
# ----------------------------------------------------------------------------

REGISTER_TOKENS: dict[type[HexagonRegisterType], str] = {
    VecType: "VEC", VecPairType: "VECPAIR", RegType: "REG", RegPairType: "REGPAIR",
    PredType: "QREG",
}
SYMBOL_TOKENS = ("NAME", "LOCAL")


@dataclass(frozen=True)
class Literal:
    type: str
    value: str


@dataclass(frozen=True)
class Hole:
    """A field of the syntax: a register (of `kind`), an integer or a symbol."""

    name: str
    kind: type[Attribute]


def _base(constraint) -> type[Attribute]:
    """The one attribute class a (possibly ranged) IRDL constraint admits."""
    while not hasattr(constraint, "get_bases") or constraint.get_bases() is None:
        constraint = getattr(constraint, "constraint", None) or constraint.constr
    (base,) = constraint.get_bases()
    return base


def _lex(chunk: str) -> list[Literal]:
    if not chunk.strip():
        return []
    tree = _lark().parse(chunk, start="instruction")
    return [Literal(t.type, str(t)) for t in tree.children]  # type: ignore[union-attr]


@dataclass(frozen=True)
class InstructionForm:
    """An instruction op's assembly as grammar tokens, with a hole for each field."""

    op: type[ops.Instruction]
    items: tuple[Literal | Hole, ...]
    either_hash: bool
    """`#` and `##` both read: the op picks the extender by value (`assembly_line`)."""

    @staticmethod
    def of(op: type[ops.Instruction]) -> InstructionForm:
        definition = op.get_irdl_definition()
        kinds = {name: _base(d.constr) for name, d in (*definition.operands, *definition.results)}
        kinds |= {name: _base(d.constr) for name, d in definition.properties.items()}
        items: list[Literal | Hole] = []
        for literal, name, _, _ in string.Formatter().parse(op.SYNTAX):
            items += _lex(literal)
            if name is not None:
                items.append(Hole(name, kinds[name]))
        overrides = "assembly_line" in vars(op)
        return InstructionForm(op, tuple(items), overrides)

    @property
    def mnemonic(self) -> str | None:
        names = (i.value for i in self.items if isinstance(i, Literal) and i.type == "NAME")
        return next(names, None)

    @property
    def distinct_holes(self) -> int:
        return len({i.name for i in self.items if isinstance(i, Hole)})

    def _same(self, literal: Literal, token: Token) -> bool:
        if self.either_hash and literal.type in ("HASH", "HASH2"):
            return token.type in ("HASH", "HASH2")
        return literal.type == token.type and literal.value == token

    def match(self, tokens: Sequence[Token]) -> dict[str, tuple[Token, str | None]] | None:
        """Each field's token (and `.cur`/`.new` mark), or None if the tokens differ."""
        fields: dict[str, tuple[Token, str | None]] = {}
        at = 0
        for item in self.items:
            if at >= len(tokens):
                return None
            token = tokens[at]
            at += 1
            if isinstance(item, Literal):
                if not self._same(item, token):
                    return None
                continue
            mark = None
            if issubclass(item.kind, HexagonRegisterType):
                if token.type != REGISTER_TOKENS[item.kind]:
                    return None
                if at < len(tokens) and tokens[at].type == "MARK":
                    mark = str(tokens[at])[1:]
                    at += 1
            elif item.kind is IntegerAttr:
                if token.type != "NUMBER":
                    return None
            elif token.type not in SYMBOL_TOKENS:
                return None
            previous = fields.setdefault(item.name, (token, mark))
            if previous[0] != token:
                return None
        return fields if at == len(tokens) else None


@cache
def instruction_forms() -> dict[str | None, list[InstructionForm]]:
    """Every instruction op's form, by mnemonic (its first literal name)."""
    forms: dict[str | None, list[InstructionForm]] = {}
    for op in HVX.operations:
        if issubclass(op, ops.Instruction) and hasattr(op, "SYNTAX"):
            form = InstructionForm.of(op)
            forms.setdefault(form.mnemonic, []).append(form)
    return forms


def _where(source: str, line: int) -> str:
    return f"{source}:{line}"


def _register(token: Token, where: str) -> HexagonRegisterType:
    """The allocated register a register token names."""
    text = str(token)
    try:
        if token.type in ("VECPAIR", "REGPAIR"):
            high, low = (int(x) for x in text[1:].split(":"))
            if high != low + 1 or low % 2:
                raise VerifyException(f"{text} is not an odd:even register pair")
            pair = VecPairType if token.type == "VECPAIR" else RegPairType
            return pair.from_name(f"{pair.PREFIX}{low // 2}")
        kind = {"VEC": VecType, "REG": RegType, "QREG": PredType}[token.type]
        return kind.from_name(text)
    except VerifyException as e:
        raise DiagnosticException(f"{where}: {e}") from None


@dataclass
class Decoded:
    """An instruction matched to its op: the registers and immediates of its fields."""

    instruction: AsmInstruction
    op: type[ops.Instruction]
    registers: dict[str, HexagonRegisterType]
    marks: dict[str, str]
    properties: dict[str, Attribute]

    def _named(self, definitions, tied: dict[str, str]) -> list[tuple[str, HexagonRegisterType]]:
        """The registers of the fields `definitions` name; a tied one has its twin's."""
        out = []
        for name, _ in definitions:
            reg = self.registers.get(name) or self.registers.get(tied.get(name, ""))
            if reg is not None:
                out.append((name, reg))
        return out

    def operands(self) -> list[tuple[str, HexagonRegisterType]]:
        """The operands' registers; a tied one (an accumulator) is its result's register."""
        return self._named(self.op.get_irdl_definition().operands, dict(self.op.TIED))

    def results(self) -> list[tuple[str, HexagonRegisterType]]:
        if self.op is ops.SyscallOp:
            return [("result", RegType.from_name("r0"))]
        tied = {result: operand for operand, result in self.op.TIED}
        return self._named(self.op.get_irdl_definition().results, tied)

    def build(self, operands: Sequence[SSAValue]) -> ops.Instruction:
        if self.op is ops.SyscallOp:
            return ops.SyscallOp(operands, RegType.from_name("r0"))
        return self.op.create(
            operands=list(operands),
            result_types=[reg for _, reg in self.results()],
            properties=dict(self.properties),
        )


def decode(inst: AsmInstruction, source: str = "<input>") -> Decoded:
    """The hvx op an instruction is; a DiagnosticException if none has its syntax."""
    forms = instruction_forms()
    names = set(inst.names())
    candidates = [f for key in (None, *names) for f in forms.get(key, [])]
    matches = [(f, m) for f in candidates if (m := f.match(inst.tokens)) is not None]
    where = _where(source, inst.line)
    if not matches:
        raise NotSupported(f"{where}: '{inst.text}' is not supported (no hvx op has its syntax)")
    # the most constrained form first: `v0 = vxor(v0,v0)` is hvx.vzero
    form, fields = min(matches, key=lambda fm: fm[0].distinct_holes)
    registers, marks, properties = {}, {}, {}
    for name, (token, mark) in fields.items():
        kind = next(i.kind for i in form.items if isinstance(i, Hole) and i.name == name)
        if issubclass(kind, HexagonRegisterType):
            registers[name] = _register(token, where)
        elif kind is IntegerAttr:
            properties[name] = IntegerAttr(int(str(token), 0), i64)
        else:
            properties[name] = SymbolRefAttr(str(token))
        if mark is not None:
            marks[name] = mark
    decoded = Decoded(inst, form.op, registers, marks, properties)
    results = {n for n, _ in decoded.results()}
    for name, mark in marks.items():
        legal = (
            (mark == "cur" and name == "d" and form.op.name in machine.ALIGNED_VECTOR_LOADS)
            or (mark == "new" and name not in results)
        )
        if not legal:
            raise DiagnosticException(f"{where}: '{inst.text}': .{mark} is not supported here")
    return decoded


# ----------------------------------------------------------------------------
# Registers as SSA values
# ----------------------------------------------------------------------------

Unit = tuple[str, int]


def units(reg: HexagonRegisterType) -> tuple[Unit, ...]:
    return tuple((reg.register_pool_key(), u) for u in reg.units)


def _single(reg_pool: str, unit: int) -> HexagonRegisterType:
    if reg_pool == VecType.POOL:
        return VecType.from_name(f"v{unit}")
    return RegType.from_name(f"r{unit}")


class NotSupported(DiagnosticException):
    """Code that is valid assembly but has no `hvx` IR."""


@dataclass(frozen=True)
class Definition:
    value: SSAValue
    half: int | None
    """Which half of the pair `value` this register is; None for a single register."""


@dataclass
class Registers:
    """The SSA value each register unit holds at a point of the code."""

    held: dict[Unit, Definition] = field(default_factory=dict)

    def copy(self) -> Registers:
        return Registers(dict(self.held))

    def write(self, value: SSAValue) -> None:
        reg = value.type
        assert isinstance(reg, HexagonRegisterType)
        regs = units(reg)
        for k, unit in enumerate(regs):
            self.held[unit] = Definition(value, k if len(regs) > 1 else None)

    def has(self, reg: HexagonRegisterType) -> bool:
        return all(u in self.held for u in units(reg))

    def read(self, reg: HexagonRegisterType, add: Callable[[Operation], None]) -> SSAValue:
        """The value of `reg`, through pair views or `hvx.pair` (added with `add`)."""
        regs = units(reg)
        missing = [u for u in regs if u not in self.held]
        if missing:
            raise KeyError(reg)
        defs = [self.held[u] for u in regs]
        if len(regs) == 1:
            (d,) = defs
            if d.half is None:
                return d.value
            pair = d.value.type
            vector = isinstance(pair, VecPairType)
            views = (ops.LoOp, ops.HiOp) if vector else (ops.LoOfPairOp, ops.HiOfPairOp)
            view = views[d.half].create(operands=[d.value], result_types=[reg])
            add(view)
            return view.results[0]
        if defs[0].value is defs[1].value and (defs[0].half, defs[1].half) == (0, 1):
            return defs[0].value
        if not isinstance(reg, VecPairType):
            raise NotSupported(
                f"{reg.asm_name()} is read as a pair but its halves were written apart")
        halves = [self.read(_single(*u), add) for u in regs]
        combined = ops.PairOp.create(operands=halves, result_types=[reg])
        add(combined)
        return combined.d

    def live(self) -> list[HexagonRegisterType]:
        """The registers holding values, as written (a pair whole while both halves hold it)."""
        regs: dict[tuple[Unit, ...], HexagonRegisterType] = {}
        for unit, d in self.held.items():
            reg = d.value.type
            assert isinstance(reg, HexagonRegisterType)
            whole = units(reg)
            if d.half is None or all(
                (other := self.held.get(u)) is not None and other.value is d.value
                for u in whole
            ):
                regs[whole] = reg
            else:
                regs[(unit,)] = _single(*unit)
        return [regs[k] for k in sorted(regs)]


# ----------------------------------------------------------------------------
# Packets
# ----------------------------------------------------------------------------


@dataclass
class DecodedPacket:
    """A packet's decoded instructions, which reads forward, and an order for SSA."""

    packet: AsmPacket
    decoded: list[Decoded]
    forwarded: dict[tuple[int, str], set[Unit]]
    """(consumer, operand) → the registers it reads as the packet writes them."""
    order: list[int]
    source: str

    @property
    def where(self) -> str:
        return _where(self.source, self.packet.line)

    def written(self) -> set[Unit]:
        return {u for d in self.decoded for _, reg in d.results() for u in units(reg)}


def _topological(count: int, edges: set[tuple[int, int]]) -> list[int] | None:
    order: list[int] = []
    left = set(range(count))
    while left:
        ready = [i for i in sorted(left) if not any(a in left and b == i for a, b in edges)]
        if not ready:
            return None
        order.append(ready[0])
        left.remove(ready[0])
    return order


def decode_packet(packet: AsmPacket, source: str = "<input>") -> DecodedPacket:
    decoded = [decode(inst, source) for inst in packet.instructions]
    where = _where(source, packet.line)
    writer: dict[Unit, int] = {}
    for i, d in enumerate(decoded):
        for _, reg in d.results():
            for unit in units(reg):
                if unit in writer:
                    raise DiagnosticException(
                        f"{where}: two instructions of the packet write {reg.asm_name()}")
                writer[unit] = i
    # the vectors of `.cur` loads (not the new base of a post-incrementing one)
    current = {u for d in decoded if d.marks.get("d") == "cur" for u in units(d.registers["d"])}
    forwarded: dict[tuple[int, str], set[Unit]] = {}
    edges: set[tuple[int, int]] = set()
    old_reads: set[tuple[int, int]] = set()  # (reader, writer): the read sees the old value
    for i, d in enumerate(decoded):
        for name, reg in d.operands():
            regs = [u for u in units(reg) if writer.get(u, i) != i]
            if d.marks.get(name) == "new":
                if len(regs) != len(units(reg)):
                    raise DiagnosticException(
                        f"{where}: {reg.asm_name()}.new: no instruction of the packet writes it")
                new = set(regs)
            elif machine.is_hvx(d.op.name):  # a .cur load's vector reaches every HVX reader
                new = {u for u in regs if u in current}
            else:
                new = set()
            if new:
                forwarded[(i, name)] = new
            edges |= {(writer[u], i) for u in new}
            old_reads |= {(i, writer[u]) for u in regs if u not in new}
    order = _topological(len(decoded), edges | old_reads) or _topological(len(decoded), edges)
    if order is None:
        raise DiagnosticException(f"{where}: the packet's .cur/.new reads form a cycle")
    return DecodedPacket(packet, decoded, forwarded, order, source)


# ----------------------------------------------------------------------------
# Building hvx IR
# ----------------------------------------------------------------------------


@dataclass
class LoopItem:
    kind: str
    trip: int | None
    """None for a counted loop: the trip is its counter's first value."""
    label: str
    body: list[LoopItem | DecodedPacket]
    line: int
    counter: RegType | None = None
    """A counted loop's counter (its compare-and-branch tests it)."""


Item = LoopItem | DecodedPacket


def _decoded_packets(items: Sequence[Item]) -> Iterator[DecodedPacket]:
    for item in items:
        if isinstance(item, LoopItem):
            yield from _decoded_packets(item.body)
        else:
            yield item


def _live_in(items: Sequence[Item]) -> list[HexagonRegisterType]:
    """Registers read (in text order) before anything writes them."""
    written: set[Unit] = set()
    found: dict[tuple[Unit, ...], HexagonRegisterType] = {}
    for packet in _decoded_packets(items):
        for i, d in enumerate(packet.decoded):
            for name, reg in d.operands():
                new = packet.forwarded.get((i, name), set())
                fresh = [u for u in units(reg) if u not in written and u not in new]
                if len(fresh) == len(units(reg)):
                    found.setdefault(units(reg), reg)
                else:
                    for unit in fresh:
                        found.setdefault((unit,), _single(*unit))
        written |= packet.written()
    taken: set[Unit] = set()
    live = []
    for key, reg in found.items():  # a unit read both alone and in a pair: the first read wins
        regs = [reg] if not taken & set(key) else [_single(*u) for u in key if u not in taken]
        live += regs
        taken |= set(key)
    return live


class FunctionBuilder:
    """Builds one `hvx.func`, following which SSA value each register holds."""

    def __init__(self, name: str, source: str):
        self.func = ops.FuncOp(name)
        self.block = self.func.body.block
        self.registers = Registers()
        self.source = source
        self.since_barrier: set[int] = set()
        """Scalars written since the last call or system call: a system call's arguments."""

    def add(self, op: Operation) -> None:
        self.block.add_op(op)

    def arguments(self, items: Sequence[Item]) -> None:
        for reg in _live_in(items):
            arg = ops.ArgOp(reg)
            self.add(arg)
            self.registers.write(arg.d)

    def read(
        self, reg: HexagonRegisterType, where: str, add: Callable[[Operation], None]
    ) -> SSAValue:
        try:
            return self.registers.read(reg, add)
        except KeyError:
            raise NotSupported(
                f"{where}: reads {reg.asm_name()}, which holds a value made in a loop it is "
                "not an iteration value of"
            ) from None
        except NotSupported as e:
            raise NotSupported(f"{where}: {e}") from None

    def read_in_packet(
        self, reg: HexagonRegisterType, new: set[Unit] | None, inner: Registers,
        members: list[Operation], where: str,
    ) -> SSAValue:
        """
        A read inside a packet: registers in `new` as the packet writes them (views
        then go in the packet), the others as they were before it (views before it).
        """
        if not new:
            return self.read(reg, where, self.add)
        before = self.registers.held
        seen = Registers({
            u: inner.held[u] if u in new else before[u]
            for u in units(reg) if u in new or u in before
        })
        try:
            return seen.read(reg, members.append)
        except KeyError:
            raise NotSupported(
                f"{where}: reads {reg.asm_name()} before anything writes it") from None
        except NotSupported as e:
            raise NotSupported(f"{where}: {e}") from None

    def items(self, items: Sequence[Item]) -> None:
        for item in items:
            if isinstance(item, LoopItem):
                self.loop(item)
            else:
                self.packet(item)

    def packet(self, packet: DecodedPacket) -> None:
        inner = Registers()  # the values the packet's instructions make, inside it
        members: list[Operation] = []
        instructions: list[ops.Instruction] = []
        for i in packet.order:
            d = packet.decoded[i]
            where = _where(self.source, d.instruction.line)
            if d.op is ops.SyscallOp:
                regs = [RegType.from_name(f"r{n}") for n in sorted(self.since_barrier) if n <= 6]
                values = [self.read(reg, where, self.add) for reg in regs]
            else:
                values = [
                    self.read_in_packet(reg, packet.forwarded.get((i, name)), inner, members, where)
                    for name, reg in d.operands()
                ]
            op = d.build(values)
            try:
                op.verify()
            except VerifyException as e:
                raise DiagnosticException(f"{where}: {e}") from None
            members.append(op)
            instructions.append(op)
            for result in op.results:
                inner.write(result)
        problem = packet_problem(instructions)
        slots = machine.assign_slots(packet_names(instructions))
        if problem is not None or slots is None:
            problem = problem or "the packet does not fit the machine description"
            raise NotSupported(f"{packet.where}: {problem}")
        packet = PacketOp(members, slots)
        self.add(packet)
        outer = dict(zip(packet.inner_values(), packet.outs))
        for op in instructions:
            for result in op.results:
                self.registers.write(outer[result])
            if op.name in machine.BARRIERS:
                self.since_barrier = set()
            else:
                self.since_barrier |= {
                    u for r in op.results if isinstance(r.type, RegType) for _, u in units(r.type)
                }

    def carried(self, item: LoopItem) -> list[HexagonRegisterType]:
        """
        The loop's iteration values: registers the body writes that hold a value from
        before it (a pair whole where the body writes it whole), a counted loop's
        counter first.
        """
        written_regs = [
            reg for packet in _decoded_packets(item.body)
            for d in packet.decoded for _, reg in d.results()
        ]
        written = {u for reg in written_regs for u in units(reg)}
        if item.counter is not None:
            if not self.registers.has(item.counter):
                raise NotSupported(
                    f"{_where(self.source, item.line)}: the counted loop {item.label} has no "
                    "counter set before it")
            written -= set(units(item.counter))
        carried = [item.counter] if item.counter is not None else []
        for reg in self.registers.live():
            overlap = set(units(reg)) & written
            if not overlap:
                continue
            if len(units(reg)) > 1 and reg not in written_regs:
                carried += [_single(*u) for u in sorted(overlap)]
            else:
                carried.append(reg)
        return carried

    def loop(self, item: LoopItem) -> None:
        where = _where(self.source, item.line)
        carried = self.carried(item)
        inits = [self.read(reg, where, self.add) for reg in carried]
        trip = item.trip if item.trip is not None else _constant(inits[0])
        body = Block(arg_types=carried)
        outer_block, outer_registers = self.block, self.registers
        self.block, self.registers = body, self.registers.copy()
        for arg in body.args:
            self.registers.write(arg)
        self.items(item.body)
        yielded = [self.read(reg, where, self.add) for reg in carried]
        self.add(ops.YieldOp(*yielded))
        self.block, self.registers = outer_block, outer_registers
        loop = ops.LoopOp(trip, item.kind, inits, Region(body))
        self.add(loop)
        for packet in _decoded_packets(item.body):
            for unit in packet.written():
                self.registers.held.pop(unit, None)
        for result in loop.results:
            self.registers.write(result)


def _constant(value: SSAValue) -> int:
    """A counted loop's trip: its counter's first value, where a `tfri` sets it."""
    owner = value.owner
    if isinstance(owner, PacketOp):
        value = owner.inner_values()[value.index]  # type: ignore[union-attr]
        owner = value.owner
    if isinstance(owner, ops.TransferImmOp) and owner.signed_value() >= 1:
        return owner.signed_value()
    return 1


def import_packets(
    packets: Sequence[AsmPacket], name: str = "block", source: str = "<input>"
) -> ops.FuncOp:
    """
    Straight-line packets as an `hvx.func`: `hvx.arg`s for the registers it reads
    before writing, then a `vliw.packet` per packet (an `:endloop` marker is dropped).
    """
    decoded = [decode_packet(p, source) for p in packets]
    builder = FunctionBuilder(name, source)
    builder.arguments(decoded)
    builder.items(decoded)
    return builder.func


def parse_block(text: str, name: str = "block", source: str = "<input>") -> ModuleOp:
    """All the packets of `text`, taken as one straight line, in a module."""
    asm = parse_assembly(text, source)
    packets = [p for f in asm.functions for p in f.packets()]
    module = ModuleOp([import_packets(packets, name, source)])
    _verify(module, source)
    return module


def dissolve_packets(block: Block) -> None:
    """
    Take the instructions of every `vliw.packet` in `block` (and its loops) out, in
    an order that runs them one by one with the packet's meaning, so a packer can pack
    them anew.
    """
    for op in list(block.ops):
        if isinstance(op, ops.LoopOp):
            dissolve_packets(op.body.block)
        if not isinstance(op, PacketOp):
            continue
        written: set[Unit] = set()
        for inner in op.ops_inside():
            for value in inner.operands:
                outside = value.owner.parent_op() is not op
                if outside and set(units(value.type)) & written:  # type: ignore[arg-type]
                    raise NotSupported(
                        f"{inner.name}: reads a register its packet overwrites first")
            if isinstance(inner, ops.Instruction):
                for result in inner.results:
                    written |= set(units(result.type))  # type: ignore[arg-type]
        for value, result in zip(op.inner_values(), op.outs):
            result.replace_all_uses_with(value)
        end = op.body.block.last_op
        assert end is not None
        op.body.block.erase_op(end)  # its uses of the inner values go with it
        for inner in op.ops_inside():
            inner.detach()
            block.insert_op_before(inner, op)
        block.erase_op(op)


# ----------------------------------------------------------------------------
# Whole programs as the printer writes them
# ----------------------------------------------------------------------------

_COUNTED_TEST = re.compile(r"p0=cmp\.gt\((r\d+),#0\)")
_COUNTED_JUMP = re.compile(r"if\(p0\.new\)jump:t(\S+)")
_HARDWARE_SETUP = re.compile(r"(loop[01])\((\.?[\w.$]+),#(\d+)\)")
PROGRAM_DIRECTIVES = {".text", ".p2align", ".globl", ".section", ".bss", ".incbin", ".space"}


def _alone(packet: AsmPacket) -> str | None:
    """The packet's one instruction, compact, if it holds one."""
    return packet.instructions[0].compact if len(packet.instructions) == 1 else None


class ProgramReader:
    """Recovers the loops of a printed function from its labels and packets."""

    def __init__(self, function: AsmFunction, source: str):
        self.source = source
        self.elements: list[str | AsmPacket] = []  # labels and packets, in order
        for block in function.blocks:
            if block.label is not None:
                self.elements.append(block.label)
            self.elements += block.packets
        self.at = 0

    def where(self, line: int) -> str:
        return _where(self.source, line)

    def body(
        self, end: Callable[[AsmPacket], bool] | None, what: str, keep_end: bool = True
    ) -> list[Item]:
        """
        Items up to the packet `end` accepts, consumed; with `keep_end` it is the last
        item (unless it is a lone `nop`: the printer's empty end of a hardware loop).
        """
        items: list[Item] = []
        while self.at < len(self.elements):
            element = self.elements[self.at]
            self.at += 1
            if isinstance(element, str):
                items.append(self.counted(element))
                continue
            setup = _HARDWARE_SETUP.fullmatch(_alone(element) or "")
            if setup is not None:
                items.append(self.hardware(element, *setup.groups()))
                continue
            if end is not None and end(element):
                if keep_end and _alone(element) != "nop":
                    items.append(decode_packet(element, self.source))
                return items
            if element.endloop or any(i.is_branch for i in element.instructions):
                raise NotSupported(
                    f"{self.where(element.line)}: '{element.text}' is not supported here")
            items.append(decode_packet(element, self.source))
        if end is not None:
            raise DiagnosticException(f"{self.source}: {what} does not end")
        return items

    def hardware(self, setup: AsmPacket, kind: str, label: str, trip: str) -> LoopItem:
        if self.at >= len(self.elements) or self.elements[self.at] != label:
            raise NotSupported(
                f"{self.where(setup.line)}: {kind} must be followed by its label {label}")
        self.at += 1
        body = self.body(lambda p: p.endloop is not None, f"the {kind} loop at {label}")
        last = self.elements[self.at - 1]
        assert isinstance(last, AsmPacket)
        if last.endloop != "end" + kind:
            raise NotSupported(
                f"{self.where(last.line)}: :{last.endloop} closes the {kind} loop {label}")
        return LoopItem(kind, int(trip), label, body, setup.line)

    def counted(self, label: str) -> LoopItem:
        counter: list[RegType] = []

        def closes(packet: AsmPacket) -> bool:
            if len(packet.instructions) != 2:
                return False
            test = _COUNTED_TEST.fullmatch(packet.instructions[0].compact)
            jump = _COUNTED_JUMP.fullmatch(packet.instructions[1].compact)
            if test is None or jump is None or jump.group(1) != label:
                return False
            counter.append(RegType.from_name(test.group(1)))
            return True

        start = self.at
        # the compare-and-branch packet is the loop itself
        body = self.body(closes, f"the counted loop {label}", keep_end=False)
        line = next((e.line for e in self.elements[start:] if isinstance(e, AsmPacket)), 0)
        return LoopItem("counted", None, label, body, line, counter[0])


def _function_ir(function: AsmFunction, source: str) -> ops.FuncOp:
    if function.name is None:
        line = function.line
        raise DiagnosticException(f"{_where(source, line)}: code before any function label")
    reader = ProgramReader(function, source)
    elements = reader.elements
    last = elements[-1] if elements else None
    if function.name != "_start" and isinstance(last, AsmPacket) and _alone(last) == "jumprr31":
        elements.pop()  # the return the printer adds
    items = reader.body(None, "")
    builder = FunctionBuilder(function.name, source)
    builder.arguments(items)
    builder.items(items)
    return builder.func


def _buffer(data: AsmData, source: str) -> ops.BufferOp:
    where = _where(source, data.line)
    for directive in data.directives:
        args = directive.arguments()
        if directive.name == ".space" and len(args) == 1:
            return ops.BufferOp(data.name, int(args[0], 0))
        if directive.name == ".incbin" and len(args) == 3:  # a weight-store entry
            return ops.BufferOp(data.name, int(args[2], 0), store=args[0].strip('"'), key="")
        if directive.name == ".incbin" and len(args) == 1:  # a model input file
            path = args[0].strip('"')
            size = os.path.getsize(path) if os.path.isfile(path) else 128
            return ops.BufferOp(data.name, size, file=path)
    raise NotSupported(f"{where}: {data.name} is not a buffer (.space or .incbin)")


def _verify(module: ModuleOp, source: str) -> None:
    try:
        module.verify()
    except VerifyException as e:
        message = str(e).strip().splitlines()[0]
        raise DiagnosticException(f"{source}: the imported IR does not verify: {message}") from None


def parse_program(text: str, source: str = "<input>") -> ModuleOp:
    """What `-t hexagon-asm` printed, back into the module of `hvx.func`s and buffers."""
    asm = parse_assembly(text, source)
    for directive in asm.directives:
        if directive.name not in PROGRAM_DIRECTIVES:
            raise NotSupported(
                f"{_where(source, directive.line)}: directive {directive.name} is not supported")
    buffers = [_buffer(d, source) for d in asm.data]
    funcs = [_function_ir(f, source) for f in asm.functions]
    module = ModuleOp([*buffers, *funcs])
    _verify(module, source)
    return module

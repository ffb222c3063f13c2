"""
The machine description's forwarding (`.cur`/`.new`) and packet rules against
llvm-mc-19, which rejects illegal packets (slots, HVX resources, a register written
twice, a `.cur`/`.new` the hardware has no encoding or no valid producer for) but not
a read, inside a packet, of a register another instruction of the packet writes (that
read sees the old value).

For (producer, consumer) pairs drawn from the classes of `machine.INSTRUCTIONS`, the
consumer reads, in one packet, what the producer writes there. The machine's verdict
is `packet_problem` (which asks `machine.forwarding` how the read forwards): where it
is legal, the packet as our printer writes it (with its `.cur`/`.new` marks) must
assemble; where it is not, the packet with the mark the read would need must not.
Packets of independent instructions check the slot and resource rules the same way.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from xdsl.ir import SSAValue

from mobile_opt.backends.hexagon import harness
from mobile_opt.dialects.vliw import machine
from mobile_opt.backends.hexagon.asm_parser import dissolve_packets, parse_block
from mobile_opt.dialects.vliw.packets import (
    ForwardedRead,
    current_loads,
    forwarded_reads,
    is_scalar_result,
    new_operands,
    packet_problem,
    producers,
)
from mobile_opt.dialects.hvx import ops

toolchain = pytest.mark.usefixtures("hexagon_toolchain")

CUR, NEW = machine.Forwarding.CURRENT, machine.Forwarding.NEW
VECTOR_LOADS = frozenset({"hvx.vmem_load", "hvx.vmem_load_pi", "hvx.vmemu_load"})

# Register conventions: producers write v0 (v1:0) or r3 and read v10, v11, r4, r5, q1
# and base r2; consumers read v0 (a half or pair with it) or r3, write v20 (v21:20),
# r20 or q2, and store through r1.

HVX_PRODUCERS = [
    "v0.w = vadd(v10.w,v11.w)",  # CVI_VA
    "v0 = v10",
    "v0 = vxor(v0,v0)",
    "v0 = vmux(q1,v10,v11)",
    "if (q1) v0.w += v10.w",  # a Q-predicated accumulate
    "v1:0 = vcombine(v10,v11)",  # CVI_VA_DV
    "v1:0.uh = vzxt(v10.ub)",
    "v0.w = vrmpy(v10.ub,r4.b)",  # CVI_VX
    "v0.w += vrmpy(v10.ub,r4.b)",
    "v1:0.h = vmpy(v10.ub,r4.b)",  # CVI_VX_DV
    "v0.w = vmpye(v10.w,v11.uh)",
    "v0 = vsplat(r4)",  # CVI_VX_LATE
    "v0 = vand(q1,r4)",
    "v0.w = vasr(v10.w,r4)",  # CVI_VS
    "v0.h = vround(v10.w,v11.w):sat",
    "v0 = valign(v10,v11,r4)",  # CVI_VP
    "v0 = valign(v10,v11,#1)",
    "v1:0 = vshuff(v10,v11,r4)",  # CVI_VP_VS
    "v0 = vmem(r2+#0)",  # CVI_VM_LD
    "v0 = vmem(r2++#1)",
    "v0 = vmemu(r2+#0)",  # CVI_VM_LDU
]
VECTOR_STORES = [
    "vmem(r1+#0) = v0",
    "vmem(r1++#1) = v0",
    "if (q2) vmem(r1+#0) = v0",
    "vmemu(r1+#0) = v0",
]
VECTOR_LOAD_PRODUCERS = ["v0 = vmem(r2+#0)", "v0 = vmem(r2++#1)", "v0 = vmemu(r2+#0)"]
HVX_CONSUMERS = [
    "v20.w = vadd(v0.w,v11.w)",  # CVI_VA
    "v20.w = vsub(v11.w,v0.w)",
    "q2 = vcmp.gt(v0.w,v11.w)",
    "v20 = vmux(q1,v0,v11)",
    "if (q1) v20.w += v0.w",
    "v20 = v0",
    "v21:20 = vcombine(v0,v11)",  # CVI_VA_DV
    "v21:20.uh = vzxt(v0.ub)",
    "v20.w = vrmpy(v0.ub,r4.b)",  # CVI_VX
    "v20.w += vrmpy(v0.ub,r4.b)",
    "v0.w += vrmpy(v10.ub,r4.b)",  # the loaded vector as accumulator: written twice
    "v21:20.h = vmpy(v0.ub,r4.b)",  # CVI_VX_DV
    "v21:20.h = vmpa(v1:0.ub,r4.b)",  # a pair with the loaded vector as its low half
    "v20.w = vmpye(v11.w,v0.uh)",
    "q2 = vand(v0,r4)",  # CVI_VX_LATE
    "v20.w = vasr(v0.w,r4)",  # CVI_VS
    "v20.w += vasl(v0.w,r4)",
    "v20 = valign(v0,v11,r4)",  # CVI_VP
    "v20 = vlalign(v11,v0,#1)",
    "v21:20 = vdeal(v0,v11,r4)",  # CVI_VP_VS
    *VECTOR_STORES,  # CVI_VM_ST, CVI_VM_STU
]
SCALAR_PRODUCERS = [
    "r3 = add(r4,#1)",  # ALU32
    "r3 = add(r4,r5)",
    "r3 = r4",
    "r3 = ##100000",
    "r3 = ##buf",
    "r3 = min(r4,r5)",  # XTYPE
    "r3 = memw(r2+#4)",  # LD
    "r3 = memw(r2++#4)",
    "r3 = memub(r2+r4<<#0)",
    "r3:2 = memd(r6+#8)",  # a pair: its high half r3 read
]
SCALAR_CONSUMERS = [
    "memw(r1+#0) = r3",  # the stored value
    "memb(r1+r5<<#0) = r3",
    "memw(r3+#0) = r5",  # the address: no .new there
    "vmem(r3+#0) = v10",
    "v20 = vsplat(r3)",  # an HVX reader of a scalar
    "r20 = add(r3,#1)",
]


# ---------------------------------------------------------------- helpers


def llvm_accepts(packets: list[str], folder: Path) -> list[bool]:
    """Which packets (one a line) llvm-mc-19 assembles, in one run of it."""
    source = folder / "packets.s"
    source.write_text("".join(p + "\n" for p in packets))
    result = subprocess.run(
        [harness.tool(harness.ASSEMBLER), *harness.ASSEMBLER_FLAGS, "-filetype=obj",
         source.name, "-o", "packets.o"],
        capture_output=True, text=True, cwd=folder,
    )
    rejected = {int(n) for n in re.findall(r"packets\.s:(\d+):\d+: error", result.stderr)}
    assert (result.returncode == 0) == (not rejected), result.stderr
    return [line not in rejected for line in range(1, len(packets) + 1)]


def chained(*lines: str) -> list[ops.Instruction]:
    """
    The instructions in program order, each reading what the ones before it write
    (parsed as packets of one, then taken out of them): in one packet, those reads
    are reads of the new values.
    """
    module = parse_block("\n".join(f"{{ {line} }}" for line in lines))
    block = module.body.block.first_op.body.block  # type: ignore[union-attr]
    dissolve_packets(block)
    return [op for op in block.ops if isinstance(op, ops.Instruction)]


def independent(*lines: str) -> list[ops.Instruction]:
    """Each instruction parsed alone: every read is of a value from before the packet."""
    members = []
    for line in lines:
        module = parse_block(f"{{ {line} }}")
        members += [op for op in module.walk() if isinstance(op, ops.Instruction)]
    return members


def result_read(read: ForwardedRead) -> SSAValue:
    """The producer's result the consumer reads."""
    value = getattr(read.consumer, read.operand)
    (result,) = [r for p, r in producers(value) if p is read.producer]
    return result


def forwarding_of(read: ForwardedRead) -> machine.Forwarding | None:
    """What `machine.forwarding` says of the read."""
    result = result_read(read)
    return machine.forwarding(
        read.producer.name, read.consumer.name, read.operand, is_scalar_result(result),
        first_result=result.index == 0,
    )


def packet_text(members: list[ops.Instruction], reads: list[ForwardedRead], legal: bool) -> str:
    """
    The packet as text. Legal: as our printer writes it (the marks of the machine's
    forwarding kinds). Illegal: each read of a new value with the mark it would need:
    the machine's kind where it has one, else `.cur` on a vector load whose vector is
    read, `.new` on the consumer's operand for any other value.
    """
    if legal:
        current = current_loads(reads)
        lines = [inst.packet_line(new_operands(reads, inst), inst in current) for inst in members]
        return "{ " + "; ".join(lines) + " }"

    def is_current(read: ForwardedRead) -> bool:
        if read.kind is not None:
            return read.kind is CUR
        return read.producer.name in VECTOR_LOADS and result_read(read).index == 0

    current = {r.producer for r in reads if is_current(r)}
    new = [(r.consumer, r.operand) for r in reads if not is_current(r)]
    lines = [
        inst.packet_line({o for c, o in new if c is inst}, inst in current) for inst in members
    ]
    return "{ " + "; ".join(lines) + " }"


def verdicts(cases: list[tuple[str, ...]], folder: Path) -> list[tuple[str, bool, bool]]:
    """(packet text, the machine's verdict, llvm-mc's) of each chained case."""
    texts, ours = [], []
    for lines in cases:
        members = chained(*lines)
        reads = forwarded_reads(members)
        assert reads, f"{lines}: no instruction reads what another writes"
        for read in reads:
            assert read.kind is forwarding_of(read)
        legal = packet_problem(members, reads) is None
        texts.append(packet_text(members, reads, legal))
        ours.append(legal)
    return list(zip(texts, ours, llvm_accepts(texts, folder)))


def disagreements(results: list[tuple[str, bool, bool]]) -> list[str]:
    return [
        f"{text}: the machine says {'legal' if ours else 'illegal'}, llvm-mc "
        f"{'accepts' if llvm else 'rejects'} it"
        for text, ours, llvm in results if ours != llvm
    ]


def classes(lines: list[str]) -> set[str]:
    return {machine.INSTRUCTIONS[op.name] for line in lines for op in independent(line)}


# ---------------------------------------------------------------- forwarding


def test_tables_cover_the_classes():
    hvx = {name for name in machine.CLASSES if name.startswith("CVI_")}
    assert classes(HVX_PRODUCERS) == hvx - {"CVI_VM_ST", "CVI_VM_STU"}
    assert classes(HVX_CONSUMERS) == hvx - {"CVI_VM_LD", "CVI_VM_LDU"}
    assert classes(SCALAR_PRODUCERS) == machine.SCALAR_PRODUCER_CLASSES


@toolchain
@pytest.mark.parametrize("table", ["hvx-to-store", "load-to-hvx", "scalar"])
def test_forwarding_agrees_with_llvm(table, tmp_path):
    producers_, consumers = {
        "hvx-to-store": (HVX_PRODUCERS, VECTOR_STORES),
        "load-to-hvx": (VECTOR_LOAD_PRODUCERS, HVX_CONSUMERS),
        "scalar": (SCALAR_PRODUCERS, SCALAR_CONSUMERS),
    }[table]
    cases = [(p, c) for p in producers_ for c in consumers]
    results = verdicts(cases, tmp_path)
    assert not disagreements(results), "\n".join(disagreements(results))
    legal = sum(ours for _, ours, _ in results)
    assert 0 < legal < len(results), "the table should hold legal and illegal packets"


# (instructions in program order, the machine.forwarding kind of each in-packet read,
# whether the packet is legal): the rules by name
PINNED = [
    # an aligned load's vector feeds the HVX instructions of its packet (.cur) ...
    (("v0 = vmem(r2+#0)", "v20.w = vadd(v0.w,v11.w)"), [CUR], True),
    (("v0 = vmem(r2++#1)", "v21:20.h = vmpy(v0.ub,r4.b)"), [CUR], True),
    (("v0 = vmem(r2+#0)", "vmem(r1+#0) = v0"), [CUR], True),
    (("v0 = vmem(r2+#0)", "v21:20.h = vmpa(v1:0.ub,r4.b)"), [CUR], True),
    # ... an unaligned one's does not, nor does a post-increment's new base
    (("v0 = vmemu(r2+#0)", "v20.w = vadd(v0.w,v11.w)"), [None], False),
    (("v0 = vmem(r2++#1)", "vmem(r2+#0) = v10"), [None], False),
    (("v0 = vmem(r2++#1)", "v20 = vsplat(r2)"), [None], False),
    # an HVX result stored by an aligned, unpredicated vector store (.new) ...
    (("v0.w = vadd(v10.w,v11.w)", "vmem(r1+#0) = v0"), [NEW], True),
    (("v1:0.h = vmpy(v10.ub,r4.b)", "vmem(r1++#1) = v1"), [NEW], True),
    (("if (q1) v0.w += v10.w", "vmem(r1+#0) = v0"), [NEW], True),
    # ... not by a predicated or an unaligned one
    (("v0.w = vadd(v10.w,v11.w)", "if (q2) vmem(r1+#0) = v0"), [None], False),
    (("v0.w = vadd(v10.w,v11.w)", "vmemu(r1+#0) = v0"), [None], False),
    # a vmemu load may be .new but leaves no slot for the store
    (("v0 = vmemu(r2+#0)", "vmem(r1+#0) = v0"), [NEW], False),
    # a scalar register made by ALU32, XTYPE or LD, stored as .new ...
    (("r3 = add(r4,#1)", "memw(r1+#0) = r3"), [NEW], True),
    (("r3 = memw(r2+#4)", "memw(r1+#0) = r3"), [NEW], True),
    (("r3 = min(r4,r5)", "memb(r1+r5<<#0) = r3"), [NEW], True),
    # ... not half of a pair, not a post-incremented base, not as an address
    (("r3:2 = memd(r6+#8)", "memw(r1+#0) = r3"), [None], False),
    (("r3 = memw(r2++#4)", "memw(r1+#0) = r2"), [None], False),
    (("r3 = add(r4,#1)", "memw(r3+#0) = r5"), [None], False),
    # arithmetic never forwards to arithmetic
    (("v0.w = vadd(v10.w,v11.w)", "v20.w = vadd(v0.w,v11.w)"), [None], False),
    (("r3 = add(r4,#1)", "r20 = add(r3,#1)"), [None], False),
    # a scalar new-value store takes the packet's only store
    (("r3 = add(r4,#1)", "memw(r1+#0) = r3", "memw(r6+#0) = r5"), [NEW], False),
    (("r3 = add(r4,#1)", "memw(r1+#0) = r3", "vmem(r6+#0) = v10"), [NEW], False),
    (("r3 = add(r4,#1)", "memw(r1+#0) = r3", "r5 = memw(r6+#0)"), [NEW], True),
    # a vector new-value store does not
    (("v0.w = vadd(v10.w,v11.w)", "vmem(r1+#0) = v0", "memw(r6+#0) = r5"), [NEW], True),
    # GCD² Fig. 5: load .cur -> add -> store .new, one packet
    (("v0 = vmem(r2+#0)", "v20.w = vadd(v0.w,v11.w)", "vmem(r1+#0) = v20"), [CUR, NEW], True),
]


@toolchain
def test_pinned_forwarding_rules(tmp_path):
    texts = []
    for lines, kinds, legal in PINNED:
        members = chained(*lines)
        reads = forwarded_reads(members)
        assert [forwarding_of(r) for r in reads] == kinds, lines
        assert (packet_problem(members, reads) is None) == legal, lines
        texts.append(packet_text(members, reads, legal))
    results = [(t, legal, llvm) for t, (_, _, legal), llvm
               in zip(texts, PINNED, llvm_accepts(texts, tmp_path))]
    assert not disagreements(results), "\n".join(disagreements(results))
    # the printer writes the marks the machine chose
    text_of = {lines: text for (lines, _, _), text in zip(PINNED, texts)}
    assert text_of[("v0 = vmem(r2+#0)", "v20.w = vadd(v0.w,v11.w)")] == (
        "{ v0.cur = vmem(r2+#0); v20.w = vadd(v0.w,v11.w) }")
    assert text_of[("v0.w = vadd(v10.w,v11.w)", "vmem(r1+#0) = v0")] == (
        "{ v0.w = vadd(v10.w,v11.w); vmem(r1+#0) = v0.new }")
    assert text_of[("r3 = add(r4,#1)", "memw(r1+#0) = r3")] == (
        "{ r3 = add(r4,#1); memw(r1+#0) = r3.new }")
    assert text_of[("v0 = vmem(r2++#1)", "vmem(r2+#0) = v10")] == (
        "{ v0 = vmem(r2++#1); vmem(r2.new+#0) = v10 }")
    assert texts[-1] == (
        "{ v0.cur = vmem(r2+#0); v20.w = vadd(v0.w,v11.w); vmem(r1+#0) = v20.new }")


# ---------------------------------------------------------------- slots and resources

# (independent instructions, whether they fit one packet): reads are of old values
PACKETS = [
    (("v0 = vmem(r1+#0)", "r2 = memw(r3+#0)", "r4 = memw(r5+#0)"), False),  # three loads
    (("v0 = vmem(r1+#0)", "v1 = vmem(r1+#1)"), False),  # one vector load port
    (("v0 = vmem(r1+#0)", "v1 = vmemu(r1+#1)"), False),
    (("v0 = vmem(r1+#0)", "r2 = memw(r3+#0)"), True),
    (("v1:0.h = vmpy(v2.ub,r0.b)", "v5:4.h = vmpy(v6.ub,r1.b)"), False),  # both multipliers
    (("v1:0.h = vmpy(v2.ub,r0.b)", "v4.w = vrmpy(v6.ub,r1.b)"), False),
    (("v0.w = vrmpy(v2.ub,r0.b)", "v1.w = vrmpy(v6.ub,r1.b)"), True),  # one each
    (("v0 = vsplat(r0)", "v3:2.h = vmpy(v6.ub,r1.b)"), False),
    (("v0 = vsplat(r0)", "v1.w = vrmpy(v6.ub,r1.b)"), True),
    (("v0.w = vasr(v1.w,r0)", "v2.w = vasl(v3.w,r1)"), False),  # one shifter
    (("v1:0 = vshuff(v2,v3,r4)", "v5.w = vasr(v6.w,r1)"), False),
    (("v0 = valign(v1,v2,r0)", "v3 = valign(v4,v5,r1)"), False),  # one permute unit
    (("v1:0.uh = vzxt(v2.ub)", "v5:4.h = vmpy(v6.ub,r1.b)"), True),
    (("v1:0.uh = vzxt(v2.ub)", "v5:4.h = vmpy(v6.ub,r1.b)", "v7.w = vadd(v8.w,v9.w)"), False),
    (("v1:0.uh = vzxt(v2.ub)", "v7.w = vadd(v8.w,v9.w)", "v10.w = vsub(v8.w,v9.w)"), True),
    (("v1:0.uh = vzxt(v2.ub)", "v4.w = vasr(v6.w,r1)", "v7:6.h = vmpy(v8.ub,r1.b)"), False),
    (("vmem(r1+#0) = v0", "v1 = vmemu(r2+#0)"), False),  # a store and vmemu: slot 0 twice
    (("vmemu(r1+#0) = v0", "vmem(r2+#0) = v1"), False),
    (("vmemu(r1+#0) = v0", "r2 = memw(r3+#0)"), False),  # vmemu keeps slot 1 free
    (("v0 = vmemu(r1+#0)", "memw(r2+#0) = r3"), False),
    (("v0 = vmemu(r1+#0)", "r2 = add(r3,#1)", "r4 = add(r5,#1)"), True),
    (("v0 = vmem(r1+#0)", "vmem(r2+#0) = v3"), True),
    (("vmem(r1+#0) = v0", "memw(r2+#0) = r3"), True),
    (("vmem(r1+#0) = v0", "r2 = memw(r3+#0)"), True),
    (("memw(r1+#0) = r2", "memw(r3+#4) = r4"), True),
    (("r0 = ##100000", "r1 = ##200000", "r2 = min(r3,r4)"), False),  # five words
    (("r0 = ##100000", "r2 = min(r3,r4)", "v0 = vmem(r1+#0)"), True),
    (("v0.w = vadd(v1.w,v2.w)", "v0.w = vsub(v1.w,v2.w)"), False),  # v0 written twice
    (("r1 = add(r2,#1)", "r1 = add(r3,#1)"), False),
    (("v1:0 = vcombine(v2,v3)", "v1.w = vadd(v4.w,v5.w)"), False),
    (("v0 = vmem(r1++#1)", "r1 = add(r2,#1)"), False),  # the post-increment writes r1
    (("v0.w = vadd(v1.w,v2.w)", "v3.w = vadd(v0.w,v1.w)"), True),  # reads the old v0
    (("v0 = v1", "v1 = v0"), True),  # a swap
    (("r3 = add(r4,#1)", "memw(r1+#0) = r3", "v0 = vmem(r3+#0)"), True),  # old r3
]


@toolchain
def test_slots_and_resources_agree_with_llvm(tmp_path):
    texts, ours = [], []
    for lines, fits in PACKETS:
        members = independent(*lines)
        assert not forwarded_reads(members)
        legal = packet_problem(members) is None
        assert legal == fits, f"{lines}: {packet_problem(members)}"
        texts.append("{ " + "; ".join(lines) + " }")
        ours.append(legal)
    results = list(zip(texts, ours, llvm_accepts(texts, tmp_path)))
    assert not disagreements(results), "\n".join(disagreements(results))


OFFSET_FORMS = {
    "r3 = memw(r2+#{})": range(-4100, 4101, 4),
    "memw(r2+#{}) = r3": range(-4100, 4101, 4),
    "r5:4 = memd(r2+#{})": range(-8200, 8201, 8),
}
FULL_PACKET = ("v9.w += vrmpy(v18.ub,r26.b)", "v6.w += vrmpy(v18.ub,r27.b)",
               "v2.w = vmin(v2.w,v19.w)")


@toolchain
def test_offset_extenders_agree_with_llvm(tmp_path):
    """
    An offset beyond its field takes an extender word, which a packet of four other
    instructions has no room for: where the machine sees the word, llvm-mc must reject.
    """
    texts, ours = [], []
    for form, offsets in OFFSET_FORMS.items():
        for offset in (o for o in offsets if abs(o) < 64 or abs(o) > 4000):
            lines = (form.format(offset), *FULL_PACKET)
            texts.append("{ " + "; ".join(lines) + " }")
            ours.append(packet_problem(independent(*lines)) is None)
    assert not all(ours) and any(ours)
    results = list(zip(texts, ours, llvm_accepts(texts, tmp_path)))
    assert not disagreements(results), "\n".join(disagreements(results))


def test_parser_reads_packets_the_machine_way():
    """parse_block takes what the machine takes, and rejects the rest with its reason."""
    for lines, fits in PACKETS:
        text = "{ " + "; ".join(lines) + " }"
        if fits:
            parse_block(text)
        else:
            with pytest.raises(Exception, match="fit|write"):
                parse_block(text)

"""
The machine description against LLVM: every instruction op has an entry, and for
every packet of two, three and four sample instructions the description's `fits`
agrees with what `llvm-mc-19` accepts (slots, HVX resources, the extender word) —
except that LLVM may compress two scalar instructions into one duplex word, which the
description does not model: there it is conservative, never the other way round.
"""

from __future__ import annotations

import itertools
import re
import subprocess

import pytest

from mobile_opt.backends.hexagon import harness
from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.hvx import HVX, ops

SAMPLES = {
    "hvx.vrmpy_acc": "v0.w += vrmpy(v1.ub,r0.b)",
    "hvx.vrmpy": "v2.w = vrmpy(v3.ub,r1.b)",
    "hvx.vmpy": "v5:4.h = vmpy(v6.ub,r2.b)",
    "hvx.vmpa": "v9:8.h = vmpa(v11:10.ub,r3.b)",
    "hvx.vadd_w": "v12.w = vadd(v13.w,v14.w)",
    "hvx.vmax_w": "v15.w = vmax(v16.w,v17.w)",
    "hvx.vasr_w": "v18.w = vasr(v19.w,r4)",
    "hvx.valign": "v20 = valign(v21,v22,r5)",
    "hvx.vdeal": "v25:24 = vdeal(v26,v27,r6)",
    "hvx.vmem_load": "v28 = vmem(r7+#0)",
    "hvx.vmem_store": "vmem(r8+#0) = v29",
    "hvx.vsplat": "v30 = vsplat(r9)",
    "hvx.memw_load": "r10 = memw(r11+#0)",
    "hvx.memd_load_pi": "r13:12 = memd(r14++#8)",
    "hvx.addi": "r15 = add(r16,#1)",
    "hvx.vsat_ub": "v31.ub = vsat(v23.h,v7.h)",
    "hvx.vmpye": "v26.w = vmpye(v1.w,v2.uh)",
    "hvx.vzxt_b": "v27:26.uh = vzxt(v1.ub)",
    "hvx.min": "r17 = min(r18,r19)",
    "hvx.memw_store": "memw(r20+#0) = r21",
    "hvx.tfri": "r22 = ##100000",
    "hvx.vcmp_gt_w": "q0 = vcmp.gt(v1.w,v2.w)",
    "hvx.vmemu_store": "vmemu(r23+#0) = v9",
    "hvx.vmemu_load": "v6 = vmemu(r24+#0)",
    "hvx.vround_h": "v7.h = vround(v1.w,v2.w):sat",
}


def _written(text: str) -> set[str]:
    target = re.match(r"\s*([vrq][\d:]+)", text)
    if target is None or "=" not in text.split("(")[0] + "=":
        return set()
    regs = set()
    name = target.group(1)
    if ":" in name:
        high, low = name[1:].split(":")
        regs |= {f"{name[0]}{high}", f"{name[0]}{low}"}
    else:
        regs.add(name)
    post = re.search(r"\((r\d+)\+\+", text)
    if post:
        regs.add(post.group(1))
    return regs if not text.startswith(("vmem(", "vmemu(", "memw(")) else set()


def _words(combo: tuple[str, ...]) -> tuple[str, ...]:
    """The names `fits` takes: a `##` immediate adds its constant-extender word."""
    return tuple(w for name in combo for w in (
        (name, machine.EXTENDER) if "##" in SAMPLES[name] else (name,)))


def test_every_instruction_has_a_machine_description():
    for op in HVX.operations:
        if issubclass(op, ops.Instruction):
            machine.instr_class(op.name)  # raises if missing


@pytest.mark.usefixtures("hexagon_toolchain")
@pytest.mark.parametrize("size", [2, 3, 4])
def test_packets_fit_exactly_when_llvm_accepts_them(size, tmp_path):
    packets = [
        combo for combo in itertools.combinations(SAMPLES, size)
        if all(not (_written(SAMPLES[a]) & _written(SAMPLES[b]))
               for a, b in itertools.combinations(combo, 2))
    ]
    source = tmp_path / "packets.s"
    source.write_text("".join(
        "{ " + "; ".join(SAMPLES[n] for n in combo) + " }\n" for combo in packets
    ))
    result = subprocess.run(
        [harness.tool(harness.ASSEMBLER), *harness.ASSEMBLER_FLAGS, "-filetype=obj",
         str(source), "-o", str(tmp_path / "packets.o")],
        capture_output=True, text=True,
    )
    rejected = {int(line) for line in re.findall(r"packets\.s:(\d+):\d+: error", result.stderr)}
    ours_not_llvm, llvm_not_ours = [], []
    for index, combo in enumerate(packets, 1):
        llvm, ours = index not in rejected, machine.fits(_words(combo))
        if ours and not llvm:
            ours_not_llvm.append(combo)
        if llvm and not ours and len(_words(combo)) <= 4:
            llvm_not_ours.append(combo)
    assert len(packets) > 100
    assert not ours_not_llvm, f"packets we would form that LLVM rejects: {ours_not_llvm[:5]}"
    assert not llvm_not_ours, f"packets of four words we reject but LLVM takes: {llvm_not_ours[:5]}"

    .text
    .p2align 4
scale:
    { r1 = ##buf; r2 = #4 }
.Lloop0:
    { loop0(.Lloop1,#2) }
.Lloop1:
    { v1.cur = vmem(r1+#0); v2.w = vadd(v1.w,v0.w) }
    { v3.w = vasr(v2.w,r5); vmem(r1++#1) = v3.new }:endloop0
    { r2 = add(r2,#-1) }
    { p0 = cmp.gt(r2,#0); if (p0.new) jump:t .Lloop0 }
    { jumpr r31 }
    .bss
    .p2align 7
    .globl buf
buf:
    .space 1024

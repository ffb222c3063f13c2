"""
Max pooling of 8-bit activations in any SIMD layout.

A pool never mixes channels, so it runs in the layout its input has, one vector of
P pixels × K channels at a time: for each output line, panel and channel group, the
maximum (`vmax`) of the tap windows, which `WindowReader` makes exactly as for a
convolution (`valign` for horizontal offsets, `vdeal` for stride 2). The input's
halo and padding lanes must hold 0, the smallest byte, so that padding never wins
(the lowering fills them so, or hands the pool a copy that is).

    for oh:  for panel:  for group:
        y = max over kh, kw of window(kh, kw)

Average pools are depthwise convolutions with unit weights, and global average
pools matrix products with unit weights (`quant_graph.py`): their arithmetic is the
convolution kernels'.
"""

from __future__ import annotations

from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import ImageGeometry
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder, loop_kinds
from mobile_opt.transforms.onnx_to_hvx.conv import VECTOR, ConvShape, WindowReader


def max_pool_kernel(
    name: str, shape: ConvShape, in_geo: ImageGeometry, out_geo: ImageGeometry,
    input_symbol: str, output_symbol: str,
) -> ops.FuncOp:
    """The kernel of a max pool of `shape` (kernel, stride, pads; channels unchanged)."""
    from mobile_opt.transforms.hvx_unroll import record_output_shape

    assert in_geo.layout is out_geo.layout
    k, p = in_geo.layout.columns_per_vector, in_geo.panel_rows
    b = KernelBuilder(name)
    reader = WindowReader(b, shape, in_geo, 1, input_symbol)
    pb_in, pb_out = in_geo.panel_bytes, out_geo.panel_bytes
    lp_in, lp_out = in_geo.line_panels, out_geo.line_panels
    sh, sw = shape.stride
    first_in = ((in_geo.halo_lines - shape.pads[0]) * lp_in + in_geo.halo_panels) * pb_in
    first_out = (out_geo.halo_lines * lp_out + out_geo.halo_panels) * pb_out
    out_panels = out_geo.data_panels
    kinds = loop_kinds([shape.out_height, out_panels, out_geo.groups])
    row_in = b(ops.AddImmOp(b(ops.AddressOp(input_symbol)), first_in))
    row_out = b(ops.AddImmOp(b(ops.AddressOp(output_symbol)), first_out))
    masked = shape.out_width % p != 0
    with b.loop(shape.out_height, kinds[0], [row_in, row_out]) as line_loop:
        row_in, row_out = line_loop.args
        pan_in, pan_out = b.copy(row_in), b.copy(row_out)
        valid = [b.fresh_const(shape.out_width * k)] if masked else []
        with b.loop(out_panels, kinds[1], [pan_in, pan_out, *valid]) as panel_loop:
            pan_in, pan_out, *valid = panel_loop.args
            mask = b(ops.Vsetq2Op(b(ops.MinOp(valid[0], b.const(VECTOR))))) if masked else None
            src, dst = b.copy(pan_in), b.copy(pan_out)
            with b.loop(out_geo.groups, kinds[2], [src, dst]) as group_loop:
                src, dst = group_loop.args
                result = None
                for kh in range(shape.kernel[0]):
                    line = src if kh == 0 else b(ops.AddImmOp(src, kh * lp_in * pb_in))
                    ptrs = [b(ops.AddImmOp(line, j * pb_in)) for j in reader.pointer_panels()]
                    for window in reader.group_windows(ptrs, 0).values():
                        result = window if result is None else b(ops.VmaxUbOp(result, window))
                if mask is not None:
                    b.add(ops.VmemStoreIfOp(mask, dst, result, 0, region=output_symbol))
                else:
                    b.add(ops.VmemStoreOp(dst, result, 0, region=output_symbol))
                group_loop.next(b(ops.AddImmOp(src, VECTOR)), b(ops.AddImmOp(dst, VECTOR)))
            pan_in = b(ops.AddImmOp(pan_in, sw * pb_in))
            pan_out = b(ops.AddImmOp(pan_out, pb_out))
            valid = [b(ops.AddImmOp(valid[0], -p * k))] if masked else []
            panel_loop.next(pan_in, pan_out, *valid)
        row_in = b(ops.AddImmOp(row_in, sh * lp_in * pb_in))
        row_out = b(ops.AddImmOp(row_out, lp_out * pb_out))
        line_loop.next(row_in, row_out)
    record_output_shape(b.func, shape.out_height * shape.out_width, shape.out_channels)
    return b.func

#!/bin/bash
# Fill .gpu_wheels/ (ignored by git) with the cp312 wheels that bench/gpu_env.sh installs on the
# lent NVIDIA machine, which has torch, onnx and onnxruntime but no network. onnx2torch converts
# the ONNX-only models for bench/e2e.py's PyTorch columns and imports torchvision (for its NMS and
# RoIAlign ops only); torchvision's image and video libraries are dropped from its wheel, so that
# the tree and the wheels stay under the 64 MiB the device tool carries.
set -euo pipefail
dest=${1:-.gpu_wheels}
torchvision=${TORCHVISION:-0.26.0}  # the release paired with the machine's torch 2.11
mkdir -p "$dest"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 -d "$dest" \
    pyopencl xdsl==0.74.0 immutabledict ordered-set pytools platformdirs siphash24 lark tqdm \
    onnx2torch "torchvision==$torchvision"
wheel=$(ls "$dest"/torchvision-"$torchvision"-*.whl)
python3 - "$wheel" <<'EOF'
import re, sys, zipfile
path = sys.argv[1]
drop = re.compile(r"torchvision\.libs/lib(nvjpeg|png|jpeg|webp|avcodec|avformat)|torchvision/(image|video_reader)\.so")
with zipfile.ZipFile(path) as src:
    items = [(i, src.read(i)) for i in src.infolist() if not drop.search(i.filename)]
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
    for info, data in items:
        if info.filename.endswith(".dist-info/RECORD"):
            data = b"".join(l for l in data.splitlines(True) if not drop.search(l.decode()))
        out.writestr(info, data)
EOF
du -sh "$dest"

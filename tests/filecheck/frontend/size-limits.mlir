// The importer sizes every tensor before anything holds it (dialects/limits.py): a
// tiny model that declares or computes a tensor past the limit, or a size past int64,
// is one line naming the file, the input or node, the size and the limit, exit 1.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py huge_tile tile.onnx
// RUN: %python %inputs/make_model.py dims62 dims62.onnx
// RUN: %python %inputs/make_model.py dynamic dynamic.onnx

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx tile.onnx --max-tensor-size 1GB | filecheck %s --check-prefix=TILE
// TILE:      [output]
// TILE-NEXT: mobile-translate: error: tile.onnx: node 'tile' (Tile): output 'y': [2147483648] (2147483648 elements) is 8.0 GiB, over the limit of 1.0 GiB a tensor (--max-tensor-size)
// TILE-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx dims62.onnx | filecheck %s --check-prefix=INT64
// INT64:      [output]
// INT64-NEXT: mobile-translate: error: dims62.onnx: input 'x': shape [4611686018427387904, 4611686018427387904] holds 21267647932558653966460912964485513216 elements, past the int64 range
// INT64-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=99999999999 --max-tensor-size 1GB | filecheck %s --check-prefix=DIM
// DIM:      [output]
// DIM-NEXT: mobile-opt: error: dynamic.onnx: input 'x': [99999999999, 3, 8, 8] (19199999999808 elements) is 69.8 TiB, over the limit of 1.0 GiB a tensor (--max-tensor-size)
// DIM-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=99999999999999999999 | filecheck %s --check-prefix=DIM64
// DIM64:      [output]
// DIM64-NEXT: mobile-opt: error: --dim N: N must be below 2^63, got 99999999999999999999
// DIM64-NEXT: [exit status 2]

// RUN: env MOBILE_OPT_MAX_TENSOR_BYTES=512 %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=1 | filecheck %s --check-prefix=ENV
// ENV:      [output]
// ENV-NEXT: mobile-opt: error: dynamic.onnx: initializer 'w': [8, 3, 3, 3] (216 elements) is 864 bytes, over the limit of 512 bytes a tensor (MOBILE_OPT_MAX_TENSOR_BYTES)
// ENV-NEXT: [exit status 1]

"""
Writes the input files a lowered DSP program `.incbin`s (zero bytes of each input
buffer's size) next to where it is assembled, so lit can run llvm-mc on it.

    python hvx_input_files.py LOWERED.mlir FOLDER
"""

import re
import sys
from pathlib import Path

text = Path(sys.argv[1]).read_text()
folder = Path(sys.argv[2])
folder.mkdir(parents=True, exist_ok=True)
for size, name in re.findall(r'hvx\.buffer @\S+ \{size = (\d+) : i64, file = "([^"]+)"\}', text):
    (folder / name).write_bytes(bytes(int(size)))

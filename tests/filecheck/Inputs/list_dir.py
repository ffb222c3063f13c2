"""
Prints the entries of a folder, hidden ones included, one a line, between an
`[entries]` and an `[end]` line, so that a check can tell there are no others.

    python list_dir.py FOLDER
"""

from __future__ import annotations

import os
import sys

print("[entries]")
for name in sorted(os.listdir(sys.argv[1])):
    print(name)
print("[end]")

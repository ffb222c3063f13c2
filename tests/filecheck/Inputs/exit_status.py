"""
Runs a command and prints what it wrote (stdout and stderr, interleaved as
written) between an `[output]` line and an `[exit status N]` line, so that one
filecheck checks both, and that nothing else was written:

    [output]
    mobile-opt: error: ...
    [exit status 1]

Exits 0 itself unless the command cannot be started.

    python exit_status.py COMMAND [ARG...]
"""

from __future__ import annotations

import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
text = done.stdout.decode(errors="replace")
print("[output]")
sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
print(f"[exit status {done.returncode}]")

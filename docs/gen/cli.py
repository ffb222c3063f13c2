"""
Writes docs/reference/cli/: one page per console script of pyproject.toml's
[project.scripts], its `--help` as argparse prints it (and each subcommand's), run from
this tree at a fixed width so that the pages do not depend on the terminal.

    python3 docs/gen/cli.py [--out DIR]
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tomllib

from common import GENERATED, REPO, parse_out, write_pages

HEADER = GENERATED.format(script="docs/gen/cli.py")
WIDTH = "100"


def scripts() -> dict[str, str]:
    """Console script name -> module, from pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {name: target.split(":")[0] for name, target in project["scripts"].items()}


@functools.cache
def help_text(module: str, *args: str) -> str:
    env = dict(os.environ, COLUMNS=WIDTH, LINES="50", NO_COLOR="1", PYTHONPATH=str(REPO),
               MOBILE_OPT_WEIGHT_DIR=os.environ.get("MOBILE_OPT_WEIGHT_DIR", "/tmp"))
    done = subprocess.run([sys.executable, "-m", module, *args, "--help"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{module} --help: exit {done.returncode}\n{done.stderr}")
    return done.stdout.rstrip()


def subcommands(text: str) -> list[str]:
    """The choices of a subparser, from its usage line (`{train,adapt,eval} ...`)."""
    usage = text.split("\n\n")[0]
    found = re.search(r"\{([\w,-]+)\} \.\.\.", usage)
    return found.group(1).split(",") if found else []


def page(name: str, module: str) -> str:
    text = help_text(module)
    lines = [HEADER + f"# `{name}`", "", f"`{module}`", "", "```text", text, "```", ""]
    for sub in subcommands(text):
        lines += [f"## `{name} {sub}`", "", "```text", help_text(module, sub), "```", ""]
    return "\n".join(lines)


def pages() -> dict[str, str]:
    tools = scripts()
    out = {f"{name}.md": page(name, module) for name, module in tools.items()}
    index = [HEADER + "# Command-line tools", "",
             "Every console script the package installs, with its `--help`. Each reports bad "
             "input as one line `TOOL: error: ...` and exits 1, a usage error likewise with "
             "exit 2 (see [Trust and limits](../../guide/trust.md)).", "",
             "| tool | |", "| --- | --- |"]
    for name, module in tools.items():
        usage = help_text(module).split("\n\n")
        summary = " ".join(usage[1].split()) if len(usage) > 1 else ""
        index.append(f"| [`{name}`]({name}.md) | {summary.replace('|', chr(92) + '|')} |")
    out["index.md"] = "\n".join(index)
    return out


if __name__ == "__main__":
    write_pages(parse_out("docs/reference/cli", __doc__), pages())

"""
Writes docs/reference/dialects/: one page per dialect of the universe, read off the op
and attribute classes themselves: each op's operands, results, properties, attributes,
regions, traits, assembly format and the rules its verifier checks (its verifier
methods' docstrings and the messages they raise), and each attribute's or type's
parameters.

    python3 docs/gen/dialects.py [--out DIR]
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tree's own mobile_opt

from common import GENERATED, md_cell, parse_out, write_pages  # noqa: E402
from xdsl.ir import Dialect, Operation  # noqa: E402
from xdsl.irdl import (  # noqa: E402
    OptOperandDef,
    OptPropertyDef,
    OptResultDef,
    VarOperandDef,
    VarResultDef,
)

from mobile_opt.universe import MOBILE_OPT_UNIVERSE  # noqa: E402

HEADER = GENERATED.format(script="docs/gen/dialects.py")


def _doc(obj: object) -> str:
    """The object's own docstring (a class does not inherit one), cleaned, or ''."""
    raw = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return inspect.cleandoc(raw) if raw else ""


def constraint(c: object) -> str:
    """A readable form of an IRDL constraint."""
    kind = type(c).__name__
    if kind == "RangeLengthConstraint":
        return constraint(c.constraint)
    if kind == "RangeOf":
        return constraint(c.constr)
    if kind == "BaseAttr":
        return c.attr.__name__
    if kind == "AnyAttr":
        return "any"
    if kind == "EqAttrConstraint":
        return str(c.attr)
    if kind == "AnyOf":
        return " | ".join(constraint(a) for a in c.attr_constrs)
    if kind == "ParamAttrConstraint":
        # a parameter held to its own kind (IntegerAttr's IntAttr value) says nothing
        params = [p for p in map(constraint, c.param_constrs) if p not in ("any", "IntAttr")]
        return c.base_attr.__name__ + ("<" + ", ".join(params) + ">" if params else "")
    if kind == "SymbolNameConstraint":
        return "symbol name"
    if kind == "AttrSetConstraint":
        return " | ".join(sorted(str(a) for a in c.values))
    if kind in ("IntConstraint", "AnyInt"):
        return "int"
    if kind == "EqIntConstraint":
        return str(c.value)
    if kind == "TypeVarConstraint":
        return f"{c.type_var.__name__} ({constraint(c.base_constraint)})"
    return kind


def _arity(definition: object) -> str:
    if isinstance(definition, (VarOperandDef, VarResultDef)):
        return "variadic"
    if isinstance(definition, (OptOperandDef, OptResultDef)):
        return "optional"
    return "single"


def _message(node: ast.expr) -> str | None:
    """The text of an exception's message: an f-string's fields as `{expr}`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value).replace("self.", "") + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _message(node.left), _message(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _unwrapped(func):
    """The op's own `verify_` where `irdl_op_definition` wrapped it, or None for xDSL's."""
    if func.__module__.startswith("mobile_opt."):
        return func
    own = inspect.getclosurevars(func).nonlocals.get("custom_verify")
    if inspect.isfunction(own) and own.__module__.startswith("mobile_opt."):
        return own
    return None


def _is_verifier(name: str) -> bool:
    return name.startswith(("verify", "_verify")) or name == "check_properties"


def verifier_rules(cls: type) -> list[str]:
    """
    The rules the verifier methods that `cls` itself defines check: their docstrings,
    then each message they raise (the verifier's own words for a broken rule).
    """
    rules: list[str] = []
    for name, member in cls.__dict__.items():
        func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        if not _is_verifier(name) or not inspect.isfunction(func):
            continue
        func = _unwrapped(func)
        if func is None:
            continue
        doc = inspect.getdoc(func)
        if doc:
            rules.append(" ".join(doc.split()))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                text = _message(node.exc.args[0])
                if text:
                    rules.append("`" + " ".join(text.split()).replace("`", "'") + "`")
    return list(dict.fromkeys(rules))


def _anchor(name: str) -> str:
    return name.replace(".", "").replace("_", "-").lower()


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("mobile_opt.")


def op_section(op: type[Operation], op_names: dict[type, str], shared: set[type]) -> list[str]:
    definition = op.get_irdl_definition()
    lines = [f"### `{op.name}` {{#{_anchor(op.name)}}}", ""]
    doc = _doc(op)
    if doc:
        lines += [doc, ""]
    if definition.assembly_format:
        lines += ["Syntax:", "", "```", f"{op.name} {definition.assembly_format}", "```", ""]
    else:
        lines += ["Syntax: its own parser and printer (see the op's `parse` and `print`).", ""]
    rows = [("operand", n, constraint(d.constr), _arity(d)) for n, d in definition.operands]
    rows += [("result", n, constraint(d.constr), _arity(d)) for n, d in definition.results]
    rows += [("region", n, "single block" if "SingleBlock" in type(d).__name__ else "region",
              "single") for n, d in definition.regions]
    for kind, table in (("property", definition.properties), ("attribute", definition.attributes)):
        for n, d in table.items():
            default = getattr(d, "default_value", None)
            arity = ("optional" if isinstance(d, OptPropertyDef) or "Opt" in type(d).__name__
                     else "required")
            if default is not None:
                arity = f"default `{default}`"
            rows.append((kind, n, constraint(d.constr), arity))
    if rows:
        lines += ["| kind | name | constraint | |", "| --- | --- | --- | --- |"]
        lines += [f"| {k} | `{n}` | `{md_cell(c)}` | {md_cell(a)} |" for k, n, c, a in rows]
        lines.append("")
    traits = sorted({type(t).__name__ for t in definition.traits})
    if traits:
        lines += ["Traits: " + ", ".join(f"`{t}`" for t in traits) + ".", ""]
    own = verifier_rules(op)
    inherited = [c for c in op.__mro__[1:] if _ours(c) and verifier_rules(c)]
    if own or inherited:
        lines += ["Verifier:", ""]
        lines += [f"- {rule}" for rule in own]
        for base in inherited:
            if base in op_names:
                name = op_names[base]
                lines.append(f"- the rules of [`{name}`](#{_anchor(name)})")
            elif base in shared:
                lines.append(f"- the rules shared by [`{base.__name__}`](#{_anchor(base.__name__)})")
        lines.append("")
    return lines


def attribute_section(attr: type) -> list[str]:
    name = getattr(attr, "name", attr.__name__)
    sigil = "!" if "Type" in attr.__name__ else "#"
    lines = [f"### `{sigil}{name}` {{#{_anchor(name)}}}", "", f"Class `{attr.__name__}`.", ""]
    doc = _doc(attr)
    if doc:
        lines += [doc, ""]
    try:
        params = attr.get_irdl_definition().parameters
    except (AttributeError, TypeError, ValueError):
        params = []
    if params:
        lines += ["| parameter | constraint |", "| --- | --- |"]
        lines += [f"| `{n}` | `{md_cell(constraint(getattr(p, 'constr', p)))}` |"
                  for n, p in params]
        lines.append("")
    rules = verifier_rules(attr)
    if rules:
        lines += ["Verifier:", ""] + [f"- {rule}" for rule in rules] + [""]
    return lines


def dialect_page(dialect: Dialect) -> str:
    ops = sorted(dialect.operations, key=lambda o: o.name)
    attrs = sorted(dialect.attributes, key=lambda a: getattr(a, "name", a.__name__))
    package = sys.modules[ops[0].__module__.rsplit(".", 1)[0]] if ops else None
    op_names = {op: op.name for op in ops}
    # verifier rules written once on a base class that is not an op itself
    users: dict[type, list[str]] = {}
    for op in ops:
        for base in op.__mro__[1:]:
            if _ours(base) and base not in op_names and verifier_rules(base):
                users.setdefault(base, []).append(op.name)
    lines = [HEADER + f"# The `{dialect.name}` dialect", ""]
    doc = _doc(package) if package else ""
    if doc:
        lines += [doc, ""]
    lines += [f"{len(ops)} operations, {len(attrs)} attributes and types.", ""]
    lines += ["| operation | summary |", "| --- | --- |"]
    for op in ops:
        summary = _doc(op).split("\n\n")[0].replace("\n", " ")
        lines.append(f"| [`{op.name}`](#{_anchor(op.name)}) | {md_cell(summary)} |")
    lines.append("")
    if users:
        lines += ["## Verifier rules shared by several operations", ""]
        for base, names in sorted(users.items(), key=lambda kv: kv[0].__name__):
            lines += [f"### `{base.__name__}` {{#{_anchor(base.__name__)}}}", ""]
            doc = _doc(base)
            if doc:
                lines += [doc, ""]
            lines += [f"- {rule}" for rule in verifier_rules(base)]
            lines += ["", "Applies to: " + ", ".join(f"`{n}`" for n in names) + ".", ""]
    lines += ["## Operations", ""]
    for op in ops:
        lines += op_section(op, op_names, set(users))
    if attrs:
        lines += ["## Attributes and types", ""]
        for attr in attrs:
            lines += attribute_section(attr)
    return "\n".join(lines)


def pages() -> dict[str, str]:
    dialects = [factory() for factory in MOBILE_OPT_UNIVERSE.all_dialects.values()]
    index = [HEADER + "# Dialects", "",
             "The IR's dialects, generated from their op and attribute classes. Every op "
             "prints in the syntax shown (its assembly format) and verifies the rules listed; "
             "`mobile-opt --print-op-generic` prints the generic form instead.", "",
             "| dialect | operations | attributes and types | |", "| --- | --- | --- | --- |"]
    out = {}
    for dialect in dialects:
        out[f"{dialect.name}.md"] = dialect_page(dialect)
        ops, attrs = list(dialect.operations), list(dialect.attributes)
        package = sys.modules[ops[0].__module__.rsplit(".", 1)[0]]
        summary = _doc(package).split("\n\n")[0].replace("\n", " ")
        index.append(f"| [`{dialect.name}`]({dialect.name}.md) | {len(ops)} | {len(attrs)} | "
                     f"{md_cell(summary)} |")
    out["index.md"] = "\n".join(index)
    return out


if __name__ == "__main__":
    write_pages(parse_out("docs/reference/dialects", __doc__), pages())

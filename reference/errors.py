"""Diagnostics of the reference backend."""

from __future__ import annotations


class ReferenceRunError(Exception):
    """
    A one-line, user-facing failure of a reference run: inputs that do not fit the
    function, IR the interpreter cannot run, or an op whose kernel failed (the
    message then names the op and its source location).
    """


class KernelError(ReferenceRunError):
    """An op that has no reference kernel, or operand values its kernel rejects."""

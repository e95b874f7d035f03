"""The source text of an arm's class, read from the file that defines it.

`inspect.getsource(cls)` finds a class's file through `sys.modules[cls.__module__]`. Every
conftest.py is a module named `conftest`, and the name holds only the conftest imported last: with
a second conftest loaded, the class is looked for in the wrong file and its source is not found.
A method's code object names its own file, so the class is found there instead, and its identity
does not depend on which other conftests a session loads.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
from typing import Any


def _defining_file(cls: type) -> str | None:
    """The file the class's own methods were compiled from (None when it defines none)."""
    for value in vars(cls).values():
        function = getattr(value, "__func__", value)  # a classmethod or staticmethod holds its function
        code = getattr(function, "__code__", None)
        if inspect.isfunction(function) and code is not None and function.__qualname__.startswith(cls.__qualname__ + "."):
            return code.co_filename
    return None


def _class_start(tree: ast.AST, qualname: str) -> int | None:
    """The 0-based first line (its first decorator's) of the class named `qualname` in `tree`."""
    found: list[int] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                if isinstance(child, ast.ClassDef) and name == qualname:
                    found.append(min([child.lineno, *(decorator.lineno for decorator in child.decorator_list)]) - 1)
                visit(child, f"{name}.<locals>." if not isinstance(child, ast.ClassDef) else f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found[0] if len(found) == 1 else None


def class_source(cls: type) -> str:
    """The class's source as `inspect.getsource` gives it when its module is the right one
    (OSError or TypeError when it cannot be found)."""
    filename = _defining_file(cls)
    module: Any = sys.modules.get(cls.__module__)
    if filename is None or getattr(module, "__file__", None) == filename:
        return inspect.getsource(cls)
    lines = linecache.getlines(filename)
    try:
        start = _class_start(ast.parse("".join(lines)), cls.__qualname__)
    except (SyntaxError, ValueError):
        start = None
    if start is None:
        raise OSError(f"could not find class {cls.__qualname__} in {filename}")
    return "".join(inspect.getblock(lines[start:]))

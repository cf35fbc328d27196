"""The package's layers (docs/DESIGN.md): data flows profile -> analysis -> render ->
commands, never back.

  analysis   imports no heapscope.render or heapscope.commands
             (report/ is the old rendering package, leaving)
  render     imports no heapscope.commands
  profile    imports none of heapscope.analysis, render, commands, report

Each module is imported alone in a fresh interpreter and sys.modules inspected, so what
it pulls in through other modules counts too. The module lists come from the package
directories: a new module is checked without being listed here. And no two modules of
the package import each other at module level, directly or through others (a cycle).
"""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import heapscope

PACKAGE = Path(heapscope.__file__).resolve().parent
ROOT = PACKAGE.parent

FORBIDDEN = {
    "analysis": ("heapscope.render", "heapscope.commands"),
    "render": ("heapscope.commands",),
    "profile": ("heapscope.analysis", "heapscope.render", "heapscope.commands"),
}


def modules(layer):
    """heapscope.LAYER and its modules (subpackages included)."""
    base = PACKAGE / layer
    out = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


CASES = [(layer, m) for layer in FORBIDDEN for m in modules(layer)]


def imported_by(module):
    """The heapscope modules in sys.modules after importing `module` alone."""
    code = (f"import sys, json, {module}; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.startswith('heapscope'))))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, f"import {module} failed:\n{res.stderr}"
    return json.loads(res.stdout)


def test_every_layer_has_modules():
    # a wrong PACKAGE or a renamed folder must not make the checks below vacuous
    for layer in FORBIDDEN:
        assert len(modules(layer)) > 3, layer


@pytest.mark.parametrize("layer,module", CASES, ids=[m for _, m in CASES])
def test_layer_imports_nothing_above_it(layer, module):
    bad = [m for m in imported_by(module) if m.startswith(FORBIDDEN[layer])]
    assert bad == [], f"{module} pulls in {', '.join(bad)}"


def module_imports(path: Path, name: str, known) -> set:
    """The package's modules `name` imports at module level (an import inside a function
    is deliberate and lazy). `from P import m` is an import of P.m when that is a module,
    of P otherwise."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in tree.body:
        for sub in ([node] if not isinstance(node, (ast.If, ast.Try)) else ast.walk(node)):
            if isinstance(sub, ast.Import):
                found.update(a.name for a in sub.names)
            elif isinstance(sub, ast.ImportFrom):
                base = sub.module or ""
                if sub.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - sub.level + 1] + ([base] if base else []))
                for a in sub.names:
                    found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base)
    return {m for m in found if m in known and m != name}


def test_no_import_cycles():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[name] = path
    edges = {name: module_imports(path, name, graph) for name, path in graph.items()}
    state, stack, cycles = {}, [], []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(edges[n]):
            if state.get(m) == "open":
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)

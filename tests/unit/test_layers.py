"""The package's layers (docs/DESIGN.md): data flows profile -> analysis -> render ->
commands, never back.

  analysis   imports no heapscope.render or heapscope.commands
  render     imports no heapscope.commands
  profile    imports none of heapscope.analysis, render, commands

Each module is imported alone in a fresh interpreter and sys.modules inspected, so what
it pulls in through other modules counts too. The module lists come from the package
directories: a new module is checked without being listed here. And no two modules of
the package import each other at module level, directly or through others (a cycle).
Read from the source: no analysis module prints, writes a file or starts a process, and
no module imports another's private (_underscore) names.
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


# What the imports cannot show: analysis builds plain data, so it never prints, writes a
# file or starts a process; and no layer reaches into another module's private names.
SIDE_EFFECTS = {"print", "subprocess", "os.system", "sys.stdout", "sys.stderr", "write_atomic"}


def _calls_and_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            yield node.func.id, node
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            yield f"{node.value.id}.{node.attr}", node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                yield (node.module or a.name).split(".")[0] if isinstance(node, ast.ImportFrom) \
                    else a.name.split(".")[0], node
                yield a.name, node


def _writes_a_file(node):
    """open(..., "w"/"a"/"x"...) or Path.write_text/write_bytes."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            return isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+")
        if isinstance(f, ast.Attribute) and f.attr in ("write_text", "write_bytes"):
            return True
    return False


@pytest.mark.parametrize("module", modules("analysis"))
def test_analysis_prints_writes_and_runs_nothing(module):
    path = ROOT / (module.replace(".", "/") + ("/__init__.py" if module.endswith("analysis") else ".py"))
    tree = ast.parse(path.read_text())
    found = sorted({f"{name} (line {node.lineno})" for name, node in _calls_and_names(tree)
                    if name in SIDE_EFFECTS}
                   | {f"writes a file (line {node.lineno})" for node in ast.walk(tree)
                      if _writes_a_file(node)})
    assert found == [], f"{module}: {', '.join(found)}"


@pytest.mark.parametrize("layer", ["analysis", "render", "commands", "export"])
def test_no_private_names_across_modules(layer):
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("heapscope"):
                bad += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert bad == [], "private names imported: " + "; ".join(bad)

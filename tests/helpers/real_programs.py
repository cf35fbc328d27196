"""The real-code corpus (tests/real): Debian's applications and programs built from the
examples Debian's scientific libraries ship, recorded as a user would (counting first,
then the stacks of the busiest size), with what the commands say about them read back
as JSON. docs/real-applications.md holds the evidence behind each test's figures.

Programs built from examples are cached across sessions, keyed by the source, the
command and the versions of the Debian packages they link: a rebuild only when one
changes (HEAPSCOPE_TEST_CACHE, default ~/.cache/heapscope-tests)."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

INPUTS = Path(__file__).resolve().parent.parent / "real" / "inputs"


def package_version(package):
    """The installed version of a Debian package; fails the test (never skips) when it
    is missing: scripts/setup.sh installs every package the corpus runs."""
    res = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", package],
                         capture_output=True, text=True)
    status, _, version = res.stdout.rpartition(" ")
    if res.returncode != 0 or status != "install ok installed":
        pytest.fail(f"Debian package {package} is not installed: run scripts/setup.sh",
                    pytrace=False)
    return version


def require_version(package, version):
    """The figures of a test are those of one Debian build (offsets in a stripped
    program, exact counts): say so plainly when another version is installed."""
    have = package_version(package)
    if have != version:
        pytest.fail(f"{package} {have} is installed; this test's figures are those of "
                    f"{version} (Debian 12): re-establish them (docs/real-applications.md)",
                    pytrace=False)


def cache_dir():
    root = os.environ.get("HEAPSCOPE_TEST_CACHE") or Path.home() / ".cache" / "heapscope-tests"
    return Path(root) / "real"


def cached_build(name, source, command, packages):
    """Compile `source` with `command` (a list; "{src}" and "{out}" are filled in) into
    the cache, unless a build of the same source, command and package versions is
    there. Returns the executable's path."""
    source = Path(source)
    if not source.exists():
        pytest.fail(f"{source} is missing: run scripts/setup.sh (it installs the "
                    f"examples of {', '.join(packages)})", pytrace=False)
    key = hashlib.sha256()
    key.update(source.read_bytes())
    key.update("\0".join(command).encode())
    for package in packages:
        key.update(f"{package}={package_version(package)}".encode())
    out = cache_dir() / f"{name}-{key.hexdigest()[:16]}"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + f".{os.getpid()}.tmp")
    cmd = [part.replace("{src}", str(source)).replace("{out}", str(partial)) for part in command]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"building {name} failed: {' '.join(cmd)}\n{res.stderr[-2000:]}"
    os.replace(partial, out)   # atomic: a concurrent session sees the whole file or none
    return out


def pkg_config(*args):
    res = subprocess.run(["pkg-config", *args], capture_output=True, text=True)
    assert res.returncode == 0, f"pkg-config {' '.join(args)}: {res.stderr.strip()}"
    return res.stdout.split()


def record(out, cmd, *, sizes=None, cwd=None, env=None, timeout=600):
    """`heapscope record -o out [--sizes S] -- cmd` with the test's environment; returns
    the finished process (the program's output captured). The program must succeed."""
    args = [sys.executable, "-m", "heapscope", "record", "-o", str(out)]
    if sizes is not None:
        args += ["--sizes", str(sizes)]
    res = subprocess.run([*args, "--", *map(str, cmd)], capture_output=True, text=True,
                         cwd=cwd, timeout=timeout, env=dict(os.environ, **(env or {})))
    assert res.returncode == 0, (f"recording {' '.join(map(str, cmd))} failed ({res.returncode})"
                                 f"\nstdout:\n{res.stdout[-2000:]}\nstderr:\n{res.stderr[-2000:]}")
    return res


def record_as_a_user(tmp, cmd, size, *, cwd=None, env=None):
    """The method's first two steps: count every size (tmp/counts), then record the
    stacks of `size`, the busiest (tmp/stacks). Returns the counting run."""
    res = record(tmp / "counts", cmd, cwd=cwd or tmp, env=env)
    record(tmp / "stacks", cmd, sizes=size, cwd=cwd or tmp, env=env)
    return res


def command_json(heapscope, *args):
    """A heapscope command's JSON document (every type and vertex: --top 0)."""
    return json.loads(heapscope(*args, "--format", "json").stdout)


def size_counts(heapscope, out, region=None):
    """{size: allocations} over every region (or in one: "(none)" is outside every
    region, "[MPI]" inside MPI calls), from `heapscope report`."""
    doc = command_json(heapscope, "report", out, "--top", "0")
    if region is None:
        return {row["size"]: row["total_count"] for row in doc["sizes"]}
    return {row["size"]: row["counts"][region] for row in doc["sizes"]
            if row["counts"].get(region)}


def busiest(counts):
    """(size, allocations) of the size allocated most often."""
    size = max(counts, key=lambda s: (counts[s], -s))
    return size, counts[size]


_DOCUMENTS = {}


def _document(heapscope, command, out, size):
    """A recording's `stacks` or `callgraph` document, read once per session (several
    tests read the same one; Octave's takes seconds). Callers must not modify it."""
    key = (command, str(out), size)
    if key not in _DOCUMENTS:
        _DOCUMENTS[key] = command_json(heapscope, command, out, "--size", str(size),
                                       "--top", "0")
    return _DOCUMENTS[key]


def stacks(heapscope, out, size):
    return _document(heapscope, "stacks", out, size)


def callgraph(heapscope, out, size):
    return _document(heapscope, "callgraph", out, size)


def stack_types(doc):
    """Every stack trace type of a `stacks` document: (count, frames)."""
    return [(t["count"], t["frames"]) for g in doc["groups"] for t in g["stack_types"]]


def ranked(doc):
    """The ranked fix targets' function names, rank order."""
    return [row["function"] for row in doc["ranking"]]


def rank_of(doc, function):
    """1-based rank of a function (exact name) or None."""
    names = ranked(doc)
    return names.index(function) + 1 if function in names else None


def frame_name(frame):
    """A frame's function, or "?? (module+0x...)" as the text output names an
    unresolved one."""
    name = frame["function"] or "??"
    if name == "??" and frame.get("module"):
        return f"?? ({Path(frame['module']).name}+0x{frame['offset']:x})"
    return name


def allocating_frames(doc, skip=("malloc", "calloc", "realloc", "operator new(unsigned long)",
                                 "operator new[](unsigned long)", "posix_memalign")):
    """Counter of (function, module name) of the first frame past the allocator, weighted
    by allocations."""
    frames = Counter()
    for count, stack in stack_types(doc):
        first = next((f for f in stack if (f["function"] or "??") not in skip), None)
        if first is not None:
            frames[(frame_name(first), Path(first["module"] or "").name)] += count
    return frames


def through(doc, predicate):
    """Allocations whose stack has a frame for which predicate(frame) holds."""
    return sum(count for count, stack in stack_types(doc) if any(predicate(f) for f in stack))


def within(module_path, start, end):
    """A frame predicate: in `module_path` at an offset in [start, end)."""
    return lambda f: f["module"] == module_path and start <= f["offset"] < end


def first_ranked_offset(doc, module):
    """The module offset of the first fix target of a program without symbols (named
    "?? (module+0x...)"), or None when it is not one of that module's."""
    assert doc["ranking"], "nothing ranked: a stripped program is ranked by module+offset"
    return offset_in(doc["ranking"][0]["function"], module)


def offset_in(name, module):
    """The module offset of an unresolved frame's name "?? (module+0x...)", else None."""
    m = re.fullmatch(r"\?\? \((.+)\+0x([0-9a-f]+)\)", name)
    return int(m.group(2), 16) if m and m.group(1) == module else None


def function_range(binary, address):
    """[start, end) of the function of a stripped binary holding `address`, from its
    call-frame information (.eh_frame FDEs survive stripping)."""
    res = subprocess.run(["readelf", "--debug-dump=frames", str(binary)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for m in re.finditer(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", res.stdout):
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        if start <= address < end:
            return start, end
    raise AssertionError(f"no FDE of {binary} holds 0x{address:x}")


def copy_inputs(dest, *names):
    for name in names:
        shutil.copy(INPUTS / name, dest / name)

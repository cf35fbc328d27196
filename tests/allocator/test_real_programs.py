"""Real programs on hsmalloc (LD_PRELOAD), with their output checked: Python running
a threaded workload, g++ compiling and the result running, git, an Open MPI job of 4
LAMMPS ranks, and `heapscope run` itself. Each process writes hsmalloc's JSON
statistics, which prove hsmalloc served it."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PY_WORKLOAD = r"""
import json, threading, collections
def work(seed, out):
    d = collections.defaultdict(list)
    for i in range(60000):
        d[(i * seed) % 997].append(str(i) * (1 + i % 7))
    out[seed] = sum(len(v) for v in d.values()) + len(json.dumps({k: v[:3] for k, v in d.items()}))
out = {}
ts = [threading.Thread(target=work, args=(s, out)) for s in range(1, 9)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out.items()))
"""

CXX_SOURCE = r"""
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>
template <typename T> struct Node { T value; std::vector<std::unique_ptr<Node>> kids; };
int main() {
  std::map<std::string, int> words;
  for (int i = 0; i < 100000; i++) words["w" + std::to_string(i % 5000)] += i;
  Node<int> root{0, {}};
  for (int i = 0; i < 1000; i++) root.kids.push_back(std::make_unique<Node<int>>(Node<int>{i, {}}));
  long sum = 0;
  for (auto &k : root.kids) sum += k->value;
  std::cout << words.size() << " " << words["w42"] << " " << sum << std::endl;
}
"""


@pytest.fixture
def on_hsmalloc(native, tmp_path):
    """Environment running programs on hsmalloc, each process writing its statistics."""
    stats_dir = tmp_path / "hsstats"
    stats_dir.mkdir()
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"),
               HSMALLOC_STATS="json", HSMALLOC_STATS_FILE=str(stats_dir / "%p.json"))

    def stats():
        return [json.loads(p.read_text()) for p in sorted(stats_dir.glob("*.json"))]

    return env, stats


def glibc_env():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def test_python_threaded_workload(on_hsmalloc, tmp_path):
    env, stats = on_hsmalloc
    script = tmp_path / "work.py"
    script.write_text(PY_WORKLOAD)
    # PYTHONMALLOC=malloc: every Python object comes from malloc, not from pymalloc's arenas.
    # This interpreter, not PATH's python3: a pyenv shim there is a shell script that runs
    # more processes, each one more stats line.
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=dict(glibc_env(), PYTHONMALLOC="malloc"), timeout=120)
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=dict(env, PYTHONMALLOC="malloc"), timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and got.stdout.startswith("[(1, ")
    (python,) = stats()
    assert python["allocs"] > 1000000 and python["heaps"] >= 2   # threads get their own heaps
    assert python["remote_frees"] > 0      # objects made in one thread, freed in another


def test_gxx_compiles_and_runs(on_hsmalloc, tmp_path):
    env, stats = on_hsmalloc
    src = tmp_path / "prog.cpp"
    src.write_text(CXX_SOURCE)
    exe = tmp_path / "prog"
    comp = subprocess.run(["g++", "-O1", "-o", str(exe), str(src)], capture_output=True, text=True,
                          env=env, timeout=180)
    assert comp.returncode == 0, comp.stderr
    # g++, cc1plus, as, collect2, ld: each a process on hsmalloc
    assert len(stats()) >= 4
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    words_w42 = sum(i for i in range(100000) if i % 5000 == 42)
    assert res.stdout.split() == ["5000", str(words_w42), str(sum(range(1000)))]


def test_git_init_commit_log(on_hsmalloc, tmp_path):
    env, stats = on_hsmalloc
    env = dict(env, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org", HOME=str(tmp_path))
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args):
        res = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env,
                             timeout=60)
        assert res.returncode == 0, res.stderr
        return res.stdout

    git("init", "-q")
    for i in range(3):
        (repo / f"f{i}.txt").write_text("line\n" * (i + 1) * 1000)
        git("add", f"f{i}.txt")
        git("commit", "-q", "-m", f"commit {i}")
    assert git("log", "--format=%s").split("\n")[:3] == ["commit 2", "commit 1", "commit 0"]
    assert git("show", "HEAD:f2.txt") == "line\n" * 3000
    assert git("fsck", "--no-progress") == ""
    assert len(stats()) >= 9


def lammps_melt():
    for d in [Path("/usr/share/lammps/examples/melt")]:
        if (d / "in.melt").exists():
            return d / "in.melt"
    found = subprocess.run(["find", "/usr", "-name", "in.melt"], capture_output=True, text=True)
    paths = found.stdout.split()
    return Path(paths[0]) if paths else None


def thermo_table(log):
    """The thermo rows (step and values) of a LAMMPS log."""
    rows, inside = [], False
    for line in log.splitlines():
        fields = line.split()
        if fields[:1] == ["Step"]:
            inside = True
            continue
        if inside and fields and fields[0].isdigit():
            rows.append(fields)
        elif inside and fields[:1] == ["Loop"]:
            inside = False
    return rows


def test_openmpi_lammps_four_ranks(on_hsmalloc, tmp_path):
    env, stats = on_hsmalloc
    melt = lammps_melt()
    assert melt is not None and shutil.which("mpirun") and shutil.which("lmp"), \
        "needs Debian's openmpi-bin, lammps and lammps-examples"
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "4",
           "-x", "LD_PRELOAD", "-x", "HSMALLOC_STATS", "-x", "HSMALLOC_STATS_FILE",
           "lmp", "-in", str(melt), "-log", "none"]
    want = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=glibc_env(), timeout=180)
    got = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=180)
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    assert "Total wall time" in got.stdout
    rows = thermo_table(got.stdout)
    assert rows and rows[-1][0] == "250"        # the final thermo line of the 250-step run
    assert rows == thermo_table(want.stdout)    # same physics as on glibc, digit for digit
    lmp_ranks = [s for s in stats() if s["allocs"] > 10000]
    assert len(lmp_ranks) >= 4


def test_heapscope_run_command(heapscope, build, native):
    exe = build("../allocator/foreign.c", "-ldl", name="foreign")
    res = heapscope("run", "--allocator", "hsmalloc", "--", exe)
    assert res.stdout.strip() == "ok foreign=100"
    res = heapscope("run", "--allocator", "hsmalloc", "--stats", "--", "python3", "-c",
                    "import sys; sys.exit(7)", check=False)
    assert res.returncode == 7 and "hsmalloc statistics" in res.stderr
    res = heapscope("run", "--allocator", "hsmalloc", "--", "sh", "-c", "kill -KILL $$", check=False)
    assert res.returncode == 128 + 9
    res = heapscope("run", "--allocator", "glibc", "--", "sh", "-c", 'echo "[$LD_PRELOAD]"',
                    env={"LD_PRELOAD": ""})
    assert res.stdout.strip() == "[]"
    res = heapscope("run", "--allocator", "hsmalloc", "--print-library")
    assert res.stdout.strip() == str(native / "lib" / "libhsmalloc.so")


@pytest.mark.parametrize("allocator, banner", [
    ("hsmalloc", "hsmalloc statistics"),
    ("jemalloc", "Begin jemalloc statistics"),
    ("tcmalloc", "Bytes in use by application"),
    ("mimalloc", "heap stats:"),
])
def test_heapscope_run_stats_of_each_allocator(heapscope, allocator, banner):
    """--stats turns on each allocator's own exit report, and the program's output is
    untouched."""
    res = heapscope("run", "--allocator", allocator, "--stats", "--", "python3", "-c", "print(6 * 7)")
    assert res.stdout == "42\n"
    assert banner in res.stderr


@pytest.mark.parametrize("args, message", [
    (["--allocator", "hsmalloc", "--", "no-such-program-xyz"], "program not found in PATH: no-such-program-xyz"),
    (["--allocator", "hsmalloc", "--", "/nonexistent/prog"], "program not found: /nonexistent/prog"),
    (["--allocator", "hsmalloc"], "no program to run"),
    (["--allocator", "glibc", "--stats", "--", "true"], "glibc has no switch to print statistics"),
])
def test_heapscope_run_errors(heapscope, args, message):
    res = heapscope("run", *args, check=False)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.stderr


def test_heapscope_run_names_missing_peer_package(heapscope, monkeypatch):
    from heapscope import allocators
    from heapscope.commands import run
    from heapscope.errors import HeapscopeError
    monkeypatch.setattr(allocators, "LIBDIRS", [Path("/nonexistent")])
    with pytest.raises(HeapscopeError, match="apt-get install libjemalloc2"):
        run.environment("jemalloc")


def test_project_test_suite_on_hsmalloc(on_hsmalloc):
    """Part of heapscope's own suite (profile reader, reports, bench statistics: numpy
    and Python objects) passes with every Python object coming from hsmalloc."""
    env, stats = on_hsmalloc
    env = dict(env, PYTHONMALLOC="malloc")
    tests = Path(__file__).resolve().parents[1]
    modules = [str(tests / m) for m in ("format/test_reader.py", "unit/test_report_figures.py",
                                        "unit/test_bench_stats.py")]
    # this interpreter: the one with pytest and heapscope (PATH's python3 may have neither)
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *modules],
                         capture_output=True, text=True, env=env, cwd=tests.parent, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "failed" not in res.stdout
    pytest_process = max(stats(), key=lambda s: s["allocs"])
    assert pytest_process["allocs"] > 100000

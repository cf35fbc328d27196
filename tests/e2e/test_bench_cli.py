"""`heapscope bench` end to end on real commands: interleaving seen from inside the
runs, a failing command, a checksum mismatch, a missing allocator, outputs, errors,
and the profiler comparison."""
import json
import os
import subprocess

import pytest

from heapscope import allocators

from conftest import require

# Prints which allocator it runs under (from LD_PRELOAD) into a log, then a checksum.
WHO = 'case "$LD_PRELOAD" in *jemalloc*) a=jemalloc;; *tcmalloc*) a=tcmalloc;; ' \
      '*) a=glibc;; esac; echo $a >> {log}; echo "checksum: 42"'


def test_runs_are_interleaved_after_a_warmup(heapscope, tmp_path):
    log = tmp_path / "order.log"
    out = tmp_path / "r.json"
    res = heapscope("bench", "--allocators", "glibc,jemalloc,tcmalloc", "-n", "3", "--warmup", "1",
                    "--json", out, "--", "sh", "-c", WHO.format(log=log))
    assert log.read_text().split() == ["glibc", "jemalloc", "tcmalloc"] * 4
    doc = json.loads(out.read_text())
    (cmd,) = doc["commands"]
    assert cmd["checksum"] == "42" and cmd["checksum_error"] is None
    assert [c["name"] for c in cmd["configs"]] == ["glibc", "jemalloc", "tcmalloc"]
    for c in cmd["configs"]:
        assert len(c["runs"]) == 3 and c["failure"] is None
        assert c["stats"]["wall"]["n"] == 3
        low, high = c["stats"]["wall"]["mean_ci"]
        assert low <= c["stats"]["wall"]["mean"] <= high
    assert cmd["configs"][0]["ratios"]["wall"]["value"] == pytest.approx(1.0)
    assert doc["machine"]["cpus"] == os.cpu_count()
    assert "jemalloc" in res.stdout and "x glibc" in res.stdout


def test_failing_command_reported_with_code_and_stderr(heapscope):
    res = heapscope("bench", "--allocators", "glibc,jemalloc", "-n", "2", "--",
                    "sh", "-c", "echo 'fatal: disk on fire' >&2; exit 7", check=False)
    assert res.returncode == 1
    assert "exited with code 7" in res.stderr
    assert "fatal: disk on fire" in res.stderr
    assert "Traceback" not in res.stderr


def test_failure_under_one_allocator_keeps_the_others(heapscope, tmp_path):
    out = tmp_path / "r.json"
    script = 'case "$LD_PRELOAD" in *jemalloc*) echo boom >&2; exit 5;; esac; echo checksum: 1'
    res = heapscope("bench", "--allocators", "glibc,jemalloc", "-n", "3", "--json", out,
                    "--", "sh", "-c", script, check=False)
    assert res.returncode == 1
    configs = {c["name"]: c for c in json.loads(out.read_text())["commands"][0]["configs"]}
    assert len(configs["glibc"]["runs"]) == 3 and configs["glibc"]["failure"] is None
    assert configs["jemalloc"]["runs"] == []
    assert configs["jemalloc"]["failure"]["exit_code"] == 5
    assert "boom" in configs["jemalloc"]["failure"]["stderr_tail"]


def test_checksum_mismatch_is_an_error(heapscope):
    script = 'case "$LD_PRELOAD" in *jemalloc*) echo checksum: 2;; *) echo checksum: 1;; esac'
    res = heapscope("bench", "--allocators", "glibc,jemalloc", "-n", "1", "--warmup", "0",
                    "--", "sh", "-c", script, check=False)
    assert res.returncode == 1
    assert "checksum differs" in res.stderr and "glibc 1" in res.stderr and "jemalloc 2" in res.stderr


def test_missing_allocator_reported_and_skipped(heapscope, native, tmp_path):
    # a native dir with the launcher but without libhsmalloc.so
    fake = tmp_path / "native"
    (fake / "lib").mkdir(parents=True)
    (fake / "bin").mkdir()
    os.symlink(native / "bin" / "hs-measure", fake / "bin" / "hs-measure")
    res = heapscope("bench", "--allocators", "glibc,hsmalloc", "-n", "1", "--warmup", "0",
                    "--", "true", env={"HEAPSCOPE_NATIVE_DIR": str(fake)})
    assert "hsmalloc skipped" in res.stderr and "libhsmalloc.so is not built" in res.stderr
    assert "glibc" in res.stdout and "hsmalloc" not in res.stdout


def test_csv_markdown_and_plots(heapscope, tmp_path):
    csv_path, md, plots = tmp_path / "runs.csv", tmp_path / "b.md", tmp_path / "plots"
    heapscope("bench", "--allocators", "glibc,mimalloc", "-n", "2", "--warmup", "0",
              "--csv", csv_path, "--markdown", md, "--plot", plots,
              "--", "sh", "-c", "echo checksum: 7")
    rows = csv_path.read_text().splitlines()
    assert rows[0].startswith("command,config,run,wall_s")
    assert len(rows) == 1 + 2 * 2
    assert {r.split(",")[1] for r in rows[1:]} == {"glibc", "mimalloc"}
    text = md.read_text()
    assert text.startswith("Machine: ") and "| config | n |" in text and "`sh -c" in text
    for metric in ("wall", "cpu", "maxrss", "minflt"):
        assert (plots / f"bench-{metric}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in (plots / f"bench-{metric}.svg").read_bytes()[:400]


@pytest.mark.parametrize("args, message", [
    (["--allocators", "glibc,dlmalloc", "--", "true"], "unknown allocator 'dlmalloc'"),
    (["-n", "0", "--", "true"], "-n must be at least 1"),
    (["--workloads", "nope"], "unknown workload 'nope'"),
    (["--workloads", "hot-odd", "--", "true"], "either --workloads or a command"),
    (["--baseline", "tcmalloc", "--allocators", "glibc", "--", "true"], "baseline 'tcmalloc'"),
    (["--", "no-such-program-hs"], "command not found"),
    (["true"], "put the command after --"),
    (["--allocators", "glibc,glibc", "--", "true"], "lists a name twice"),
])
def test_bad_input_is_one_clear_line(heapscope, args, message):
    res = heapscope("bench", *args, check=False)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


def test_unwritable_output_is_an_error(heapscope, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = heapscope("bench", "--allocators", "glibc", "-n", "1", "--warmup", "0",
                    "--json", blocker / "sub" / "r.json", "--", "true", check=False)
    assert res.returncode == 2 and "cannot write" in res.stderr


HOT40 = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    void *p[300];
    for (int i = 0; i < 300; i++) p[i] = malloc(i % 3 ? 40 : 24);   /* 200 x 40 B, 100 x 24 B */
    for (int i = 0; i < 300; i++) free(p[i]);
    printf("checksum: 40\n");
    return 0;
}
"""


def test_profilers_compare_plain_recorder_and_peers(heapscope, native, tmp_path):
    src = tmp_path / "hot40.c"
    src.write_text(HOT40)
    prog = tmp_path / "hot40"
    subprocess.run(["gcc", "-O1", "-o", str(prog), str(src)], check=True)
    out = tmp_path / "p.json"
    res = heapscope("bench", "--profilers", "-n", "1", "--warmup", "0", "--json", out,
                    "--", prog)
    doc = json.loads(out.read_text())
    names = [c["name"] for c in doc["commands"][0]["configs"]]
    # the most frequent size, found by a counting run, is the one whose stacks are recorded
    assert names[:4] == ["plain", "record-counts", "record-stacks-40", "record-stacks-all"]
    require("heaptrack", "valgrind")
    assert names[-2:] == ["heaptrack", "massif"]
    assert doc["settings"]["baseline"] == "plain"
    assert doc["commands"][0]["checksum"] == "40"
    for c in doc["commands"][0]["configs"]:
        assert len(c["runs"]) == 1 and c["failure"] is None, c["name"]
    assert "x plain" in res.stdout


def test_profilers_missing_from_path_are_reported(heapscope, native, tmp_path):
    """Without heaptrack and Valgrind on PATH, --profilers runs the others and says why."""
    src = tmp_path / "hot40.c"
    src.write_text(HOT40)
    prog = tmp_path / "hot40"
    subprocess.run(["gcc", "-O1", "-o", str(prog), str(src)], check=True)
    (tmp_path / "bin").mkdir()
    out = tmp_path / "p.json"
    res = heapscope("bench", "--profilers", "-n", "1", "--warmup", "0", "--format", "json", "-o", out,
                    "--", prog, env={"PATH": str(tmp_path / "bin")})
    names = [c["name"] for c in json.loads(out.read_text())["commands"][0]["configs"]]
    assert names[:4] == ["plain", "record-counts", "record-stacks-40", "record-stacks-all"]
    assert "heaptrack" not in names and "massif" not in names
    assert "heaptrack skipped: not installed" in res.stderr
    assert "massif skipped: not installed" in res.stderr


def test_stack_size_needs_profilers(heapscope):
    res = heapscope("bench", "--stack-size", "24", "--", "true", check=False)
    assert res.returncode == 2 and "--stack-size" in res.stderr

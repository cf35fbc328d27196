"""record --access hands out and takes back blocks exactly as the allocator would: realloc
(growing, shrinking, reallocarray, to 0), every C++ new/delete (aligned to 64, 4096, 8192,
nothrow, arrays), posix_memalign/aligned_alloc/memalign/valloc/pvalloc, calloc's zeros,
malloc_usable_size, blocks alive at a fork freed in the child and in the parent, the
program's own signal handler (tests/programs/acc_edges.cpp checks every byte); and the
MPI_Recv of tests/programs/acc_mpi.c, whose buffers count as touched, the data unchanged."""
import json
import subprocess

import pytest

from heapscope.allocators import find_allocator
from conftest import MPI_FAMILIES

ROUNDS = 20
MIB = 1 << 20


def access_doc(heapscope, path):
    return json.loads(heapscope("access", path, "--top", "0", "--format", "json").stdout)


def entries(doc):
    return {(e["frames"][0]["function"], e["size"]): e for e in doc["entries"] if e["frames"]}


@pytest.mark.parametrize("allocator", ["glibc", "hsmalloc"])
def test_every_call_and_fork(heapscope, build, tmp_path, allocator):
    assert allocator == "glibc" or find_allocator(allocator), "libhsmalloc.so is not built"
    program = build("acc_edges.cpp")
    plain = subprocess.run([str(program), str(ROUNDS)], capture_output=True, text=True, check=True)
    out = tmp_path / "out"
    # one sample a mean 512 bytes apart: nearly every block of the program is measured; the
    # watcher's looks a minute apart: blocks freed before the fork are not read before it
    res = heapscope("record", "--access", "--sample-bytes", "512", "--allocator", allocator,
                    "-o", out, "--", program, ROUNDS, env={"HEAPSCOPE_ACCESS_POLL_MS": "60000"})
    assert res.stdout == plain.stdout                                  # every byte as it was
    files = sorted(out.glob("*.hsp"))
    assert len(files) == 2                                             # the program, its child
    first, second = (access_doc(heapscope, f) for f in files)
    child, parent = ((first, second) if first["processes"][0]["ppid"] == second["processes"][0]["pid"]
                     else (second, first))
    assert child["processes"][0]["ppid"] == parent["processes"][0]["pid"]
    # the child: 200 blocks of 4000 bytes allocated and freed untouched; the parent's
    # blocks it freed are the parent's, not in its figures
    c = entries(child)
    assert set(c) == {("fork_alloc", 4000)} | {("child_alloc", n) for n in range(100, 300)
                                                 if ("child_alloc", n) in c}
    only = c[("fork_alloc", 4000)]
    assert only["blocks"] == 200 and only["never_touched_blocks"] == 200
    assert only["touched_bytes"] == 0
    for key, entry in c.items():        # what it sampled, and nothing of its parent's
        assert entry["measured"] == entry["samples"] and entry["touched_bytes"] == 0

    e = entries(parent)
    # blocks alive at the fork, written before it, freed by the parent after the child
    for size in (3000, 100000):
        f = e[("fork_alloc", size)]
        assert f["measured"] == f["samples"] >= 1 and f["touched_share"] == 1.0
    # grown from 300,000 bytes written to 1 MiB by realloc, never touched again: the kept
    # bytes count as touched (their data is there), the rest was never touched
    grown = e[("realloc_grow", MIB)]
    assert grown["blocks"] == grown["measured"] == ROUNDS
    kept = grown["touched_bytes"] // ROUNDS
    assert 300000 <= kept <= 300000 + 2 * 4096 + 65536 * (allocator == "hsmalloc")
    # calloc: zero by contract, never counted as read before written
    z = e[("zeroed", 3000)]
    assert z["sampled"]["zeroed"] == z["measured"] >= 1 and z["read_before_written_blocks"] == 0
    # aligned beyond a page (8192) and a page or more long: measured where they are
    assert e[("cxx", 24576)]["measured"] == e[("cxx", 24576)]["samples"] == ROUNDS
    # under a page and aligned beyond one: the only samples not measured
    aligned = e[("aligned", 2000)]
    assert aligned["measured"] == 0 and aligned["touched_bytes"] is None
    assert parent["mechanism"]["unmeasured"] == dict(pool=0, align=aligned["samples"], other=0)


def test_mpi_recv_into_measured_blocks(heapscope, mpi, tmp_path):
    """MPI_Recv fills the sampled buffers (shared memory, the kernel's copies): they count as
    touched, and what each rank computed from the data is what it computes without the
    recorder."""
    program = mpi.compile("acc_mpi.c", tmp_path / "acc_mpi", "-O1")
    n = 10
    plain = subprocess.run([*mpi.mpirun(2), str(program), str(n)], capture_output=True, text=True,
                           check=True, timeout=120)
    out = tmp_path / "out"
    res = heapscope("record", "--access", "--sample-bytes", "4096", "--per-rank", "all", "-o", out,
                    "--", *mpi.mpirun(2), program, n, timeout=300)
    assert sorted(plain.stdout.splitlines()) == sorted(
        line for line in res.stdout.splitlines() if line.startswith("rank "))
    doc = access_doc(heapscope, out)
    e = entries(doc)
    big, small = e[("recv_big_alloc", 2 * MIB)], e[("recv_small_alloc", 3000)]
    assert big["blocks"] == big["measured"] == n                       # every 2 MiB buffer
    assert n * MIB <= big["touched_bytes"] <= n * (MIB + 2 * 4096)     # the message's half
    assert big["never_touched_blocks"] == 0
    assert small["measured"] >= 1 and small["sampled"]["never_touched"] == 0
    assert small["touched_share"] == 1.0
    ranks = {r["rank"]: r for r in doc["per_rank"]}
    assert set(ranks) == {0, 1}
    # the job file: every rank's figures per size and region, and per rank, as of
    # MPI_Finalize (the rank files' are as of exit: a few samples more)
    job = doc["job"]
    assert (job["ranks"], job["ranks_measured"], job["pages"]) == (2, 2, "pagemap-scan")
    sizes = {(x["size"], x["region"]): x for x in job["entries"]}
    jb = sizes[(2 * MIB, "(none)")]
    assert (jb["blocks"], jb["touched_bytes"]) == (n, big["touched_bytes"])
    for r in job["per_rank"]:
        mine = ranks[r["rank"]]
        assert 0 < r["measured"] <= r["samples"] <= mine["samples"]
    assert job["per_rank"][1]["touched_bytes"] >= n * MIB


def test_job_file_alone(heapscope, tmp_path):
    """--per-rank none: the job file is all there is of the ranks, and access reads it."""
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("acc_mpi.c", tmp_path / "acc_mpi", "-O1")
    out = tmp_path / "out"
    heapscope("record", "--access", "--sample-bytes", "4096", "--per-rank", "none", "-o", out,
              "--", *openmpi.mpirun(2), program, 4, timeout=300)
    doc = access_doc(heapscope, out)
    assert doc["processes"] == [] and doc["entries"] == []        # launchers left out
    job = doc["job"]
    sizes = {(x["size"], x["region"]): x for x in job["entries"]}
    assert sizes[(2 * MIB, "(none)")]["blocks"] == 4
    assert 4 * MIB <= sizes[(2 * MIB, "(none)")]["touched_bytes"] <= 4 * (MIB + 8192)
    assert [r["rank"] for r in job["per_rank"]] == [0, 1]
    text = heapscope("access", out).stdout
    assert "Job file" in text and "Per rank (its own estimates)" in text


def test_watcher_keeps_glibc_single_threaded(heapscope, build, tmp_path):
    """The watcher thread, like the timeline's sampler, leaves a single-threaded program
    single-threaded in glibc's eyes (glibc's malloc then takes no arena lock, as without
    the recorder: the C++ churn paid 1.16x of its plain run for the lock, 1.07x without
    measuring), in the parent and in a forked child, whose recorder starts a watcher of
    its own; and it never calls the allocator (the spy allocator under the recorder
    aborts on any call from a thread named heapscope-*) while it reads and drops pool
    blocks a millisecond apart."""
    from pathlib import Path
    program = build("tl_single_thread.c", "-DHEAPSCOPE_WEAK", "-pthread")
    spy = tmp_path / "libspy.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", spy,
                    Path(__file__).resolve().parents[1] / "programs" / "spy_allocator.c"],
                   check=True)
    for name, env in (("glibc", {}), ("spy", {"LD_PRELOAD": str(spy)})):
        out = tmp_path / f"out-{name}-run"     # (not "spy:" in the files said)
        res = heapscope("record", "--access", "--sample-bytes", "256", "-o", out, "--",
                        program, "100", env=dict(env, HEAPSCOPE_ACCESS_POLL_MS="1"))
        flags = dict(line.split() for line in res.stdout.splitlines())
        assert "spy:" not in res.stderr
        if name == "glibc":     # (the spy's own flag: not glibc's malloc underneath)
            assert flags == {"main": "1", "child": "1", "thread": "0"}
        docs = [access_doc(heapscope, f) for f in sorted(out.glob("*.hsp"))]
        assert len(docs) == 2
        for doc in docs:        # rounds of 1000 blocks of 16..96 bytes: hundreds measured
            assert doc["totals"]["measured"] >= 100, doc["totals"]

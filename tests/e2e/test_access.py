"""record --access and `heapscope access` on programs whose use of their blocks is known
(tests/programs/acc_truths.c): the figures the recorder measures from the page tables,
under glibc and hsmalloc, four threads, blocks freed by another thread than the one that
allocated them; and the program's output unchanged.

Blocks of 1 MiB are sampled with probability 1 - exp(-256) at a 4 KiB mean, so every one
is measured and their figures are exact; the small ones' are estimates whose sampled
counts are known."""
import json
import os
import shutil
import subprocess

import pytest

from heapscope.allocators import find_allocator

N, WAIT_MS, THREADS, MIB = 20, 40, 4, 1 << 20
SCENARIOS = ("partial", "full", "unused", "used", "readfirst", "zeroed", "pipe", "live")


def touched_from(offset: int, size: int, written: int, page: int = 4096) -> int:
    """Bytes a block at `offset` in its page, of which the first `written` bytes were
    written, has on touched pages: the partial first page follows its inner neighbour, so
    up to the end of the page holding the last byte written."""
    last_page_end = (offset + written - 1) // page * page + page
    return min(size, last_page_end - offset)


def by_function(doc: dict) -> dict:
    return {e["frames"][0]["function"]: e for e in doc["entries"] if e["frames"]}


def run_truths(heapscope, build, tmp_path, allocator, *scenarios, env=None, record=True):
    program = build("acc_truths.c", "-pthread")
    out = tmp_path / f"out-{allocator}"
    args = [program, N, WAIT_MS, *scenarios]
    plain = subprocess.run(list(map(str, args)), capture_output=True, text=True, check=True)
    res = heapscope("record", "--access", "--sample-bytes", "4096", "--allocator", allocator,
                    "-o", out, "--", *args, env=dict(env or {}, HEAPSCOPE_SAMPLE_SEED="7"))
    doc = json.loads(heapscope("access", out, "--top", "0", "--format", "json").stdout)
    return plain.stdout, res.stdout, doc


@pytest.mark.parametrize("allocator", ["glibc", "hsmalloc"])
def test_known_use_of_blocks(heapscope, build, tmp_path, allocator):
    assert allocator == "glibc" or find_allocator(allocator), "libhsmalloc.so is not built"
    plain, recorded, doc = run_truths(heapscope, build, tmp_path, allocator, *SCENARIOS)
    checksum = [line for line in plain.splitlines() if line.startswith("checksum")]
    assert checksum == [line for line in recorded.splitlines() if line.startswith("checksum")]
    offsets = [int(line.split()[1]) for line in recorded.splitlines() if line.startswith("partial")]
    assert len(offsets) == N * THREADS, recorded[:300]
    assert doc["mechanism"]["pages"] == "pagemap-scan"
    e = by_function(doc)

    # 1 MiB buffers, the first 64 KiB written: every one sampled, figures exact
    partial = e["partial_alloc"]
    assert partial["blocks"] == partial["blocks_low"] == partial["blocks_high"] == N * THREADS
    want = sum(touched_from(o, MIB, 64 * 1024) for o in offsets)
    assert partial["touched_bytes"] == partial["touched_bytes_low"] == partial["touched_bytes_high"] == want
    assert 0.062 <= want / (N * THREADS * MIB) <= 0.067           # ~6% touched
    assert partial["untouched_bytes"] == N * THREADS * MIB - want
    assert partial["never_touched_blocks"] == 0 and partial["read_before_written_blocks"] == 0
    full = e["full_alloc"]
    assert full["touched_bytes"] == full["bytes"] == N * THREADS * MIB
    assert full["untouched_bytes"] == 0

    # small blocks: never touched, and every byte used
    unused, used = e["unused_alloc"], e["used_alloc"]
    for entry in (unused, used):
        assert entry["measured"] == entry["samples"] >= 1
        assert entry["blocks_low"] <= entry["blocks"] <= entry["blocks_high"] <= N * THREADS
    assert unused["sampled"]["never_touched"] == unused["measured"]
    assert unused["never_touched_blocks"] == unused["blocks"] and unused["touched_bytes"] == 0
    assert used["sampled"]["never_touched"] == 0 and used["never_touched_blocks"] == 0
    assert used["touched_bytes"] == used["bytes"] == used["blocks"] * 216

    # read before written: every sample only read; some read, then written after a wait
    readonly, readfirst = e["readonly_alloc"], e["readfirst_alloc"]
    assert readonly["sampled"]["read_before_written"] == readonly["measured"] >= 1
    assert readonly["read_before_written_blocks"] == readonly["blocks"]
    assert readonly["touched_bytes"] == readonly["bytes"]          # a read touches the page
    assert 1 <= readfirst["sampled"]["read_before_written"] <= readfirst["measured"]
    assert readfirst["touched_bytes"] == readfirst["bytes"]
    zeroed = e["zeroed_alloc"]                                     # calloc: zero by contract
    assert zeroed["sampled"]["zeroed"] == zeroed["measured"] >= 1
    assert zeroed["read_before_written_blocks"] == 0

    # filled by read(2) from a pipe: the kernel's write counts, the data arrived
    pipe = e["pipe_alloc"]
    assert pipe["sampled"]["never_touched"] == 0 and pipe["touched_bytes"] == pipe["bytes"]

    # alive at exit, the first 256 KiB written: read at the exit snapshot
    live = e["live_alloc"]
    assert live["live_blocks"] == live["blocks"] == N * THREADS
    assert live["sampled"]["live"] == N * THREADS
    assert N * THREADS * 256 * 1024 <= live["touched_bytes"] <= N * THREADS * (256 + 8) * 1024

    # the bytes that could be given back, largest first
    untouched = [entry["untouched_bytes"] for entry in doc["entries"]]
    assert untouched == sorted(untouched, reverse=True)
    assert doc["entries"][0]["frames"][0]["function"] == "partial_alloc"
    assert doc["totals"]["untouched_bytes"] == sum(untouched)


def test_text_and_csv(heapscope, build, tmp_path):
    program = build("acc_truths.c", "-pthread")
    out = tmp_path / "out"
    heapscope("record", "--access", "--sample-bytes", "4096", "-o", out, "--",
              program, N, WAIT_MS, "partial", "unused")
    text = heapscope("access", out).stdout
    assert "memory allocated and not used" in text
    assert "partial_alloc" in text.split("\n2/")[0]                 # the most bytes to give back
    assert "never touched" in text and "PAGEMAP_SCAN" in text
    csv = heapscope("access", out, "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("rank,size,region,samples,measured,blocks")
    assert any(line.endswith("partial_alloc <- run <- thread_main <- start_thread <- __clone3")
               or "partial_alloc" in line for line in csv[1:])
    by_size = json.loads(heapscope("access", out, "--by", "size", "--format", "json").stdout)
    sizes = {(e["size"], e["region"]): e for e in by_size["entries"]}
    assert sizes[(MIB, "(none)")]["blocks"] == N * THREADS            # a cell's blocks: exact
    assert sizes[(200, "(none)")]["blocks"] == N * THREADS


def test_page_flags_on_older_kernels(heapscope, build, tmp_path):
    """Before PAGEMAP_SCAN (Linux < 6.7): /proc/self/pagemap's flags, the zero page present
    but not exclusive; forced here with HEAPSCOPE_ACCESS_PAGES=pagemap."""
    _, _, doc = run_truths(heapscope, build, tmp_path, "glibc", "partial", "readfirst", "unused",
                           env={"HEAPSCOPE_ACCESS_PAGES": "pagemap"})
    assert doc["mechanism"]["pages"] == "pagemap"
    e = by_function(doc)
    assert e["partial_alloc"]["touched_bytes"] == sum(
        touched_from(16, MIB, 64 * 1024) for _ in range(N * THREADS))
    assert e["readonly_alloc"]["sampled"]["read_before_written"] == e["readonly_alloc"]["measured"]
    assert e["unused_alloc"]["never_touched_blocks"] == e["unused_alloc"]["blocks"]


UNPRIVILEGED = "heapscope-test"


def test_unprivileged(heapscope, build, native, tmp_path):
    """The mechanism needs no privilege: the recorder run as an ordinary user (root runs
    it through runuser as a user of its own) reads its pages with PAGEMAP_SCAN."""
    program = tmp_path / "acc_truths"          # where the user can reach it
    shutil.copy(build("acc_truths.c", "-pthread"), program)
    # the recorder too: a checkout under /root (a fresh Debian's root following the
    # README) is out of the user's reach, and ld.so then skips the preload with a warning
    recorder = tmp_path / "libheapscope.so"
    shutil.copy(native / "lib" / "libheapscope.so", recorder)
    out = tmp_path / "out"
    out.mkdir()
    env = dict(LD_PRELOAD=str(recorder), HEAPSCOPE_ACCESS="1",
               HEAPSCOPE_SAMPLE_BYTES="4096", HEAPSCOPE_SAMPLE_SEED="7",  # (run_truths's)
               HEAPSCOPE_OUTPUT_DIR=str(out), PATH="/usr/bin:/bin")
    cmd = [str(program), str(N), str(WAIT_MS), "partial", "unused", "pipe"]
    if os.geteuid() == 0:
        # runuser and useradd live in sbin, which CI's PATH (/usr/bin:/bin) leaves out
        sbin = "/usr/sbin:/sbin:/usr/bin:/bin"
        runuser, useradd = shutil.which("runuser", path=sbin), shutil.which("useradd", path=sbin)
        assert runuser and useradd, "util-linux's runuser and passwd's useradd (Debian: essential)"
        if subprocess.run(["id", UNPRIVILEGED], capture_output=True).returncode != 0:
            subprocess.run([useradd, "-M", "-s", "/usr/sbin/nologin", UNPRIVILEGED], check=True)
        for path in (tmp_path, *tmp_path.parents):   # the user must reach the program and out
            if str(path) in ("/", "/root"):
                break
            os.chmod(path, os.stat(path).st_mode | 0o011)
        out.chmod(0o777)
        os.chmod(program, 0o755)
        os.chmod(recorder, 0o755)
        cmd = [runuser, "-u", UNPRIVILEGED, "--", "env", *[f"{k}={v}" for k, v in env.items()], *cmd]
    res = subprocess.run(cmd, capture_output=True, text=True, env=None if os.geteuid() == 0 else
                         dict(os.environ, **env))
    assert res.returncode == 0, res.stderr
    assert "heapscope:" not in res.stderr                             # nothing it could not do
    assert "cannot be preloaded" not in res.stderr, res.stderr        # the recorder was loaded
    files = list(out.glob("*.hsp"))
    assert files and all(f.stat().st_uid != 0 for f in files) == (os.geteuid() == 0)
    doc = json.loads(heapscope("access", out, "--format", "json").stdout)
    assert doc["mechanism"]["pages"] == "pagemap-scan"
    e = by_function(doc)
    assert e["partial_alloc"]["blocks"] == N * THREADS
    assert e["unused_alloc"]["never_touched_blocks"] == e["unused_alloc"]["blocks"]
    assert e["pipe_alloc"]["touched_bytes"] == e["pipe_alloc"]["bytes"]


def test_record_refuses_what_cannot_go_with_access(heapscope, build, tmp_path):
    program = build("acc_truths.c", "-pthread")
    for extra, clash in ((["--sizes", "64"], "--sizes"), (["--trace"], "--trace"),
                         (["--track", "--sample-bytes", "off"], "--sample-bytes off")):
        res = heapscope("record", "--access", *extra, "-o", tmp_path / "x", "--", program, 1, 0,
                        "unused", check=False)
        assert res.returncode != 0
        assert res.stderr.strip().splitlines() == [
            f"heapscope: error: --access measures the blocks whose stacks are sampled "
            f"(--sample-bytes): it does not go with {clash}"]


def test_access_needs_access_data(heapscope, build, tmp_path):
    program = build("acc_truths.c", "-pthread")
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", program, 1, 0, "unused")
    res = heapscope("access", out, check=False)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no memory access data: record with `heapscope record " \
                               "--access --" in lines[0]

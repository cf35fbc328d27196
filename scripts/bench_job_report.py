"""Time `heapscope report DIR` (the job report) on N synthetic rank files.

    python3 scripts/bench_job_report.py [N] [SAMPLES]      (default 2000 ranks, 600 samples)
    python3 scripts/bench_job_report.py --job-file [N]     (default 100000 ranks)
    python3 scripts/bench_job_report.py --job-file N --ab BEFORE/python AFTER/python [PAIRS]
        (interleaved before/after pairs, default 5, of the JSON and the text report of
        the job file, each tree's package by PYTHONPATH; one Markdown table)

Each file is a rank of one job written with tests/helpers/profile_builder.py: 438 (region,
size) rows in 3 regions ("(none)", "[MPI]", "solve"), 86 modules, and one TIMELINE
chunk of SAMPLES samples (a minute at the default 100 ms) in the layout of
src/format/profile_format.h. Prints one Markdown line with the file sizes and the
median wall time of 3 runs of the report (JSON output), from a source tree
(PYTHONPATH=python HEAPSCOPE_NATIVE_DIR=...) or the installed package.
"""
import os
import random
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
from profile_builder import ProfileBuilder, chunk, header, string  # noqa: E402

TIMELINE = 20


def timeline_payload(samples: int, rng: random.Random) -> bytes:
    body = struct.pack("<QqII", 100_000_000, 10_000_000, 0, 0)
    body += struct.pack("<QQqqQ", samples // 10, samples, 4 << 20, 1 << 20, 0)
    body += struct.pack("<I", 1) + string("MPI_Allreduce")
    body += struct.pack("<II", samples, 0)
    heap = 0
    for i in range(samples):
        heap = max(0, heap + rng.randint(-1 << 20, 1 << 20))
        body += struct.pack("<QIIIIqqqq", i * 100_000_000, 0, i % 3 and 2, 0xFFFFFFFF, 0,
                            heap + (8 << 20), 4 << 20, heap + (64 << 20), heap + (32 << 20))
    return body


def write_job(directory: Path, ranks: int, samples: int) -> None:
    rng = random.Random(1)
    modules = [(f"/usr/lib/x86_64-linux-gnu/lib{i}.so", 0x7f0000000000 + i * 0x100000, bytes(20),
                [(0x7f0000000000 + i * 0x100000, 0x7f0000000000 + i * 0x100000 + 0x80000)])
               for i in range(86)]
    for r in range(ranks):
        host = f"node{r // 64:03d}"
        b = ProfileBuilder(pid=10000 + r, rank=r, host=host, job_id="4242", exe="/apps/sim",
                           cmdline=("/apps/sim",))
        b.raw(chunk(TIMELINE, timeline_payload(samples, rng)))
        sizes = [(rid, s, rng.randint(1, 1000)) for rid in (0, 1, 2)
                 for s in rng.sample(range(1, 100000), 146)]
        b.snapshot(regions=[(1, 0, "[MPI]"), (2, 0, "solve")], sizes=sizes, modules=modules)
        b.write(directory / f"heapscope.4242.r{r}.{host}.{10000 + r}.hsp")


def write_job_file(directory: Path, ranks: int) -> Path:
    """A job file (format table chunks 40..45) of `ranks` ranks, 64 a host, with the
    same 438 (region, size) rows summed over the ranks."""
    rng = random.Random(1)
    hosts = (ranks + 63) // 64
    body = header(start_real_ns=1_700_000_000_000_000_000)   # the current format version
    body += chunk("JOB", struct.pack("<IIIIQQ", ranks, hosts, ranks, 0, 1_000_000, 5_000_000)
                  + string("4242") + string("") + string("0.1.0") + string("/apps/sim"))
    paths = ["(none)", "[MPI]", "solve"]
    body += chunk("JOB_REGIONS", struct.pack("<I", 3) + b"".join(map(string, paths)))
    sizes = [(rid, s, rng.randint(1, 1000) * ranks) for rid in (0, 1, 2)
             for s in rng.sample(range(1, 100000), 146)]
    body += chunk("JOB_SIZE_COUNTS", struct.pack("<I", len(sizes))
                  + b"".join(struct.pack("<IIQQ", r, 0, s, n) for r, s, n in sizes))
    body += chunk("JOB_API_COUNTS", struct.pack("<I", 2) + struct.pack("<IIQ", 0, 0, 9 * ranks)
                  + struct.pack("<IIQ", 0, 9, 8 * ranks))
    rss = [(64 << 20) + rng.randint(0, 1 << 24) for _ in range(ranks)]
    for first in range(0, ranks, 65536):
        rows = range(first, min(ranks, first + 65536))
        body += chunk("JOB_RANKS", struct.pack("<I", len(rows)) + b"".join(
            struct.pack("<6I4Q7q", r, r // 64, 10000 + r, 1, 31, int(r % 97 == 0),
                        300 + r % 50, 20000 + r % 70, (1 << 20) + r, 5 << 20,
                        (8 << 20) + r, (4 << 20) + r, 4 << 20, rss[r], rss[r] // 2,
                        7 << 20, 1 << 20) for r in rows))
    host_rows = b""
    for h in range(hosts):
        mine = rss[h * 64:(h + 1) * 64]
        host_rows += string(f"node{h:05d}") + struct.pack(
            "<IIqqqq", len(mine), 0, sum(mine), max(mine), sum(v // 2 for v in mine), max(mine) // 2)
    body += chunk("JOB_HOSTS", struct.pack("<I", hosts) + host_rows)
    path = directory / "heapscope.4242.job.hsj"
    path.write_bytes(body)
    return path


def job_file_main(ranks: int) -> int:
    with tempfile.TemporaryDirectory(prefix="hs-jobfile-") as tmp:
        d = Path(tmp)
        size = write_job_file(d, ranks).stat().st_size / 1024 / 1024
        pythonpath, pycache = os.environ.get("PYTHONPATH", ""), str(d / "pycache")
        _run(pythonpath, [str(d), "-o", str(d / "report.txt")], pycache)      # (bytecode cache)
        times = [_run(pythonpath, [str(d), "--format", "json", "-o", str(d / "report.json")],
                      pycache)[0] for _ in range(5)]
    print(f"Job report through the job file (`heapscope report DIR --format json`), {ranks} "
          f"ranks, a {size:.1f} MB job file: {statistics.median(times):.2f} s (median of 5, "
          f"min {min(times):.2f}, max {max(times):.2f}; {os.cpu_count()} CPUs).")
    return 0


def _run(pythonpath: str, args, pycache: str):
    """(wall seconds, CPU seconds: user + system) of one report. Bytecode is cached in
    `pycache` (PYTHONPYCACHEPREFIX: the trees are not written to), as an installed
    package has it, even where PYTHONDONTWRITEBYTECODE is set: compiling the modules
    again at every run would add 0.1-0.3 s to both sides."""
    env = dict(os.environ, PYTHONPATH=pythonpath, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "heapscope", "report", *args], check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def job_file_ab(ranks: int, before: str, after: str, pairs: int) -> int:
    """Interleaved pairs (before then after, then the other way round) of the job file's
    JSON and text reports; medians, min-max, the ratio before/after of the medians with
    the min-max of the pairs' ratios."""
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="hs-jobfile-") as tmp:
        d = Path(tmp)
        size = write_job_file(d, ranks).stat().st_size / 1024 / 1024
        modes = {"JSON (`--format json`)": ["--format", "json"], "text": []}
        times = {m: {"before": [], "after": []} for m in modes}
        pycache = str(d / "pycache")
        for path in (before, after):         # (one untimed run each: the bytecode cache)
            _run(path, [str(d), "-o", str(d / "out")], pycache)
        for i in range(pairs):
            for m, extra in modes.items():
                order = (("before", before), ("after", after))
                for which, path in (order if i % 2 == 0 else order[::-1]):
                    times[m][which].append(_run(path, [str(d), *extra, "-o", str(d / "out")], pycache))
            load.append(os.getloadavg()[0])
    print(f"job file of {ranks} ranks ({size:.1f} MB), {pairs} interleaved pairs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{min(load):.1f}-{max(load):.1f}, {os.cpu_count()} CPUs\n")
    print("| report | before (s) | min-max | after (s) | min-max | ratio before/after (pairs) "
          "| CPU before/after (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m, t in times.items():
        b, a = [w for w, _ in t["before"]], [w for w, _ in t["after"]]
        ratios = [x / y for x, y in zip(b, a)]
        cpu = [statistics.median(c for _, c in t[which]) for which in ("before", "after")]
        print(f"| {m} | {statistics.median(b):.2f} | {min(b):.2f}-{max(b):.2f} | "
              f"**{statistics.median(a):.2f}** | {min(a):.2f}-{max(a):.2f} | "
              f"{statistics.median(b) / statistics.median(a):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) "
              f"| {cpu[0]:.2f} / {cpu[1]:.2f} |")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--job-file"] and "--ab" in sys.argv:
        i = sys.argv.index("--ab")
        return job_file_ab(int(sys.argv[2]), sys.argv[i + 1], sys.argv[i + 2],
                           int(sys.argv[i + 3]) if len(sys.argv) > i + 3 else 5)
    if sys.argv[1:2] == ["--job-file"]:
        return job_file_main(int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    with tempfile.TemporaryDirectory(prefix="hs-job-") as tmp:
        d = Path(tmp)
        write_job(d, ranks, samples)
        size = sum(f.stat().st_size for f in d.iterdir()) / ranks / 1024
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "heapscope", "report", str(d), "--format", "json",
                            "-o", str(d / "report.json")], check=True)
            times.append(time.perf_counter() - t0)
    print(f"Job report (`heapscope report DIR --format json`) on {ranks} synthetic rank files of "
          f"{size:.0f} KB ({samples} timeline samples, 438 size rows, 86 modules each): "
          f"{statistics.median(times):.2f} s (median of 3; {os.cpu_count()} CPUs).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

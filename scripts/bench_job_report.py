"""Time `heapscope report DIR` (the job report) on N synthetic rank files.

    python3 scripts/bench_job_report.py [N] [SAMPLES]      (default 2000 ranks, 600 samples)

Each file is a rank of one job written with tests/helpers/profile_builder.py: 438 (region,
size) rows in 3 regions ("(none)", "[MPI]", "solve"), 86 modules, and one TIMELINE
chunk of SAMPLES samples (a minute at the default 100 ms) in the layout of
src/format/profile_format.h. Prints one Markdown line with the file sizes and the
median wall time of 3 runs of the report (JSON output), from a source tree
(PYTHONPATH=python HEAPSCOPE_NATIVE_DIR=...) or the installed package.
"""
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from profile_builder import ProfileBuilder, chunk, string  # noqa: E402

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


def main() -> int:
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
                            "-o", os.devnull], check=True)
            times.append(time.perf_counter() - t0)
    print(f"Job report (`heapscope report DIR --format json`) on {ranks} synthetic rank files of "
          f"{size:.0f} KB ({samples} timeline samples, 438 size rows, 86 modules each): "
          f"{statistics.median(times):.2f} s (median of 3; {os.cpu_count()} CPUs).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

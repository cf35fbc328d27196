#!/usr/bin/env python3
"""Build a fixed-work xmalloc-test from a mimalloc-bench checkout.

    scripts/build_xmalloc_fixed.py CHECKOUT OUT

mimalloc-bench's xmalloc-test runs its producers and consumers for a time (-t
seconds) and reports a rate, which a loaded machine moves by the share of the CPUs
the program got. This copy's producers each make -t BATCHES batches of 4096 blocks
(-t is read as a count) and the program ends when the consumers have freed them
all, so the CPU time of a run (user + sys) compares allocator builds on the same
work, e.g. with scripts/bench_alloc_ab.py. The source is the checkout's, changed in
three places at build time (the producer's loop bound, main's wait, -t's meaning);
nothing of it is kept in this repository.
"""
import subprocess
import sys
from pathlib import Path


def patched(src: str) -> str:
    edits = [
        ("  while (!atomic_load(&done_flag)) {\n    struct batch *b = xmalloc(sizeof(*b));",
         "  for (long k = 0; k < fixed_batches; k++) {\n"
         "    struct batch *b = xmalloc(sizeof(*b));"),
        ("int object_size = DEFAULT_OBJECT_SIZE;",
         "int object_size = DEFAULT_OBJECT_SIZE;\nstatic long fixed_batches = 200;"),
        ("\t\t\trun_time = atof(optarg);", "\t\t\tfixed_batches = atol(optarg);"),
    ]
    for old, new in edits:
        if src.count(old) != 1:
            sys.exit(f"build_xmalloc_fixed: xmalloc-test.c has changed (no single {old!r})")
        src = src.replace(old, new)
    # main waits for the producers, then for the queue to empty, then stops the consumers
    start = src.find("\twhile (1) {\n\t  usleep(1000);")
    end = src.find("  for(i = 0; i < num_workers * 2; ++i)\n    pthread_join")
    if start < 0 or end < start:
        sys.exit("build_xmalloc_fixed: xmalloc-test.c has changed (main's timed wait)")
    wait = """  for (i = 0; i < num_workers; ++i) pthread_join(thread_ids[i * 2 + 1], &ptr);
  for (;;) {
    pthread_mutex_lock(&lock);
    int left = batch_count;
    pthread_mutex_unlock(&lock);
    if (left == 0) break;
    usleep(1000);
  }
  atomic_store(&done_flag, 1);
  pthread_mutex_lock(&lock);
  pthread_cond_broadcast(&empty_cv);
  pthread_cond_broadcast(&full_cv);
  pthread_mutex_unlock(&lock);
  for (i = 0; i < num_workers; ++i) pthread_join(thread_ids[i * 2], &ptr);
  if (0)
"""
    return src[:start] + wait + src[end:]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: build_xmalloc_fixed.py CHECKOUT OUT")
    srcdir = Path(sys.argv[1]) / "bench" / "xmalloc-test"
    source = srcdir / "xmalloc-test.c"
    if not source.is_file():
        sys.exit(f"build_xmalloc_fixed: {source} is missing (not a mimalloc-bench checkout)")
    out = Path(sys.argv[2])
    c_file = out.with_suffix(".c")
    c_file.write_text(patched(source.read_text()))
    res = subprocess.run(["cc", "-O2", "-pthread", "-w", f"-I{srcdir}", "-o", str(out),
                          str(c_file)], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"build_xmalloc_fixed: cc failed: {res.stderr.strip().splitlines()[-1]}")
    print(out)


if __name__ == "__main__":
    main()

"""What the benchmark scripts that regenerate their own BENCHMARKS.md section share:
a timed run, the machine sentence, and the section itself (the text between its BEGIN
and END marker lines is replaced, or appended when the file has none yet)."""
import re
import time
from pathlib import Path

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.bench.runner import measure


def update_section(path: str, begin: str, end: str, text: str) -> None:
    """Put `text` (which starts with `begin` and ends with `end`) into the file at `path`."""
    doc = Path(path).read_text()
    if begin in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: text, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + text + "\n"
    Path(path).write_text(doc)


def machine_sentence(m: dict, load_before: float, load_after: float) -> str:
    """The sentence every regenerated section ends its prose with: where and when."""
    return (f"Machine: {m['cpu']}, {m['cpus_usable']} of {m['cpus']} CPUs usable, "
            f"{m['memory_gib']} GiB; load average {load_before:.1f} before the runs, "
            f"{load_after:.1f} after; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.")


def publish(lines: list, script: str, rounds: int, begin: str, end: str, update) -> None:
    """Close a section (the command that regenerates it, the END marker), print it,
    and put it into the file `update` names (None: print only)."""
    lines += ["", "Regenerate: `HEAPSCOPE_NATIVE_DIR=$PWD/build/native PYTHONPATH=python python3 "
                  f"scripts/{script} --rounds {rounds} --update BENCHMARKS.md`.", "", end]
    text = "\n".join(lines)
    print(text)
    if update:
        update_section(update, begin, end, text)


def timed(cmd, env=None):
    """(wall s, CPU s, max RSS MiB) of one run of cmd; a failed run ends the script."""
    m = measure([str(c) for c in cmd], env=env)
    if not m.ok:
        raise SystemExit(f"{' '.join(map(str, cmd))} {m.failure_text()}")
    return m.wall, m.cpu, m.maxrss_kib / 1024

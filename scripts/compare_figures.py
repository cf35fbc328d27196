#!/usr/bin/env python3
"""Check that a change to the reader or the analyses leaves every figure as it was: run
the reporting commands (JSON) and `html` on recordings with this tree and with an older
revision, and compare their outputs byte for byte.

    python3 scripts/compare_figures.py RECORDING [RECORDING...] --base REV [--out DIR]

The commands: report (by size, by library, and by rank for an MPI job), stacks and
callgraph of every size, lifetimes, temporaries, peak and leaks (every type, with
--top 0) of a tracked recording, timeline, and the HTML page. REV is exported with
`git archive` (python/ and src/format/); its outputs are kept in DIR/base-REV and not
made again. Prints one line per output and per stderr (notes) that differs, with the
first line that differs, and exits 1 if an output differs.
"""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_analysis_speed import export  # noqa: E402


def commands(recording: str):
    """(name, heapscope arguments, what it writes to: "-" stdout, else a file name)."""
    tracked = ["lifetimes", "temporaries", "peak", "leaks"]
    out = [("report", ["report", recording, "--format", "json"]),
           ("report-library", ["report", recording, "--by", "library", "--format", "json"]),
           ("stacks", ["stacks", recording, "--size", "all", "--top", "0", "--format", "json"]),
           ("callgraph", ["callgraph", recording, "--size", "all", "--format", "json"]),
           ("timeline", ["timeline", recording, "--format", "json"])]
    if Path(recording).is_dir() and list(Path(recording).glob("*.job.hsj")):
        out.append(("report-rank", ["report", recording, "--by", "rank", "--format", "json"]))
    out += [(name, [name, recording, "--top", "0", "--format", "json"]) for name in tracked]
    return out


def run(pythonpath: Path, args, dest: Path) -> None:
    """stdout into dest, the exit status and stderr (notes) into dest.notes."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    res = subprocess.run([sys.executable, "-m", "heapscope", *args], env=env,
                         capture_output=True)
    dest.write_bytes(res.stdout)
    Path(f"{dest}.notes").write_bytes(f"exit {res.returncode}\n".encode() + res.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--base", required=True, help="git revision to compare against")
    ap.add_argument("--out", default="/tmp/heapscope-compare-figures")
    args = ap.parse_args()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.base],
                         check=True, capture_output=True, text=True).stdout.strip()
    out = Path(args.out)
    sides = {f"base-{rev}": None, "this": ROOT / "python"}
    differ = 0
    for r in args.recordings:
        tag = r.strip("/").replace("/", "_")
        for name, cmd in commands(r) + [("html", ["html", r, "-o", "PAGE"])]:
            files = {}
            for side, path in sides.items():
                d = out / side
                d.mkdir(parents=True, exist_ok=True)
                dest = d / f"{tag}.{name}"
                files[side] = dest
                if side != "this" and dest.exists():
                    continue          # the base's outputs do not change
                if path is None:
                    path = sides[side] = export(args.base)
                    shutil.copytree(ROOT / "python/heapscope/render/html/assets",
                                    path / "heapscope/render/html/assets", dirs_exist_ok=True)
                page = d / f"{tag}.page.html"
                run(path, [page.as_posix() if a == "PAGE" else a for a in cmd], dest)
                if name == "html":   # the page's bytes
                    dest.write_bytes(page.read_bytes() if page.exists() else b"")
            for what, suffix in (("", ""), (" notes", ".notes")):
                # (the page's path, which html names, differs by side)
                a, b = (Path(f"{files[s]}{suffix}").read_bytes().replace(str(out / s).encode(), b"DIR")
                        for s in sides)
                if a == b:
                    print(f"same    {r} {name}{what} ({len(a):,} bytes)", flush=True)
                    continue
                differ += not suffix
                la, lb = a.splitlines(), b.splitlines()
                at = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                print(f"DIFFERS {r} {name}{what}: line {at + 1}: "
                      f"{la[at][:300] if at < len(la) else b'(end)'!r} / "
                      f"{lb[at][:300] if at < len(lb) else b'(end)'!r}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

"""`heapscope demo`: the method on the bundled finite-element workload.

Step 1 (identify): record exact allocation counts per size and region of the FEM
workload (phases split, local, reduce, post) and print the report.
Step 2 (locate): pick the size with the most allocations in the busiest region, record
again with stacks for that size in that region, and print its stack trace types.
Step 3 (look): write that recording's HTML report and print its path.
Everything goes through the public commands (`record`, `report`, `stacks`), so the demo
shows exactly what a user would type; each command is echoed before it runs.
"""
import json
import shlex
import subprocess
import sys
from pathlib import Path

from heapscope.commands.options import add_top_option, non_negative
from heapscope.errors import HeapscopeError
from heapscope.native import program

WORKLOAD = "hs-wl-fem-temporaries"


def register(sub):
    p = sub.add_parser("demo", help="profile the bundled FEM workload: identify, locate, then "
                                    "write its HTML report",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", default="heapscope-demo", metavar="DIR",
                   help="directory for the two recordings (default: ./heapscope-demo)")
    p.add_argument("--cells", type=int, default=128, metavar="N",
                   help="the workload's mesh is N x N squares (default 128)")
    add_top_option(p, "sizes in the report")
    p.add_argument("--stack-types", type=non_negative("--stack-types"), default=3, metavar="N",
                   help="stack trace types printed in full (default 3)")
    p.set_defaults(func=run)


def _heapscope(args, capture=False):
    cmd = [sys.executable, "-m", "heapscope", *map(str, args)]
    shown = "heapscope " + " ".join(shlex.quote(str(a)) for a in args)
    if not capture:
        print(f"\n$ {shown}", flush=True)
    res = subprocess.run(cmd, capture_output=capture, text=True)
    if res.returncode != 0:
        detail = (res.stderr or "").strip().splitlines()[-1:] if capture else []
        raise HeapscopeError(f"demo step failed: {shown} exited {res.returncode}"
                             + (f": {detail[0]}" if detail else ""))
    return res.stdout


def _hottest(profile_dir):
    """(region, size) with the most allocations, preferring the busiest region."""
    data = json.loads(_heapscope(["report", profile_dir, "--format", "json"], capture=True))
    per_region = {}
    for row in data["sizes"]:
        for region, count in row["counts"].items():
            per_region[region] = per_region.get(region, 0) + count
    if not per_region:
        raise HeapscopeError("the demo workload recorded no allocations")
    region = max(per_region, key=per_region.get)
    size = max(data["sizes"], key=lambda r: r["counts"].get(region, 0))["size"]
    return region, size


def _fresh(directory: Path) -> Path:
    """The demo owns its output directories: old profiles there would be merged in."""
    if directory.exists():
        for old in directory.glob("*.hsp"):
            old.unlink()
    return directory


def run(args):
    workload = program(WORKLOAD)
    out = Path(args.output)
    if not 16 <= args.cells <= 4096:   # the workload splits the mesh into 16 subdomains
        raise HeapscopeError(f"--cells must be between 16 and 4096, not {args.cells}")
    workload_cmd = [str(workload), "--cells", str(args.cells)]

    print("heapscope demo: a finite-element workload with allocation anomalies "
          "(elements copied out of the mesh, matrices as vectors of vectors, Eigen temporaries).")
    print("Step 1, identify: exact allocation counts per size and region.")
    identify_dir = _fresh(out / "identify")
    _heapscope(["record", "-o", identify_dir, "--", *workload_cmd])
    _heapscope(["report", identify_dir, "--top", args.top])

    region, size = _hottest(identify_dir)
    print(f"\nStep 2, locate: size {size} B has the most allocations in region '{region}'; "
          "record its stack trace types.")
    locate_dir = _fresh(out / "locate")
    _heapscope(["record", "-o", locate_dir, "--sizes", size, "--regions", region,
                "--", *workload_cmd])
    _heapscope(["stacks", locate_dir, "--size", size, "--region", region,
                "--top", args.stack_types])
    print("\nStep 3, look: the same recording as one offline HTML page (sizes x regions, the "
          "flame graph and call graph of the size, the timeline).")
    page = out / "heapscope-report.html"
    _heapscope(["html", locate_dir, "-o", page])
    print(f"\nProfiles kept in {out}/. Open {page.resolve()} in a browser. Next: "
          f"`heapscope report {identify_dir} --region {region}`, "
          f"`heapscope stacks {locate_dir} --size {size}`.")
    return 0

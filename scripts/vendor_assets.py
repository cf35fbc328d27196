#!/usr/bin/env python3
"""Vendor the JavaScript that `heapscope html` inlines into its pages, pinned.

    python3 scripts/vendor_assets.py            # fetch (or reuse the cache), verify, extract
    python3 scripts/vendor_assets.py --check    # only say whether the assets are in place

Each package below is fetched with `npm pack NAME@VERSION` (the registry's ordinary
client) into a cache, its tarball checked against the sha512 integrity the registry
published for that exact version (pinned here: a changed tarball stops the script),
and only the named dist files and the licence are extracted into
python/heapscope/render/html/assets/ (git-ignored, shipped as package data), with
MANIFEST.json naming version, licence and file of each. scripts/setup.sh runs it
before installing heapscope. Why these packages: docs/html-report.md.
"""
import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "python" / "heapscope" / "render" / "html" / "assets"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "heapscope" / "npm"

# name, version, licence, sha512 integrity (from `npm view NAME@VERSION dist.integrity`),
# files to extract: {path in the tarball: name in assets/}. The d3 modules are the ones
# d3-flame-graph's UMD build takes from the global `d3`, and what those need, in load order.
PACKAGES = [
    ("uplot", "1.6.32", "MIT",
     "KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw==",
     {"package/dist/uPlot.iife.min.js": "uPlot.iife.min.js",
      "package/dist/uPlot.min.css": "uPlot.min.css"}),
    ("d3-array", "3.2.5", "ISC",
     "Th8qGXoBalmWsstpkuhmBuTsBQIFqYOJtjlBvNVvBfJ8E3uYusBUwUR8HU20U0qKKQkgCvKyR1YjiozWadk5QA==",
     {"package/dist/d3-array.min.js": "d3-array.min.js"}),
    ("d3-color", "3.1.1", "ISC",
     "lfab8x0Bj0UO7SNsY8dZSbNIA6ipbkE3X0NG9nqjCu6CfCHZseuDnOSJY7hidKrjpP++i1M2qT+FlAdPKYRilA==",
     {"package/dist/d3-color.min.js": "d3-color.min.js"}),
    ("d3-dispatch", "3.0.2", "ISC",
     "sAzH4Y4nsLo8eSqw5jKiZt+LU2wZmL/qS+OkxQGjhwazB/D7TY34R/QK1eshfGr7cZEKymKZ/Haem7m+lu98Sg==",
     {"package/dist/d3-dispatch.min.js": "d3-dispatch.min.js"}),
    ("d3-ease", "3.0.2", "BSD-3-Clause",
     "B5znKqRmKROAN4oHWQ50W/qisVjA9GXh2WMsVKdFVp4DxWmcrOsweqgUOUVsv5th96kwaZlokU6SlV4J3gak1w==",
     {"package/dist/d3-ease.min.js": "d3-ease.min.js"}),
    ("d3-format", "3.1.3", "ISC",
     "+F+/49swqmGuQJmSKnVMIDH/QkEFV5li9QRj0xm/KhyAUBv099O5PrvpQFxBp24PYph17Mnvt9mjKQV0ii0nMA==",
     {"package/dist/d3-format.min.js": "d3-format.min.js"}),
    ("d3-hierarchy", "3.1.3", "ISC",
     "GRajN5ZcnEwYFWqqdzhG1qJ3+fDg6WWzk47TJg7ePY7yvYAgRfD2r1mUx+wviBOWuCwamCUzjwMSdato43jbGA==",
     {"package/dist/d3-hierarchy.min.js": "d3-hierarchy.min.js"}),
    ("d3-interpolate", "3.0.2", "ISC",
     "IRzGU62DtxhvsnSTWMQIdnoZ6gA+BCWwBon1EJI6SjoN595799b6z/QRBzXfFhE8iupUPp3042yBNo0STPqnzQ==",
     {"package/dist/d3-interpolate.min.js": "d3-interpolate.min.js"}),
    ("d3-time", "3.1.1", "ISC",
     "Ze7rjrhMzdeulh0/hjcfFj7XLAHOfowtEMfsoG6DU866HPynQNW7Wfen6hzXcqKTv8XzxvF6Hzr5XD6bMHr2ug==",
     {"package/dist/d3-time.min.js": "d3-time.min.js"}),
    ("d3-time-format", "4.1.1", "ISC",
     "22XaqjyCjpqgda20erhsOjGmC3vvYwTNYniKAd45W5UWLDF43moeOuV9qYpRqobIlsnK0UhnKZjUUJm3VgORUA==",
     {"package/dist/d3-time-format.min.js": "d3-time-format.min.js"}),
    ("d3-scale", "4.0.3", "ISC",
     "66cWobCNzcMvlfoaDHCxuIv9TBUWG1BLOWdv9kHHFuCr1JdqAWPvTmsaEYDD5NRMyWZ5+7u0GqiCDfMXMqh3hg==",
     {"package/dist/d3-scale.min.js": "d3-scale.min.js"}),
    ("d3-selection", "3.0.1", "ISC",
     "ODSf35vqCrlCfp7hrm0eZjvOosSXSYLjqvIlhMBV9q9VOx7EBJG6pc+uXBswEZNJgCGJ+qnKYcWutbZDIxe/Xg==",
     {"package/dist/d3-selection.min.js": "d3-selection.min.js"}),
    ("d3-timer", "3.0.2", "ISC",
     "1Il1aliroVSErrv5aulRBxAY+7+DnaoLIWGd1C6SsBTWDeobWiP/V69vwb8vT6abR1kKwaNe1196pmaQ1fK90A==",
     {"package/dist/d3-timer.min.js": "d3-timer.min.js"}),
    ("d3-transition", "3.0.2", "ISC",
     "RcjCsdFgyFoDB+QXLC5m60ZkTN0k9zH+ovoLlTdJnDS1AbfbcuowiM4pCKSTOclNibS4f4J4cbv2m7O7y8NTOQ==",
     {"package/dist/d3-transition.min.js": "d3-transition.min.js"}),
    ("d3-flame-graph", "5.0.0", "Apache-2.0",
     "ALZQ4at8Dex8HCoj9D5p5TY6gLNEc2vAZAy+NKO/6GLEfhYJmGxYuRClO6RPoplndyOHxQTPipdlGeMggkjtnQ==",
     {"package/dist/d3-flamegraph.umd.min.js": "d3-flamegraph.umd.min.js"}),
]
LICENCE_NAMES = ("package/LICENSE", "package/LICENSE.md", "package/LICENSE.txt")


def fail(message: str) -> "NoReturn":
    print(f"vendor_assets: error: {message}", file=sys.stderr)
    sys.exit(1)


def integrity(data: bytes) -> str:
    return base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarball(name: str, version: str, expected: str) -> bytes:
    """The package's tarball from the cache, else from `npm pack`; checked either way."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}-{version}.tgz"
    if not path.exists():
        npm = shutil.which("npm")
        if npm is None:
            fail("npm not found (apt-get install npm): it fetches the pinned packages")
        res = subprocess.run([npm, "pack", f"{name}@{version}", "--pack-destination", str(CACHE),
                              "--silent"], capture_output=True, text=True, timeout=300)
        if res.returncode != 0 or not path.exists():
            first = (res.stderr.strip().splitlines() or ["no message"])[-1]
            fail(f"npm pack {name}@{version} failed: {first}")
    data = path.read_bytes()
    got = integrity(data)
    if got != expected:
        path.unlink()
        fail(f"{name}@{version}: sha512 {got} is not the pinned {expected} (tarball removed)")
    return data


def extract(name: str, data: bytes, files: dict) -> str:
    """Write the named files into ASSETS; returns the licence file's name."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        for inner, outer in files.items():
            if inner not in members:
                fail(f"{name}: {inner} is not in the package")
            (ASSETS / outer).write_bytes(tar.extractfile(members[inner]).read())
        licence = next((members[n] for n in LICENCE_NAMES if n in members), None)
        if licence is None:
            fail(f"{name}: the package has no LICENSE file")
        out = f"LICENSE.{name}"
        (ASSETS / out).write_bytes(tar.extractfile(licence).read())
        return out


def manifest() -> list:
    return [dict(name=n, version=v, license=lic, integrity=f"sha512-{i}",
                 files=sorted(files.values()), license_file=f"LICENSE.{n}")
            for n, v, lic, i, files in PACKAGES]


def in_place() -> bool:
    path = ASSETS / "MANIFEST.json"
    if not path.exists():
        return False
    try:
        if json.loads(path.read_text()) != manifest():
            return False
    except ValueError:
        return False
    return all((ASSETS / f).exists() for _, _, _, _, files in PACKAGES for f in files.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the assets are in place")
    args = ap.parse_args()
    if in_place():
        print(f"vendor_assets: {len(PACKAGES)} packages in place in {ASSETS.relative_to(ROOT)}")
        return 0
    if args.check:
        print("vendor_assets: the assets are missing or not the pinned versions: "
              "run scripts/vendor_assets.py", file=sys.stderr)
        return 1
    ASSETS.mkdir(parents=True, exist_ok=True)
    for name, version, _, expected, files in PACKAGES:
        extract(name, tarball(name, version, expected), files)
    (ASSETS / "MANIFEST.json").write_text(json.dumps(manifest(), indent=1) + "\n")
    print(f"vendor_assets: {len(PACKAGES)} packages verified and extracted into "
          f"{ASSETS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The JavaScript and CSS a page inlines: the vendored libraries (assets/, put there at
build time by scripts/vendor_assets.py, pinned and checked) and heapscope's own (js/,
page.css), read from the package so a page needs nothing but itself."""
import json
from pathlib import Path
from typing import List

from heapscope.errors import HeapscopeError

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "assets"
OWN = HERE / "js"

# Load order: the d3 modules d3-flame-graph's UMD build takes from the global d3 (each
# after what it needs), then the flame graph, then uPlot.
LIBRARIES = ["d3-array.min.js", "d3-color.min.js", "d3-dispatch.min.js", "d3-ease.min.js",
             "d3-format.min.js", "d3-hierarchy.min.js", "d3-interpolate.min.js",
             "d3-time.min.js", "d3-time-format.min.js", "d3-scale.min.js",
             "d3-selection.min.js", "d3-timer.min.js", "d3-transition.min.js",
             "d3-flamegraph.umd.min.js", "uPlot.iife.min.js"]
LIBRARY_CSS = ["uPlot.min.css"]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HeapscopeError(f"the HTML report's JavaScript is missing ({path.name} in "
                             f"{path.parent}): run scripts/setup.sh (or scripts/vendor_assets.py)"
                             ) from None


def library_scripts() -> List[str]:
    return [_read(VENDORED / name) for name in LIBRARIES]


def library_styles() -> List[str]:
    return [_read(VENDORED / name) for name in LIBRARY_CSS]


def own_script(name: str) -> str:
    return _read(OWN / name)


def own_style() -> str:
    return _read(HERE / "page.css")


def versions() -> List[dict]:
    """name, version and licence of each vendored package (shown in the page's footer)."""
    manifest = json.loads(_read(VENDORED / "MANIFEST.json"))
    return [dict(name=m["name"], version=m["version"], license=m["license"]) for m in manifest]

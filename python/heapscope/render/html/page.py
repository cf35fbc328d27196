"""One self-contained HTML page: the sections' data as JSON, the libraries, heapscope's
own script and style, all inlined (the page loads nothing, so it opens offline from a
file). Python decides what each section holds (render/html/<section>.py); the scripts
in js/ only lay it out."""
import html
import json
from typing import Callable, Dict, List, Sequence, Tuple

from heapscope import __version__
from heapscope.render.html import assets
from heapscope.render.json_text import json_default

# (id, title, script, data builder) of a section
Section = Tuple[str, str, str, Callable[[dict], dict]]


def _script(text: str) -> str:
    # "</script" inside inlined code would end the element early; "<\/" means the same in JS
    return "<script>" + text.replace("</script", "<\\/script") + "</script>"


def data_json(data: dict) -> str:
    """Compact JSON, safe inside a <script> element (no "<" left to open a tag)."""
    text = json.dumps(data, separators=(",", ":"), default=json_default, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(docs: dict, sections: Sequence[Section], title: str) -> str:
    data: Dict[str, dict] = {sid: build(docs) for sid, _, _, build in sections}
    data["meta"] = dict(title=title, version=__version__, libraries=assets.versions(),
                        sections=[dict(id=sid, title=t) for sid, t, _, _ in sections])
    nav = "".join(f'<a href="#{sid}">{html.escape(t)}</a>' for sid, t, _, _ in sections)
    bodies = "".join(
        f'<section id="{sid}" class="hs-section"><h2>{html.escape(t)}</h2>'
        f'<div class="hs-body" data-section="{sid}"></div></section>'
        for sid, t, _, _ in sections)
    scripts: List[str] = [_script(s) for s in assets.library_scripts()]
    scripts.append(_script(assets.own_script("common.js")))
    seen = set()
    for _, _, name, _ in sections:
        if name not in seen:
            seen.add(name)
            scripts.append(_script(assets.own_script(name)))
    scripts.append(_script(assets.own_script("start.js")))
    styles = "\n".join(assets.library_styles() + [assets.own_style()])
    return "".join([
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{html.escape(title)}</title><style>{styles}</style></head><body>",
        f"<header><h1>{html.escape(title)}</h1><nav>{nav}</nav></header><main>{bodies}</main>",
        "<footer id=\"hs-footer\"></footer>",
        f"<script type=\"application/json\" id=\"hs-data\">{data_json(data)}</script>",
        *scripts, "</body></html>\n"])

"""Text of the `heapscope stacks` document (analysis.stack_types.build): the process header,
then per size and region its stack trace types, most frequent first, one frame a line."""
from heapscope.render.notes import collapse
from heapscope.render.processes import header_lines, label
from heapscope.render.text import counted, num
from heapscope.symbolize import Frame


def render(doc: dict, full_names: bool = False, verbose: bool = False) -> str:
    """verbose: every note on its own line (repeated ones are otherwise one line)."""
    n = len(doc["processes"])
    out = [f"heapscope stacks: {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], doc["merged"])]
    if doc.get("sampling"):
        out.append(f"  sampled   one stack a mean {num(doc['sampling']['mean_bytes'])} bytes apart: "
                   f"type counts are estimates (~) with "
                   f"{doc['sampling']['confidence']:.0%} intervals; size totals are exact")
    for note in collapse(doc["notes"], verbose):
        out.append(f"  note      {note}")
    for miss in doc["not_recorded"]:
        out.append("")
        out.append(miss["message"].replace("; record them with: ", ";\n  record them with: "))
    for w in doc.get("without_stack", []):
        out.append(f"  no stack  {counted(w['count'], 'allocation')} of size {num(w['size'])} in region "
                   f"{w['region']}: {w['reason']}")
    if not doc["groups"] and not doc["not_recorded"] and not doc.get("without_stack"):
        where = f" in region {doc['filters']['region']}" if doc["filters"]["region"] else ""
        out += ["", f"No allocation of size {doc['filters']['size']}{where} was recorded with "
                    f"its stack: the program made none there."]
    if doc.get("per_process") is not None:
        for sec in doc["per_process"]:
            proc = doc["processes"][sec["process"]]
            out += ["", f"=== {label(proc)}: {' '.join(proc['cmdline']) or proc['exe']}"]
            out += _groups(sec["groups"], doc["filters"], full_names)
        if len(doc["processes"]) > 1:
            out += ["", f"=== all {len(doc['processes'])} processes merged"]
    out += _groups(doc["groups"], doc["filters"], full_names)
    return "\n".join(out).rstrip() + "\n"


def _figures(t: dict) -> str:
    """'12 occurrences, 384 bytes', or for a sampled type its estimate and interval."""
    if not t.get("estimated"):
        return f"{counted(t['count'], 'occurrence')}, {counted(t['bytes'], 'byte')}"
    return (f"~{counted(t['count'], 'occurrence')} (95% interval {num(t['count_low'])}.."
            f"{num(t['count_high'])}, from {counted(t['samples'], 'sample')}), "
            f"~{counted(t['bytes'], 'byte')}")


def _groups(groups: list, filters: dict, full_names: bool) -> list:
    out = []
    texts = {}   # a frame's line, by its fields: stack types share most of their frames
    top, depth = filters["top"], filters["depth"]
    for g in groups:
        types = counted(g['types'], 'type')
        if g.get("samples") is not None:
            types += f" seen in {counted(g['samples'], 'sample')}"
        out += ["", f"Stack trace types for size {num(g['size'])} in region {g['region']}: "
                    f"{types}, {counted(g['count'], 'allocation')} ({counted(g['bytes'], 'byte')})"]
        if g.get("unseen"):
            out.append(f"  in types no sample saw: up to {counted(g['unseen']['count_high'], 'allocation')}"
                       f" (95%; Good-Turing estimate ~{num(g['unseen']['count'])})")
        for t in g["stack_types"]:
            out += ["", f"Stack trace type {t['rank']}/{g['types']}: {_figures(t)}"]
            for i, f in enumerate(t["frames"]):
                key = (f["function"], f["file"], f["line"], f["module"], f["offset"], f["inlined"])
                text = texts.get(key)
                if text is None:
                    text = texts[key] = Frame(**f).text(short=not full_names)
                out.append(f"  [{i}] {text}")
            hidden = t["frames_total"] - len(t["frames"])
            if hidden > 0:
                out.append(f"  ... {hidden} more frame{'s' if hidden != 1 else ''} (--depth {depth} set)")
        if top and g["types"] > len(g["stack_types"]):
            out += ["", f"({len(g['stack_types'])} of {g['types']} types shown; --top N shows more, "
                        f"--top 0 all)"]
    return out

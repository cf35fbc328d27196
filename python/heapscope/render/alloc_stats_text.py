"""Text of the allocator spy's documents (analysis.alloc_stats): per process, the
figures of MPC's `chain --all -stat` as a table of the process, its thread heaps and
its chains; and one run against another."""
from typing import Dict, List, Optional

from heapscope.render.text import counted, num, table
from heapscope.render.timeline_text import size

LEVELS = ["none", "some", "high", "critical"]


def value(v, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "bytes":
        return size(int(v))
    if unit == "ratio":
        return f"{v:.4f}"
    return num(int(v))


def _pressure(p: Optional[Dict]) -> str:
    if not p:
        return "memory pressure: not in this dump"
    if not p.get("pressure_enabled"):
        return "memory pressure: not read (HSMALLOC_PRESSURE=0), fixed decay"
    if not p.get("pressure_checks"):
        return f"memory pressure: not read yet; decay {p.get('decay_ms_now')} ms"
    level = p.get("pressure_level", 0)
    psi = p.get("psi_some_avg10_x100", -1)
    return (f"memory pressure: {LEVELS[level] if 0 <= level < 4 else level} "
            f"(headroom {p.get('headroom_permille', 0) / 10:.1f}%"
            + (f", PSI some avg10 {psi / 100:.2f}%" if psi is not None and psi >= 0 else "")
            + f"), decay now {p.get('decay_ms_now')} ms, "
            f"{counted(p.get('pressure_purges', 0), 'purge')} at once")


def _numa(n: Optional[Dict]) -> str:
    if not n:
        return "NUMA: not in this dump"
    return (f"NUMA: {counted(n.get('numa_nodes', 0), 'node')}, placement "
            f"{'on' if n.get('numa_placing') else 'off'}, "
            f"{counted(n.get('numa_binds', 0), 'segment')} placed "
            f"({n.get('numa_bind_failures', 0)} failed), cached segments reused "
            f"{n.get('numa_reused_same_node', 0)} on the same node, "
            f"{n.get('numa_reused_other_node', 0)} on another")


def _chain_name(c: Dict) -> str:
    """A chain's column: its name, and its number when the name is not the number."""
    name, cid = c.get("chain"), c.get("chain_id")
    return f"chain {name}" if cid is None or str(cid) == name else f"chain {name} #{cid}"


def _chain_nodes(chains: List[Dict]) -> List[str]:
    """A line for each chain bound to a NUMA node (hsmalloc_chain_bind_node)."""
    lines = []
    for c in chains:
        n = c.get("numa") or {}
        if n.get("numa_node", -1) >= 0:
            lines.append(f"{_chain_name(c)}: bound to NUMA node {n['numa_node']}, "
                         f"{counted(n.get('numa_binds', 0), 'placement')} "
                         f"({n.get('numa_bind_failures', 0)} failed)")
    return lines


def render(doc: Dict) -> str:
    out: List[str] = []
    where = f" ({doc['event']} dumps)" if doc.get("event") else ""
    if not doc["processes"]:
        return f"{doc['file']}: no dump{where} among {counted(doc['dumps'], 'dump')}\n"
    out.append(f"hsmalloc statistics: {doc['file']}, "
               f"{counted(len(doc['processes']), 'process', 'processes')}{where}")
    for proc in doc["processes"]:
        out.append("")
        out.append(f"process {proc['pid']} ({proc['event']} dump #{proc['seq']}, "
                   f"line {proc['line']})")
        cols = [("process", proc["figures"])] + [(_chain_name(c), c) for c in proc["chains"]]
        rows = [[label] + [value(f.get(key), unit) for _, f in cols]
                for key, label, unit in doc["figures"]]
        out.append(table(["figure"] + [name for name, _ in cols], rows))
        if proc.get("heaps_frees_behind"):
            out.append(f"  frees (and live blocks, overhead) leave out the latest frees of their own "
                       f"blocks by {counted(proc['heaps_frees_behind'], 'running thread')} (counted "
                       f"when a page goes back, the thread exits or reads its statistics)")
        if proc["heaps"] is None:
            out.append("  thread heaps: not in this dump (a lock was taken when it was written)")
        elif proc["heaps"]:
            out.append("  thread heaps (operations by the heap's thread; memory the heap holds):")
            header = ["heap", "state"] + [label for _, label, _ in doc["heap_figures"]]
            rows = [[str(h["id"]), h["state"]] + [value(h.get(key), unit)
                                                  for key, _, unit in doc["heap_figures"]]
                    for h in proc["heaps"]]
            out.append(table(header, rows, left=2))
        out.append("  " + _pressure(proc["pressure"]))
        out.append("  " + _numa(proc["numa"]))
        out.extend("  " + line for line in _chain_nodes(proc["chains"]))
    if len(doc["processes"]) > 1:
        out.append("")
        out.append("all processes")
        rows = [[label, value(doc["totals"].get(key), unit)] for key, label, unit in doc["figures"]]
        out.append(table(["figure", "total"], rows))
    return "\n".join(out) + "\n"


def _compare_table(rows: List[Dict]) -> str:
    out = []
    for r in rows:
        if r["delta"] is None:
            delta = "-"
        elif r["unit"] == "ratio":
            delta = f"{r['delta']:+.4f}"
        elif r["unit"] == "bytes":
            delta = ("+" if r["delta"] >= 0 else "-") + size(abs(int(r["delta"])))
        else:
            delta = f"{int(r['delta']):+,}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}x"
        out.append([r["label"], value(r["a"], r["unit"]), value(r["b"], r["unit"]), delta, ratio])
    return table(["figure", "A", "B", "B - A", "B / A"], out)


def render_compare(doc: Dict) -> str:
    out = [f"hsmalloc statistics: A = {doc['a']} ({counted(doc['processes'][0], 'process', 'processes')}), "
           f"B = {doc['b']} ({counted(doc['processes'][1], 'process', 'processes')})",
           _compare_table(doc["rows"])]
    for chain in doc.get("chains", []):
        where = {"both": "", "a": " (in A only)", "b": " (in B only)"}[chain["in"]]
        out.append("")
        out.append(f"chain {chain['chain']}{where}, summed over the processes that have it")
        out.append(_compare_table(chain["rows"]))
    return "\n".join(out) + "\n"

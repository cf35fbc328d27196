"""The allocator spy's document: hsmalloc's statistics of one run (one dump per process,
its thread heaps and chains) in the figures of the MPC allocator's `chain --all -stat`
(requested, real and virtual memory, overhead, allocations and reallocations, remote-free
queues, fast-path hit rate, fragmentation), and one run against another.

Documents only: rows of figures with their keys, labels and units; no text."""
from typing import Dict, List, Optional

# (key in hsmalloc's JSON, label, unit) of the process figures, in report order.
# Units: "bytes", "count", "ratio".
PROCESS_FIGURES = [
    ("requested_total", "requested (total since start)", "bytes"),
    ("allocated_total", "allocated, usable (total)", "bytes"),
    ("allocated_now", "live blocks, usable", "bytes"),
    ("real_bytes", "real memory (committed + heap objects)", "bytes"),
    ("virtual_bytes", "virtual memory (mapped + heap objects)", "bytes"),
    ("overhead_bytes", "overhead (real - live)", "bytes"),
    ("metadata_bytes", "  metadata (headers, heaps)", "bytes"),
    ("free_in_pages", "  free in pages", "bytes"),
    ("free_not_returned", "  free, not returned to the OS", "bytes"),
    ("committed_peak", "committed memory, peak", "bytes"),
    ("allocs", "allocations", "count"),
    ("reallocs", "reallocations", "count"),
    ("frees", "frees", "count"),
    ("fast_path_hit_rate", "fast-path hit rate", "ratio"),
    ("fragmentation", "internal fragmentation (allocated / requested)", "ratio"),
    ("remote_frees", "remote frees", "count"),
    ("rfq_blocks", "remote-free queue: blocks received", "count"),
    ("rfq_bytes", "remote-free queue: bytes received", "bytes"),
    ("transfer_out", "transfer cache: blocks put", "count"),
    ("transfer_in", "transfer cache: blocks taken", "count"),
    ("purges", "returns to the OS", "count"),
    ("purged_bytes", "bytes returned to the OS", "bytes"),
    ("segments", "segments", "count"),
    ("heaps", "thread heaps", "count"),
]

HEAP_FIGURES = [
    ("requested_bytes", "requested", "bytes"),
    ("real_bytes", "real", "bytes"),
    ("virtual_bytes", "virtual", "bytes"),
    ("allocs", "allocs", "count"),
    ("reallocs", "reallocs", "count"),
    ("frees", "frees", "count"),
    ("fast_path_hit_rate", "fast path", "ratio"),
    ("fragmentation", "frag", "ratio"),
    ("remote_frees", "remote frees", "count"),
    ("rfq_blocks", "rfq blocks", "count"),
    ("rfq_bytes", "rfq bytes", "bytes"),
]

EVENTS = ("exit", "signal", "call")


def pick(snapshots: List[Dict], event: Optional[str] = None) -> List[Dict]:
    """The last dump of each process (of `event` only when given), by pid."""
    last: Dict[int, Dict] = {}
    for snap in snapshots:
        if event is None or snap.get("event") == event:
            last[snap["pid"]] = snap
    return [last[pid] for pid in sorted(last)]


def _figures(obj: Dict, figures) -> Dict:
    return {key: obj.get(key) for key, _, _ in figures}


def _totals(processes: List[Dict]) -> Dict:
    """Figures summed over processes; the two ratios recomputed from their parts."""
    total = {}
    for key, _, unit in PROCESS_FIGURES:
        if unit != "ratio":
            total[key] = sum(p["figures"].get(key) or 0 for p in processes)
    allocs = sum(p["slow_parts"][1] for p in processes)
    slow = sum(p["slow_parts"][0] for p in processes)
    total["fast_path_hit_rate"] = 1.0 - slow / allocs if allocs else 1.0
    requested = total.get("requested_total") or 0
    total["fragmentation"] = (total.get("allocated_total") or 0) / requested if requested else 1.0
    return total


def build_alloc_stats(path: str, snapshots: List[Dict], event: Optional[str] = None) -> Dict:
    """One run: each process's last dump (of `event`), its heaps and chains, and totals."""
    chosen = pick(snapshots, event)
    if not chosen:
        return {"format": "heapscope-alloc-stats", "version": 1, "file": path, "event": event, "processes": [],
                "totals": None, "figures": PROCESS_FIGURES, "heap_figures": HEAP_FIGURES,
                "dumps": len(snapshots)}
    processes = []
    for snap in chosen:
        heaps = snap.get("per_heap")
        processes.append({
            "pid": snap["pid"], "event": snap.get("event"), "seq": snap.get("seq"),
            "line": snap.get("line"),
            "figures": _figures(snap, PROCESS_FIGURES),
            "slow_parts": (snap.get("slow_allocs") or 0, snap.get("allocs") or 0),
            # running threads whose latest frees of their own blocks are not in "frees"
            "heaps_frees_behind": snap.get("heaps_frees_behind") or 0,
            "pressure": snap.get("pressure"),
            "numa": snap.get("numa"),
            "heaps": None if heaps is None else [
                dict(_figures(h, HEAP_FIGURES), id=h.get("id"), state=h.get("state"))
                for h in heaps],
            "chains": [dict(_figures(c, PROCESS_FIGURES), chain=c.get("chain"),
                            chain_id=c.get("chain_id"), numa=c.get("numa"))
                       for c in snap.get("chains") or []],
        })
    return {"format": "heapscope-alloc-stats", "version": 1, "file": path, "event": event,
            "processes": processes,
            "totals": _totals(processes), "figures": PROCESS_FIGURES,
            "heap_figures": HEAP_FIGURES, "dumps": len(snapshots)}


def _rows(ta: Optional[Dict], tb: Optional[Dict]) -> List[Dict]:
    """A row per figure of two sets of figures: A, B, B - A and B / A (None when unknown)."""
    rows = []
    for key, label, unit in PROCESS_FIGURES:
        va = (ta or {}).get(key)
        vb = (tb or {}).get(key)
        delta = None if va is None or vb is None else vb - va
        ratio = None if not va or vb is None else vb / va
        rows.append({"key": key, "label": label, "unit": unit, "a": va, "b": vb,
                     "delta": delta, "ratio": ratio})
    return rows


def chains_by_name(doc: Dict) -> Dict[str, Dict]:
    """A run's chains by name (unnamed ones by number, "#N"), each name's figures summed
    over the processes that have it; the two ratios recomputed from their parts."""
    groups: Dict[str, List[Dict]] = {}
    for proc in doc["processes"]:
        for c in proc["chains"]:
            name = c.get("chain") or f"#{c.get('chain_id')}"
            groups.setdefault(name, []).append(c)
    out = {}
    for name, chains in groups.items():
        if len(chains) == 1:
            out[name] = {key: chains[0].get(key) for key, _, _ in PROCESS_FIGURES}
            continue
        total = {key: sum(c.get(key) or 0 for c in chains)
                 for key, _, unit in PROCESS_FIGURES if unit != "ratio"}
        allocs = total.get("allocs") or 0
        total["fast_path_hit_rate"] = (sum((c.get("fast_path_hit_rate") or 0) * (c.get("allocs") or 0)
                                           for c in chains) / allocs if allocs else 1.0)
        requested = total.get("requested_total") or 0
        total["fragmentation"] = (total.get("allocated_total") or 0) / requested if requested else 1.0
        out[name] = total
    return out


def compare_alloc_stats(a: Dict, b: Dict) -> Dict:
    """Run `a` against run `b`: each total figure, its difference and ratio; then the same
    per chain, chains matched by name (a chain in one run only has the other side None)."""
    ca, cb = chains_by_name(a), chains_by_name(b)
    names = list(ca) + [n for n in cb if n not in ca]
    chains = [{"chain": n, "in": "both" if n in ca and n in cb else ("a" if n in ca else "b"),
               "rows": _rows(ca.get(n), cb.get(n))} for n in names]
    return {"format": "heapscope-alloc-stats-compare", "version": 2, "a": a["file"], "b": b["file"],
            "processes": [len(a["processes"]), len(b["processes"])],
            "rows": _rows(a["totals"], b["totals"]), "chains": chains}

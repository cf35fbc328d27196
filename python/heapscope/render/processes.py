"""The process header every text report starts with, from analysis.processes.describe()."""
import shlex
from typing import List, Sequence

from heapscope.render.text import counted, shorten

MAX_WARNINGS = 10   # in a text header; a 1000-rank job must not print 1000 lines first


def label(d: dict) -> str:
    who = f"rank {d['rank']} pid {d['pid']}" if d["rank"] is not None else f"pid {d['pid']}"
    return f"{who} on {d['host']}" if d["host"] else who


def header_lines(processes: Sequence[dict], merged: bool) -> List[str]:
    """Text header: the process (or a summary of several), command, snapshot, warnings."""
    lines = []
    if len(processes) == 1:
        d = processes[0]
        lines.append(f"process   {label(d)} (parent {d['ppid']}), {counted(d['threads'], 'thread')}"
                     + (f", job {d['job_id']}" if d["job_id"] else ""))
        lines.append(f"command   {shlex.join(d['cmdline']) if d['cmdline'] else d['exe']}")
        ending = d.get("ending")
        end = d.get("process_end")
        how = ending["text"] if ending else end["text"] if end and end["text"] else ""
        lines.append(f"snapshot  {d['snapshot']} ({d['reason']}" + (f"; {how}" if how else "") + ")")
    else:
        how = "merged" if merged else "shown one by one"
        lines.append(f"processes {len(processes)} ({how}): "
                     + shorten([label(d) for d in processes]))
        commands = []
        for d in processes:
            c = shlex.join(d["cmdline"]) if d["cmdline"] else d["exe"]
            if c not in commands:
                commands.append(c)
        lines.append("commands  " + " | ".join(commands[:3])
                     + (f" | ... ({len(commands) - 3} more)" if len(commands) > 3 else ""))
        reasons = sorted({d["reason"] for d in processes})
        lines.append(f"snapshots {', '.join(reasons)}")
        for d in processes:
            if d.get("ending"):
                lines.append(f"ended     {label(d)}: {d['ending']['text']}")
    warnings = [("" if len(processes) == 1 else f"{label(d)}: ") + w
                for d in processes for w in d["warnings"]]
    for w in warnings[:MAX_WARNINGS]:
        lines.append(f"warning   {w}")
    if len(warnings) > MAX_WARNINGS:
        lines.append(f"warning   ... and {len(warnings) - MAX_WARNINGS} more (all are in --format json)")
    return lines

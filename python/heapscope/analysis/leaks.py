"""The `heapscope leaks` document: blocks not freed when the snapshot was taken.

Per stack trace type (several processes merged by symbolized frames): blocks and
bytes still live at the snapshot (at exit for a normal run). Each leaking type is
either reported or suppressed by the first matching rule of the suppression file
(analysis.suppressions, LeakSanitizer semantics). Reported types come first, most
bytes first; `suppressions` says what every rule suppressed, as LeakSanitizer's
"Suppressions used" table does. A type whose stack was not recorded has no frame to
match, so it is always reported.
"""
from typing import List, Optional, Sequence

from heapscope.analysis.suppressions import Suppression, first_match
from heapscope.analysis.tracked import TrackedEntry, frames_json

LEAKS_FORMAT, VERSION = "heapscope-leaks", 1


def build_leaks(entries: List[TrackedEntry], rules: Sequence[Suppression],
                suppressions_file: Optional[str] = None, top: int = 0, depth: int = 0) -> dict:
    leaking = sorted((e for e in entries if e.life.live_at_end),
                     key=lambda e: (-e.life.live_at_end_bytes, -e.life.live_at_end, e.size, e.region, e.key))
    reported, suppressed = [], []
    used = {r.line: [0, 0, 0] for r in rules}
    for e in leaking:
        rule = first_match(rules, e.frames) if e.frames else None
        if rule is None:
            reported.append(e)
        else:
            suppressed.append((e, rule))
            acc = used[rule.line]
            acc[0] += 1
            acc[1] += e.life.live_at_end
            acc[2] += e.life.live_at_end_bytes

    def row(rank, e, rule):
        return dict(rank=rank, size=e.size, region=e.region, blocks=e.life.live_at_end,
                    bytes=e.life.live_at_end_bytes, allocs=e.life.allocs,
                    suppressed_by=rule.pattern if rule else None, recorded=bool(e.frames), no_stack=e.no_stack,
                    estimated=e.estimated,
                    frames_total=len(e.frames), frames=frames_json(e.frames, depth))

    shown = reported[:top] if top else reported
    rep_blocks = sum(e.life.live_at_end for e in reported)
    rep_bytes = sum(e.life.live_at_end_bytes for e in reported)
    sup_blocks = sum(e.life.live_at_end for e, _ in suppressed)
    sup_bytes = sum(e.life.live_at_end_bytes for e, _ in suppressed)
    return dict(
        format=LEAKS_FORMAT, version=VERSION,
        totals=dict(blocks=rep_blocks + sup_blocks, bytes=rep_bytes + sup_bytes,
                    reported_types=len(reported), reported_blocks=rep_blocks, reported_bytes=rep_bytes,
                    suppressed_types=len(suppressed), suppressed_blocks=sup_blocks,
                    suppressed_bytes=sup_bytes),
        suppressions=dict(file=suppressions_file,
                          rules=[dict(pattern=r.pattern, line=r.line, types=used[r.line][0],
                                      blocks=used[r.line][1], bytes=used[r.line][2]) for r in rules]),
        leaks=[row(i, e, None) for i, e in enumerate(shown, 1)],
        suppressed=[row(i, e, rule) for i, (e, rule) in enumerate(suppressed, 1)])

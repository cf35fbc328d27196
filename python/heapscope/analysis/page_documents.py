"""The documents one HTML report shows, made by the analyses the text reports use.

    docs = collect(["run/"])                 # one recording (a program, or an MPI job)
    docs = collect(["before/"], ["after/"])  # two: the diff too

Every figure the page shows comes from one of these documents, unchanged: `report`
(identify), `stacks` (the TYPES_KEPT stack trace types with the most allocations of
every recorded size and region, with each group's whole counts), `callgraphs` (one
CallGraph per size and region with the most allocations), `timeline` (heap, RSS, PSS
per process), `job` (an MPI job's ranks), `lifetimes`/`temporaries`/`peak`/`leaks`
(record --track), `access` (record --access) and `diff`. A document the profiles cannot give is replaced by
{"absent": "why, in plain words"}: the page says so instead of drawing an empty box.
"""
from typing import Dict, List, Optional, Sequence

from heapscope.analysis import job, stacks as stack_paths
from heapscope.analysis.callgraph import build_callgraph
from heapscope.analysis.job_loading import is_job, load_summaries, read_job
from heapscope.analysis.loading import weighted_stacks
from heapscope.analysis.processes import leave_out_launchers
from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError, NoSnapshotError
from heapscope.profile import load_profiles, profile_files
from heapscope.profile.model import Profile
from heapscope.analysis import identify, stack_types
from heapscope.analysis.timeline import document as timeline_document
from heapscope.symbolize import Symbolizer
from heapscope.symbolize.packages import application_libraries

CALLGRAPHS = 12        # size x region groups drawn as call graphs (most allocations first)
TYPES_KEPT = 2000      # stack trace types kept per size and region (the most allocations
                       # first; the group's counts stay whole): a page stays a few MB


def absent(why: str) -> dict:
    return dict(absent=why)


def collect(paths: Sequence[str], compare: Optional[Sequence[str]] = None,
            callgraphs: int = CALLGRAPHS, runs=None) -> Dict[str, object]:
    """The page's documents; runs: (runs of A, runs of B), paths each, when the diff is
    over several runs per side (the rest of the page shows `paths`)."""
    sym = Symbolizer()
    a_job = is_job(paths)
    job_file = read_job(paths) if a_job else None
    try:
        # a job reduced into its job file alone (record --per-rank none, the launcher not
        # recorded): the page is the job's; no size table, stacks or per-process timeline
        profiles = [] if a_job and not _any_profile(paths) else load_profiles(paths)
    except NoSnapshotError as exc:
        if not a_job:
            raise
        # a killed rank: the job document has its timeline; the size tables cover the others
        profiles = load_profiles([f for f in profile_files(paths) if f != exc.path])
    # (the rank files read once: the job's summaries from the profiles read above)
    job_doc = job.build(load_summaries(paths, job=job_file, loaded=profiles),
                        job=job_file) if a_job else None
    profiles, launchers_note = leave_out_launchers(profiles)   # mpirun, orted ...
    docs: Dict[str, object] = dict(
        inputs=[str(p) for p in paths], compare=[str(p) for p in compare] if compare else None,
        report=identify.build(profiles, hot=10))
    docs["stacks"], docs["callgraphs"] = _stacks(profiles, sym, callgraphs)
    docs["job"] = job_doc or absent("not an MPI job (no rank files): the timeline section "
                                    "shows each process")
    docs["timeline"] = _timeline(profiles)
    docs.update(_tracking(profiles, sym))
    docs["access"] = _access(profiles, sym, read_job(paths) if job_doc is not None else None)
    docs["diff"] = _diff(profiles, compare, sym, runs) if compare else absent(
        "one recording given: give two (before, after) to compare them")
    docs["notes"] = list(sym.notes)
    docs["left_out"] = launchers_note
    return docs


def _any_profile(paths: Sequence[str]) -> bool:
    try:
        return bool(profile_files(paths))
    except HeapscopeError:
        return False


def recorded_sizes(profiles: Sequence[Profile]) -> SizeSet:
    """The sizes whose stacks the profiles recorded (record --sizes), as one selection."""
    specs = {(p.settings.get("stack_sizes") or "").strip() for p in profiles} - {""}
    if not specs or "all" in specs:
        return SizeSet(None)
    return SizeSet(",".join(sorted(specs)))


def _stacks(profiles: Sequence[Profile], sym: Symbolizer, limit: int):
    everything = recorded_sizes(profiles)
    try:
        stacks = weighted_stacks(profiles, everything, None, symbolizer=sym)
        doc = stack_types.build(profiles, everything, top=TYPES_KEPT, symbolizer=sym,
                                stacks=stacks)
    except HeapscopeError as exc:
        return absent(str(exc)), []
    if not doc["groups"]:
        return absent("no stack trace type was recorded: " + _no_stacks(profiles)), []
    ranked = sorted(doc["groups"], key=lambda g: (-g["count"], g["size"], g["region"]))[:limit]
    wanted = {(g["size"], g["region"]) for g in ranked}
    grouped: Dict[tuple, List[stack_paths.WeightedStack]] = {}
    for s in stacks:
        if (s.size, s.region) in wanted:
            grouped.setdefault((s.size, s.region), []).append(s)
    main_exe = profiles[0].exe if len({p.exe for p in profiles}) == 1 else ""
    graphs = [dict(size=g["size"], region=g["region"],
                   graph=build_callgraph(grouped[(g["size"], g["region"])],
                                         main_executable=main_exe,
                                         packaged_with=application_libraries))
              for g in ranked if grouped.get((g["size"], g["region"]))]
    return doc, graphs


def _no_stacks(profiles: Sequence[Profile]) -> str:
    from heapscope.analysis.recorded import no_stacks_reason
    return no_stacks_reason(profiles, SizeSet(None), None)


def _timeline(profiles: Sequence[Profile]) -> dict:
    having = [p for p in profiles if p.timeline is not None and p.timeline.samples]
    if not having:
        return absent("no timeline samples: recorded with the timeline off "
                      "(--timeline-interval 0)")
    having.sort(key=lambda p: (p.rank, p.start_real_ns, p.pid))
    return timeline_document(having)


def _tracking(profiles: Sequence[Profile], sym: Symbolizer) -> dict:
    """lifetimes, temporaries, peak and leaks of the tracked profiles (record --track)."""
    from heapscope.analysis.leaks import build_leaks
    from heapscope.analysis.lifetimes import build_lifetimes, build_temporaries
    from heapscope.analysis.peak import build_peak, document as peak_document
    from heapscope.analysis.tracked import merge_entries, profile_entries, tracking_settings

    tracked = [p for p in profiles if p.tracking is not None]
    if not tracked:
        why = absent("not recorded with tracking: record with `heapscope record --track` for "
                     "lifetimes, temporaries, the peak's holders and leaks")
        return dict(lifetimes=why, temporaries=why, peak=why, leaks=why, tracking=why)
    everything = SizeSet(None)
    # each process's entries (its peak's holders), then merged: symbolized once
    per_process = [profile_entries(p, everything, None, sym) for p in tracked]
    entries = merge_entries(per_process)
    peaks = [build_peak(i, p, every, every, top=20)
             for i, (p, every) in enumerate(zip(tracked, per_process))]
    return dict(lifetimes=build_lifetimes(tracked, entries, top=20),
                temporaries=build_temporaries(tracked, entries, top=20),
                peak=peak_document(peaks),
                leaks=build_leaks(entries, [], None, top=20),
                tracking=tracking_settings(tracked))


def _access(profiles: Sequence[Profile], sym: Symbolizer, job_file) -> dict:
    """The `heapscope access` document (record --access): every call path, the job file's
    figures when there is one."""
    from heapscope.analysis import access
    if not any(p.access is not None for p in profiles) and not (job_file and job_file.access):
        return absent("not recorded with --access: record with `heapscope record --access` for "
                      "the memory allocated and not used, per call path")
    return access.build(profiles, top=0, symbolizer=sym, job=job_file)


def _diff(before: Sequence[Profile], after_paths: Sequence[str], sym: Symbolizer,
          runs=None) -> dict:
    """The document of `heapscope diff A B --stacks` (analysis.diff), every size and region;
    without stack trace types on either side, the document without them. runs: several
    runs per side (paths), compared as `diff --before ... --after ...` does."""
    from heapscope.analysis import diff
    if runs is not None and (len(runs[0]) > 1 or len(runs[1]) > 1):
        def run(path):
            return leave_out_launchers(load_profiles([path]))[0]
        runs_a = [before] + [run(r) for r in runs[0][1:]]
        runs_b = [run(r) for r in runs[1]]
    else:
        runs_a, runs_b = [before], [load_profiles(after_paths)]
    try:
        result = diff.compare_runs(runs_a, runs_b, SizeSet(None), None, stacks=True, symbolizer=sym)
    except HeapscopeError:        # neither side recorded stacks
        result = diff.compare_runs(runs_a, runs_b, SizeSet(None), None)
    return dict(diff.document(result, "A", "B", None, None, "count", None),
                processes=list(result["processes"]), warnings=result["warnings"])

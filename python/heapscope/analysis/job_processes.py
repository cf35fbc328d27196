"""Which rank a job's files stand for, and what the other files of the job are.

A job's directory holds more than one file per rank process:
  pre-exec    a launcher's fork before it exec'd a rank (Open MPI's orted, or mpirun
              itself on its own node, forks, sets the rank's environment and execs):
              the recorder opens a file for every fork, with the launcher's name and no
              rank, and writes its "exec" snapshot just before the exec. The exec'd
              process keeps the pid, so the two files have the same host and pid, the
              pre-exec one started first and ended with reason "exec".
  launcher    the parent of ranks (mpirun/orted, when recorded).
  rank-child  a process forked by a rank (same rank in its name: it inherits the rank's
              environment), or one with no rank whose parent is a rank.
  rank-extra  another root process of a rank (two files with one rank, neither the
              other's child nor its pre-exec image).
  other       anything else.
"""
from typing import Dict, List, Sequence, Tuple

ROLES = ("pre-exec", "launcher", "rank-child", "rank-extra", "other")


def _exec_successor(s, by_host_pid: Dict[Tuple[str, int], list]):
    """The process `s` became by exec (same host and pid, started after it), or None. A
    rank known only from the job file has no start time of its own (its row carries the
    job file's, rank 0's recorder start, which can precede a later rank's fork): it is
    a successor whenever host and pid match."""
    if s.reason != "exec":
        return None
    later = [t for t in by_host_pid.get((s.host, s.pid), ())
             if t is not s and (t.start_real_ns >= s.start_real_ns or _from_job_file(t))]
    return min(later, key=lambda t: t.start_real_ns) if later else None


def _from_job_file(s) -> bool:
    return str(s.path).endswith(".job.hsj")


def choose_rank_process(group: Sequence, by_host_pid) -> Tuple[object, List[object]]:
    """The process that is the rank among `group` (files with one rank number): not a
    pre-exec image nor a child of another in the group; of those, the one with a
    snapshot, then with timeline samples, then the most allocations, then the lowest pid."""
    pids = {(s.host, s.pid) for s in group}
    roots = [s for s in group
             if (s.host, s.ppid) not in pids and _exec_successor(s, by_host_pid) not in group]
    roots = roots or list(group)

    def key(s):
        blocks = s.metrics.get("alloc_blocks")
        return (not s.has_snapshot, s.timeline is None,
                -(blocks if blocks is not None else -1), s.pid)
    chosen = min(roots, key=key)
    return chosen, [s for s in group if s is not chosen]


def describe_others(ranks: Sequence, others: Sequence, everyone: Sequence) -> List[dict]:
    """The JSON objects of the processes that are not ranks, with their role:
    `role` (ROLES), `of_rank` (the rank it belongs to, or None), `of_pid` (the
    process a pre-exec image became, the parent rank's pid, or None)."""
    if not others:
        return []
    by_host_pid: Dict[Tuple[str, int], list] = {}
    for s in everyone:
        by_host_pid.setdefault((s.host, s.pid), []).append(s)
    rank_by_pid = {(r.host, r.pid): r for r in ranks}
    parents = {(r.host, r.ppid) for r in ranks}
    out = []
    for s in others:
        role, of_rank, of_pid = "other", None, None
        became = _exec_successor(s, by_host_pid)
        if became is not None:
            role, of_pid = "pre-exec", became.pid
            of_rank = became.rank if became.rank >= 0 else None
        elif (s.host, s.ppid) in rank_by_pid:
            parent = rank_by_pid[(s.host, s.ppid)]
            role, of_rank, of_pid = "rank-child", parent.rank, parent.pid
        elif s.rank >= 0:
            role, of_rank = "rank-extra", s.rank
        elif (s.host, s.pid) in parents:
            role = "launcher"
        out.append(dict(pid=s.pid, ppid=s.ppid, rank=s.rank if s.rank >= 0 else None, host=s.host, exe=s.exe,
                        file=s.path, reason=s.reason, role=role, of_rank=of_rank,
                        of_pid=of_pid))
    return out

"""A profile's process as the documents carry it: who ran, where, which snapshot."""
from heapscope.profile.model import Profile


def describe(p: Profile) -> dict:
    """A profile's process, as the JSON documents carry it."""
    return dict(file=p.path, pid=p.pid, ppid=p.ppid, rank=p.rank if p.rank >= 0 else None,
                host=p.host, exe=p.exe,
                cmdline=list(p.cmdline), job_id=p.job_id, snapshot=p.snapshot_seq,
                reason=p.snapshot_reason, complete=p.complete, threads=p.total_threads,
                lost_stacks=p.lost_stacks, settings=dict(p.settings), warnings=list(p.warnings))

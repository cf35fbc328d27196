"""The job report's other processes, from known process trees (profiles built in memory):
the launcher's pre-exec forks (same pid as the rank they exec'd, reason "exec") are
told apart from the launcher, a rank's children and unrelated processes; which
process of several with one rank number is the rank; a rank without a snapshot."""
from heapscope.analysis import job
from heapscope.profile.model import Profile, Sample, Timeline
from heapscope.render import job_text as render_job

S = 1_700_000_000_000_000_000


def proc(pid, ppid, rank=-1, exe="/apps/sim", reason="exit", start=S, blocks=1, host="n0",
         samples=None, snapshot=True):
    p = Profile(path=f"{pid}.hsp", pid=pid, ppid=ppid, rank=rank, host=host, exe=exe,
                job_id="7" if rank >= 0 else "", start_real_ns=start, snapshot_reason=reason,
                size_counts={("(none)", 64): blocks} if snapshot else {})
    if samples:
        p.timeline = Timeline(interval_ns=10**8, samples=[
            Sample(t, "periodic", "(none)", "", heap, 0, rss, -1) for t, heap, rss in samples])
    return job.summarize(p, has_snapshot=snapshot)


def tree():
    return [
        proc(100, 1, exe="/usr/bin/orterun", start=S + 10),             # launcher (mpirun)
        proc(100, 1, exe="/bin/bash", reason="exec", start=S),           # the script that exec'd it
        proc(101, 100, exe="/usr/bin/orterun", reason="exec", start=S + 20),   # fork -> rank 0
        proc(102, 100, exe="/usr/bin/orterun", reason="exec", start=S + 21),   # fork -> rank 1
        proc(101, 100, rank=0, start=S + 30, blocks=500),
        proc(102, 100, rank=1, start=S + 31, blocks=400),
        proc(103, 102, rank=1, exe="/bin/sh", start=S + 40, blocks=9000),  # rank 1's child
        proc(104, 100, rank=0, start=S + 32, blocks=20),                 # a second rank-0 process
        proc(200, 1, exe="/usr/bin/true", start=S + 50),                 # unrelated
    ]


def test_roles_of_the_other_processes():
    doc = job.build(tree())
    assert [(r["rank"], r["pid"]) for r in doc["per_rank"]] == [(0, 101), (1, 102)]
    roles = sorted((o["pid"], o["exe"].rsplit("/", 1)[-1], o["role"], o["of_rank"], o["of_pid"])
                   for o in doc["others"])
    assert roles == [
        (100, "bash", "pre-exec", None, 100),
        (100, "orterun", "launcher", None, None),
        (101, "orterun", "pre-exec", 0, 101),
        (102, "orterun", "pre-exec", 1, 102),
        (103, "sh", "rank-child", 1, 102),        # more allocations than its parent: not the rank
        (104, "sim", "rank-extra", 0, None),
        (200, "true", "other", None, None),
    ]
    assert all(o["reason"] == "exec" for o in doc["others"] if o["role"] == "pre-exec")


def test_text_keeps_pre_exec_images_out_of_the_other_processes():
    lines = render_job.render(job.build(tree())).splitlines()
    other = next(l for l in lines if l.startswith("  other"))
    assert other.startswith("  other     4 processes that are not a rank, left out: ")
    assert "orterun pid 100 (launcher)" in other and "sh pid 103 (child of rank 1)" in other
    assert "sim pid 104 (rank 0, another process)" in other
    assert "pid 101" not in other and "pid 102" not in other and "bash" not in other
    pre = next(l for l in lines if l.startswith("  pre-exec"))
    assert pre == ("  pre-exec  3 files of bash/orterun written before they exec'd ranks 0, 1 "
                   "and pid 100 (the same processes before exec), left out")


def test_a_job_recorded_without_its_launcher_has_no_others():
    doc = job.build([proc(11, 5, rank=0), proc(12, 5, rank=1)])
    assert doc["others"] == []
    text = render_job.render(doc)
    assert "  other " not in text and "  pre-exec" not in text


def test_the_rank_without_a_snapshot_is_still_the_rank():
    """Rank 1 was SIGKILLed (timeline only); its child exited with a snapshot."""
    ranks = [proc(11, 5, rank=0, samples=[(0, 100, 1000)]),
             proc(12, 5, rank=1, snapshot=False, reason="", samples=[(0, 300, 5000)]),
             proc(13, 12, rank=1, exe="/bin/sh", blocks=50)]
    doc = job.build(ranks)
    assert [(r["rank"], r["pid"], r["reason"], r["has_snapshot"]) for r in doc["per_rank"]] == \
        [(0, 11, "exit", True), (1, 12, "none", False)]
    assert [(o["pid"], o["role"]) for o in doc["others"]] == [(13, "rank-child")]
    assert doc["per_rank"][1]["alloc_blocks"] is None and doc["per_rank"][1]["heap_peak"] == 300
    assert doc["stats"]["alloc_blocks"]["ranks"] == 1 and doc["stats"]["heap_peak"]["ranks"] == 2

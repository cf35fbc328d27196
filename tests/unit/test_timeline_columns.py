"""The figures the HTML timeline shows beyond the `timeline` document: a long process
reduced to bins of their largest value (no peak lost, -1 = not measured kept apart),
and a job's min/max envelope over the ranks (analysis.timeline)."""
from heapscope.analysis.timeline import rank_envelopes, sampled_columns


def proc(values, rss=None):
    rss = rss or [-1] * len(values)
    # out of order on purpose: the columns are by time
    samples = [dict(mono_ns=i * 1_000_000, heap_bytes=v, heap_mpi_bytes=0, rss_bytes=r,
                    pss_bytes=-1) for i, (v, r) in enumerate(zip(values, rss))]
    return dict(samples=samples[1::2] + samples[0::2])


def test_short_process_is_kept_sample_by_sample():
    seconds, cols, reduced = sampled_columns(proc([5, 7, 3]), max_points=10)
    assert not reduced and seconds == [0.0, 0.001, 0.002]
    assert cols["heap_bytes"].tolist() == [5, 7, 3] and cols["rss_bytes"].tolist() == [-1, -1, -1]


def test_long_process_keeps_its_peak_in_fewer_points():
    values = [10] * 1000
    values[637] = 99_999
    rss = [-1] * 1000
    rss[10] = 4096
    seconds, cols, reduced = sampled_columns(proc(values, rss), max_points=50)
    assert reduced and len(seconds) == 50 and seconds[0] == 0.0
    heap = cols["heap_bytes"].tolist()
    assert max(heap) == 99_999 and heap.count(99_999) == 1 and min(heap) == 10
    assert cols["rss_bytes"].max() == 4096            # one readable sample among -1s
    assert cols["pss_bytes"].tolist() == [-1] * 50    # never measured stays "not measured"


def test_rank_envelopes_are_the_lowest_and_highest_rank_per_bin():
    tl = dict(per_rank=[dict(app=[1, 5, 2], mpi=None, rss=[3, 3, 3], pss=None),
                        dict(app=[4, 0, 6], mpi=None, rss=[1, 9, 2], pss=None)])
    env = rank_envelopes(tl)
    assert env["app"] == dict(min=[1, 0, 2], max=[4, 5, 6])
    assert env["rss"] == dict(min=[1, 3, 2], max=[3, 9, 3])
    assert env["mpi"] is None and env["pss"] is None

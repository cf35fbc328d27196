"""The Python API (heapscope.open, heapscope/api.py) on a program with known
allocations (tests/programs/trk_lifetimes.c): its tables as pandas DataFrames, and
as lists of dicts when pandas is missing (simulated: the import fails); the same
figures the reports print, for a file, a directory and an event trace; the columns
named as the JSON outputs name them, and what the JSON says is null (rank outside
MPI, a figure not measured) None, <NA> in a DataFrame."""
import json
import sys

import pytest

import heapscope
from heapscope import api
from heapscope.errors import HeapscopeError


@pytest.fixture(scope="module")
def recorded(heapscope, build, tmp_path_factory):
    exe = build("trk_lifetimes.c", "-pthread")
    out = tmp_path_factory.mktemp("api")
    heapscope("record", "-o", out / "track", "--track", "--sizes", "200", "--", exe)
    heapscope("record", "-o", out / "trace", "--trace", "--sizes", "200", "--no-symbolize", "--", exe)
    heapscope("record", "-o", out / "counts", "--", exe)       # heap in use not measured
    return out


@pytest.fixture
def no_pandas(monkeypatch):
    """`import pandas` fails, as where it is not installed."""
    monkeypatch.setitem(sys.modules, "pandas", None)


def by(rows, *keys):
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in rows}


def test_without_pandas_tables_are_lists_of_dicts(recorded, no_pandas):
    assert api.pandas_module() is None
    rec = heapscope.open(recorded / "track")           # a directory
    [proc] = rec.processes()
    assert proc["tracking"] == "track" and proc["reason"] == "exit" and proc["rank"] is None
    sizes = by(rec.sizes(), "size")
    assert (sizes[48]["count"], sizes[48]["bytes"]) == (100, 4800)
    assert (sizes[4000]["count"], sizes[200]["count"], sizes[21]["count"]) == (2, 3, 1)
    assert list(sizes[48]) == list(api.SIZE_COLUMNS)
    assert all(r["rank"] is None for r in rec.sizes())   # not an MPI process: null, not -1
    [region] = rec.regions()
    assert region["region"] == "(none)" and region["rank"] is None
    assert region["count"] == sum(r["count"] for r in rec.sizes())
    [stack] = rec.stacks(size="200")
    assert (stack["count"], stack["bytes"], stack["function"]) == (3, 600, "leak_three")
    assert stack["file"].endswith("trk_lifetimes.c") and stack["line"] > 0
    assert stack["frames"][0].startswith("leak_three @ ")
    life = by(rec.lifetimes(), "size")
    assert (life[48]["allocs"], life[48]["frees"], life[48]["temporaries"]) == (100, 100, 100)
    assert (life[200]["live_at_end"], life[200]["live_at_end_bytes"], life[200]["function"]) == \
        (3, 600, "leak_three")
    assert (life[4000]["live_at_peak"], life[4000]["live_at_peak_bytes"]) == (2, 8000)
    assert rec.peak()["peaks"][0]["peak_bytes"] == 8000
    assert rec.leaks(size="200")["totals"]["bytes"] == 600
    assert rec.tracking()["untracked"] == 0
    samples = rec.timeline()
    assert samples and samples[-1]["kind"] == "final"
    assert all(r["rank"] is None for r in samples)
    assert samples[-1]["heap_bytes"] == rec.leaks()["totals"]["bytes"]   # live at the end
    assert samples[-1]["rss_bytes"] > 0 and samples[-1]["time_s"] == samples[-1]["mono_ns"] / 1e9
    counted = heapscope.open(recorded / "counts").timeline()
    assert counted and all(r["heap_bytes"] is None for r in counted)      # not measured: None
    with pytest.raises(HeapscopeError, match="needs pandas"):
        rec.sizes(as_frame=True)


def test_with_pandas_tables_are_dataframes(recorded):
    import pandas as pd      # a test dependency (pyproject's test extra): missing, this fails
    [path] = (recorded / "track").glob("*.hsp")
    rec = heapscope.open(path)                         # a file
    sizes = rec.sizes()
    assert isinstance(sizes, pd.DataFrame) and list(sizes.columns) == list(api.SIZE_COLUMNS)
    assert int(sizes.set_index("size").loc[48, "count"]) == 100
    assert int(sizes["count"].sum()) == rec.regions()["count"].sum()
    life = rec.lifetimes().set_index("size")
    assert int(life.loc[1000, "frees"]) == 5 and int(life.loc[200, "live_at_end_bytes"]) == 600
    stacks = rec.stacks(size="200")
    assert stacks.loc[0, "function"] == "leak_three"
    timeline = rec.timeline()
    assert (timeline["time_s"].diff().dropna() >= 0).all()
    assert isinstance(rec.sizes(as_frame=False), list)
    # rank outside MPI and heap not measured: pandas' <NA> in an integer column, not -1
    assert str(sizes["rank"].dtype) == "Int64" and sizes["rank"].isna().all()
    counted = heapscope.open(recorded / "counts").timeline()
    assert str(counted["heap_bytes"].dtype) == "Int64" and counted["heap_bytes"].isna().all()
    assert str(counted["rss_bytes"].dtype) == "int64" and (counted["rss_bytes"] > 0).all()


def test_columns_are_named_as_the_json_outputs_name_them(recorded, heapscope, no_pandas):
    path = recorded / "track"
    rec = api.open(path)        # (heapscope here is the command-line fixture)
    report = json.loads(heapscope("report", path, "--format", "json").stdout)
    [proc] = rec.processes()
    described = report["processes"][0]
    assert {k: proc[k] for k in api.PROCESS_FIELDS} == {k: described[k] for k in api.PROCESS_FIELDS}
    stacks = json.loads(heapscope("stacks", path, "--size", "200", "--format", "json").stdout)
    group = stacks["groups"][0]
    kind, frame = group["stack_types"][0], group["stack_types"][0]["frames"][0]
    [row] = rec.stacks(size="200")
    for column in api.STACK_COLUMNS:       # each a field of the group, the type or a frame
        assert column in group or column in kind or column in frame, column
    assert (row["function"], row["file"], row["line"]) == (frame["function"], frame["file"], frame["line"])
    timeline = json.loads(heapscope("timeline", path, "--format", "json").stdout)
    sample = timeline["processes"][0]["samples"][-1]
    last = rec.timeline()[-1]
    assert {k: last[k] for k in sample} == sample      # heap_bytes None in both
    regions = {r["region"]: r for r in rec.regions()}
    assert {r: (v["count"], v["bytes"]) for r, v in report["totals"].items()} == \
        {r: (v["count"], v["bytes"]) for r, v in regions.items()}
    assert regions["(none)"]["distinct_sizes"] == report["distinct_sizes"]


def test_trace_profiles_give_the_same_figures(recorded, no_pandas):
    """An event trace (replayed when the lifetimes are asked for) gives the lifetimes a
    tracking run gives; its counts never need the replay."""
    traced, tracked = heapscope.open(recorded / "trace"), heapscope.open(recorded / "track")
    assert traced.profiles[0].tracking_deferred
    assert traced.sizes() and traced.profiles[0].tracking_deferred
    keep = ("size", "allocs", "frees", "temporaries", "live_at_peak", "live_at_end_bytes")
    pick = lambda rows: sorted(tuple(r[k] for k in keep) for r in rows)   # noqa: E731
    assert pick(traced.lifetimes()) == pick(tracked.lifetimes())
    assert traced.processes()[0]["tracking"] == "trace"


def test_bad_paths_and_selections_are_one_line_errors(recorded, tmp_path):
    with pytest.raises(HeapscopeError, match="no such file"):
        heapscope.open(tmp_path / "missing.hsp")
    rec = heapscope.open([recorded / "track"])         # a list of paths
    with pytest.raises(HeapscopeError, match="region"):
        rec.sizes(region="nowhere")
    assert rec.stacks(size="48", as_frame=False) == []   # no stack recorded for 48 B: empty
    with pytest.raises(HeapscopeError, match="bad size"):
        rec.sizes(size="twelve")

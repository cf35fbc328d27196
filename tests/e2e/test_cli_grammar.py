"""The grammar the timeline, tracking and bench commands share (commands/options.py):
`--format json -o FILE` writes what stdout would show, `--top` is 20 unless given, the
old spellings (`timeline --json`, `bench --json FILE`) still work with a note on
stderr, `record --size/--region` are `--sizes/--regions`, and every duration option
speaks one grammar with one error wording."""
import json

import pytest

MIB = 1024 * 1024

# (command and its options after the profile directory)
TRACKING = ["lifetimes", "temporaries", "peak", "leaks"]
RESULT_COMMANDS = [["timeline"]] + [[c] for c in TRACKING]


@pytest.fixture(scope="module")
def recorded(build, heapscope, tmp_path_factory):
    """tl_regions (10 x 1 MiB held in region "hold") with tracking and a timeline."""
    d = tmp_path_factory.mktemp("grammar")
    heapscope("record", "--track", "--sizes", "all", "--timeline-interval", "20ms",
              "--timeline-heap", "on", "-o", d, "--", build("tl_regions.c", "-DHEAPSCOPE_WEAK"), 20)
    return d


@pytest.mark.parametrize("command", RESULT_COMMANDS, ids=lambda c: c[0])
def test_json_to_a_file_is_what_stdout_shows(recorded, heapscope, tmp_path, command):
    shown = heapscope(*command, recorded, "--format", "json")
    out = tmp_path / "result.json"
    written = heapscope(*command, recorded, "--format", "json", "-o", out)
    assert written.stdout == ""
    assert json.loads(out.read_text()) == json.loads(shown.stdout)
    assert out.read_text() == shown.stdout


@pytest.mark.parametrize("command", TRACKING)
def test_top_is_twenty_unless_given(recorded, heapscope, command):
    doc = json.loads(heapscope(command, recorded, "--format", "json").stdout)
    assert doc["filters"]["top"] == 20
    doc = json.loads(heapscope(command, recorded, "--format", "json", "--top", "0").stdout)
    assert doc["filters"]["top"] == 0
    res = heapscope(command, recorded, "--top", "-1", check=False)
    assert res.returncode == 2 and "--top must not be negative (got '-1')" in res.stderr


def test_timeline_json_flag_is_format_json_with_a_note(recorded, heapscope):
    old = heapscope("timeline", recorded, "--json")
    new = heapscope("timeline", recorded, "--format", "json")
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert "--json is deprecated" in old.stderr and "use --format json" in old.stderr
    assert "deprecated" not in new.stderr


def test_timeline_plot_goes_only_where_asked(recorded, heapscope, tmp_path):
    heapscope("timeline", recorded, "--format", "json", "-o", tmp_path / "t.json", cwd=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    heapscope("timeline", recorded, "--plot", tmp_path / "t.svg", cwd=tmp_path)
    assert (tmp_path / "t.svg").read_bytes()[:200].find(b"<svg") >= 0


BENCH = ["bench", "--allocators", "glibc", "-n", "1", "--warmup", "0", "--no-progress"]


def _shape(doc):
    """The bench document without its measured numbers (two runs never time the same). A
    ratio and its interval are null when the baseline measured 0 (`sh -c echo` often takes
    0 ms of user CPU), a number otherwise: both are "a measurement" here."""
    if isinstance(doc, dict):
        if set(doc) == {"value", "ci"}:
            return "ratio"
        return {k: _shape(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_shape(v) for v in doc]
    return type(doc).__name__ if isinstance(doc, (int, float)) and not isinstance(doc, bool) else doc


def test_bench_format_json_to_a_file(heapscope, tmp_path):
    cmd = ["--", "sh", "-c", "echo checksum: 5"]
    shown = json.loads(heapscope(*BENCH, "--format", "json", *cmd).stdout)
    out = tmp_path / "b.json"
    res = heapscope(*BENCH, "--format", "json", "-o", out, *cmd)
    assert res.stdout == ""
    written = json.loads(out.read_text())
    assert _shape(written) == _shape(shown)
    assert written["commands"][0]["checksum"] == "5" and len(written["commands"][0]["configs"][0]["runs"]) == 1
    rows = heapscope(*BENCH, "--format", "csv", *cmd).stdout.splitlines()
    assert rows[0].startswith("command,config,run,wall_s") and len(rows) == 2


def test_bench_json_file_still_works_with_a_note(heapscope, tmp_path):
    out = tmp_path / "old.json"
    res = heapscope(*BENCH, "--json", out, "--", "true")
    assert "bench --json FILE is deprecated" in res.stderr and "--format json -o FILE" in res.stderr
    assert "x glibc" in res.stdout                    # the tables still on stdout, as before
    assert json.loads(out.read_text())["settings"]["runs"] == 1


def test_record_size_and_region_are_the_plural_options(build, heapscope, tmp_path):
    exe = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    docs = []
    for size, region in (("--size", "--region"), ("--sizes", "--regions")):
        d = tmp_path / size.strip("-")
        heapscope("record", "--track", size, str(MIB), region, "hold", "--timeline-interval", "0",
                  "-o", d, "--", exe, 1)
        doc = json.loads(heapscope("lifetimes", d, "--size", str(MIB), "--format", "json").stdout)
        (s,) = doc["sizes"]
        (t,) = s["stack_types"]
        assert (s["allocs"], s["frees"], t["region"], t["recorded"]) == (10, 10, "hold", True)
        docs.append((s["allocs"], s["frees"], s["types"]))
    assert docs[0] == docs[1]


@pytest.mark.parametrize("args", [
    ["record", "--track", "--temporary-time", "fast", "--", "true"],
    ["record", "--timeline-interval", "fast", "--", "true"],
    ["bench", "--timeout", "fast", "--", "true"],
])
def test_one_duration_grammar_one_wording(heapscope, args):
    res = heapscope(*args, check=False)
    option = next(a for a in args if a in ("--temporary-time", "--timeline-interval", "--timeout"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1
    assert f"bad {option} 'fast': expected a number and a unit ns, us, ms, s or m" in lines[0]


def test_bench_timeout_takes_units(heapscope, tmp_path):
    out = tmp_path / "t.json"
    heapscope(*BENCH, "--timeout", "200ms", "--format", "json", "-o", out, "--", "sleep", "5",
              check=False)
    (config,) = json.loads(out.read_text())["commands"][0]["configs"]
    assert config["runs"] == [] and config["failure"]["timed_out"] is True

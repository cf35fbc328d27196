"""An empty --size, --sizes, --region or --regions is a one-line error (exit 2) in every
command that takes one, never "all sizes" or "every region": `--size "$SIZES"` with SIZES
unset must not silently report everything. The profile is tests/programs/diff_variant.c
recorded with --track and every stack, so each command has data to (wrongly) report; the
same commands with the option left out succeed and show it."""
import json

import pytest

from heapscope.analysis.selection import SizeSet, check_region
from heapscope.errors import HeapscopeError


@pytest.fixture(scope="module")
def prof(build, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("empty") / "prof"
    heapscope("record", "-o", out, "--track", "--sizes", "all", "--timeline-heap", "on", "--",
              build("diff_variant.c"))
    return out


# command line before the option; the option is appended with an empty value
COMMANDS = {
    "report": ["report", "{p}"],
    "report-library": ["report", "{p}", "--by", "library"],
    "report-rank": ["report", "{p}", "--by", "rank"],
    "stacks": ["stacks", "{p}", "--size", "12"],
    "callgraph": ["callgraph", "{p}", "--size", "12", "-o", "{t}/cg"],
    "diff": ["diff", "{p}", "{p}"],
    "diff-stacks": ["diff", "{p}", "{p}", "--stacks"],
    "export-collapsed": ["export", "{p}", "--format", "collapsed", "-o", "{t}/out"],
    "export-pprof": ["export", "{p}", "--format", "pprof", "-o", "{t}/out"],
    "export-massif": ["export", "{p}", "--format", "massif", "-o", "{t}/out"],
    "lifetimes": ["lifetimes", "{p}"],
    "temporaries": ["temporaries", "{p}"],
    "peak": ["peak", "{p}"],
    "leaks": ["leaks", "{p}"],
}
# what each command says instead of the generic message (the option does not apply there)
NOT_APPLICABLE = {"report-rank": "applies to --by size and --by library",
                  "export-massif": "do not apply to --format massif"}


def expand(args, prof, tmp_path):
    return [a.format(p=prof, t=tmp_path) for a in args]


def one_line(res):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("heapscope: error: "), res.stderr
    return lines[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_empty_size_and_region_are_errors(name, prof, heapscope, tmp_path):
    base = expand(COMMANDS[name], prof, tmp_path)
    if name not in NOT_APPLICABLE:
        ok = heapscope(*base)   # the same command without the option works on this profile
        assert ok.returncode == 0 and (ok.stdout or (tmp_path / "out").exists())
    for option, message in (("--size", "empty size spec ''"), ("--region", "empty region ''")):
        if option == "--size" and "--size" in base:   # stacks/callgraph: the required --size
            args = base[:base.index("--size")] + ["--size", ""] + base[base.index("--size") + 2:]
        else:
            args = base + [option, ""]
        line = one_line(heapscope(*args, check=False))
        assert NOT_APPLICABLE.get(name, message) in line, line
        if name not in NOT_APPLICABLE:
            assert line.endswith("(without --region: every region)" if option == "--region"
                                 else "give sizes and ranges like 12,24,100-200, or all")


@pytest.mark.parametrize("option,value,message", [
    ("--sizes", "", "bad --sizes ''"),
    ("--sizes", " ", "bad --sizes ''"),
    ("--regions", "", "bad --regions ''"),
    ("--regions", " ", "bad --regions ' '"),
    ("--regions", "local, ", "bad --regions 'local, '"),
    ("--regions", "split/ /x", "bad --regions 'split/ /x'"),
])
def test_record_rejects_empty_sizes_and_regions(option, value, message, build, heapscope, tmp_path):
    extra = ["--sizes", "12"] if option == "--regions" else []
    res = heapscope("record", "-o", tmp_path / "out", *extra, f"{option}={value}", "--",
                    build("diff_variant.c"), check=False)
    assert message in one_line(res)
    assert not (tmp_path / "out").exists()


def test_whitespace_only_is_empty_and_none_is_everything():
    for spec in ("", " ", "\t"):
        with pytest.raises(HeapscopeError, match="empty size spec"):
            SizeSet(spec)
        with pytest.raises(HeapscopeError, match="empty region"):
            check_region(["(none)", "build"], spec)
    assert 99999 in SizeSet(None) and 99999 in SizeSet("all") and 99999 not in SizeSet("12")
    check_region(["(none)", "build"], None)


def test_region_filter_still_selects(prof, heapscope):
    doc = json.loads(heapscope("report", prof, "--region", "build", "--format", "json").stdout)
    assert doc["regions"] == ["build"]
    assert {r["size"]: r["counts"]["build"] for r in doc["sizes"]} == {12: 300, 40: 100}

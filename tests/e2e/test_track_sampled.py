"""`record --track` alone gives the tracking reports call paths, by sampled stacks
(tests/programs/trk_sampled.c: figures known per path). Per-path figures are estimates,
marked; per-size figures stay exact; `--sample-bytes off` tracks without stacks, and then
the reports name the `record` line that gives the paths."""
import json

import pytest

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def program(build):
    return build("trk_sampled.c")


def record(heapscope, program, out, *options, seed=None):
    env = {"HEAPSCOPE_SAMPLE_SEED": str(seed)} if seed is not None else None
    heapscope("record", "-o", out, "--track", *options, "--", program, env=env)
    return out


def report(heapscope, name, path, *options):
    return json.loads(heapscope(name, path, "--format", "json", *options).stdout)


def function(t):
    return t["frames"][0]["function"] if t["recorded"] else None


@pytest.mark.parametrize("seed", SEEDS)
def test_track_alone_gives_call_paths(heapscope, program, tmp_path, seed):
    path = record(heapscope, program, tmp_path / "t", seed=seed)
    peak = report(heapscope, "peak", path)
    assert peak["sampling"]["mean_bytes"] == 64 * 1024
    (pk,) = peak["peaks"]
    top = pk["stack_types"][0]
    # 8 blocks of 1 MiB: nearly every one sampled, and the size has no other path
    assert (function(top), top["blocks"], top["bytes"], top["estimated"]) == \
        ("hold_mesh", 8, 8 << 20, True)
    assert [(s["size"], s["blocks"]) for s in pk["sizes"]] == [(1 << 20, 8), (4096, 10)]

    leaks = report(heapscope, "leaks", path)
    assert [(function(t), t["blocks"], t["estimated"]) for t in leaks["leaks"]] == \
        [("leak_table", 3, True)]

    temps = report(heapscope, "temporaries", path)
    # the size's figures are exact; the two paths of 4,096 bytes split them by their samples
    assert [(s["size"], s["temporaries"], s["allocs"]) for s in temps["sizes"]] == [(4096, 22000, 40000)]
    by_path = {function(t): t for t in temps["stack_types"]}
    assert by_path["scratch"]["estimated"] and by_path["batches"]["estimated"]
    assert by_path["scratch"]["temporaries"] == by_path["scratch"]["allocs"]   # every one
    assert by_path["scratch"]["allocs"] == pytest.approx(20000, rel=0.1)
    assert by_path["batches"]["allocs"] == pytest.approx(20000, rel=0.1)
    assert by_path["scratch"]["temporaries"] + by_path["batches"]["temporaries"] == 22000

    text = heapscope("peak", path).stdout
    assert "sampled   call paths from stacks sampled one a mean 65,536 bytes apart" in text
    assert "1. ~8,388,608 bytes (99.5% of the peak): ~8 blocks of size 1,048,576" in text
    assert "this size was tracked without its stacks" not in text


def test_without_sampling_the_reports_say_how_to_get_paths(heapscope, program, tmp_path):
    path = record(heapscope, program, tmp_path / "off", "--sample-bytes", "off")
    command = f"heapscope record --track --sizes 4096,1048576,2097152 -- {program}"
    for name in ("peak", "leaks", "temporaries", "lifetimes"):
        doc = report(heapscope, name, path)
        assert doc["sampling"] is None
        assert doc["record_for_stacks"] == command, name
        assert f"get theirs with: {command}" in heapscope(name, path).stdout
    # the line it names does give them
    exact = record(heapscope, program, tmp_path / "exact", "--sizes", "4096,1048576,2097152")
    doc = report(heapscope, "peak", exact)
    assert doc["record_for_stacks"] is None
    assert [function(t) for t in doc["peaks"][0]["stack_types"]] == ["hold_mesh", "batches"]
    assert not any(t["estimated"] for t in doc["peaks"][0]["stack_types"])


def test_sample_bytes_off_needs_track(heapscope, program, tmp_path):
    res = heapscope("record", "-o", tmp_path / "x", "--sample-bytes", "off", "--", program, check=False)
    assert res.returncode == 2
    assert "--sample-bytes off turns --track's sampled stacks off: give --track too" in res.stderr

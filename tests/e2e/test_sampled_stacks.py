"""Stacks by sampling (record --sample-bytes): the per-type estimates and their 95%
intervals against the exact counts of an all-sizes recording of the same
deterministic program (tests/programs/smp_types.c), counts left exact, every size and
region sampled, the option's errors."""
import json
import math

import pytest

from heapscope.profile import read_profile

SITES = 24


def exact_count(site: int) -> int:
    return 1000 + 900 * site                     # COUNT(k) in smp_types.c


def site_size(site: int) -> int:
    return 48 + 400 * (site // 4)                # SIZE(k)


def record(heapscope, program, out, *options, seed=None):
    env = {"HEAPSCOPE_SAMPLE_SEED": str(seed)} if seed is not None else None
    heapscope("record", "-o", out, *options, "--", program, env=env)
    [path] = out.glob("heapscope.*.hsp")
    return path


def types_by_site(heapscope, path):
    doc = json.loads(heapscope("stacks", path, "--size", "all", "--top", "0",
                               "--format", "json").stdout)
    out = {}
    for g in doc["groups"]:
        for t in g["stack_types"]:
            site = int(t["frames"][0]["function"].rpartition("_")[2])
            assert site not in out
            out[site] = dict(t, size=g["size"], group_count=g["count"])
    return doc, out


def test_intervals_cover_the_exact_counts(heapscope, build, tmp_path):
    program = build("smp_types.c")
    _, exact = types_by_site(heapscope, record(heapscope, program, tmp_path / "exact",
                                               "--sizes", "all"))
    # the all-stacks recording is what the program says it does
    assert {k: (t["size"], t["count"]) for k, t in exact.items()} == {
        k: (site_size(k), exact_count(k)) for k in range(SITES)}
    covered = total = 0
    for seed in range(1, 11):
        doc, sampled = types_by_site(heapscope, record(
            heapscope, program, tmp_path / f"s{seed}", "--sample-bytes", "8192", seed=seed))
        assert doc["sampling"]["mean_bytes"] == 8192
        for k, t in sampled.items():
            assert t["estimated"] and t["samples"] >= 1
            assert t["count_low"] <= t["count"] <= t["count_high"]
            # a size's total is the exact count, whatever was sampled
            assert t["group_count"] == sum(exact_count(j) for j in range(k - k % 4, k - k % 4 + 4))
            total += 1
            covered += t["count_low"] <= exact[k]["count"] <= t["count_high"]
        # a type seen in no sample is missing: only the rarest types may be
        assert all(exact_count(k) * -math.expm1(-site_size(k) / 8192) < 20
                   for k in set(range(SITES)) - set(sampled))
    assert total >= 10 * (SITES - 4)
    assert covered / total >= 0.95, f"{covered} of {total} intervals hold the exact count"


def test_counts_stay_exact_and_a_seed_repeats(heapscope, build, tmp_path):
    program = build("smp_types.c")
    exact = read_profile(record(heapscope, program, tmp_path / "exact"))
    one = read_profile(record(heapscope, program, tmp_path / "a", "--sample-bytes", "4096", seed=7))
    two = read_profile(record(heapscope, program, tmp_path / "b", "--sample-bytes", "4096", seed=7))
    assert one.settings["sample_bytes"] == 4096
    for key in {(r, s) for (r, s) in exact.size_counts if s > 40}:
        assert one.size_counts[key] == exact.size_counts[key]
    assert one.api_counts == exact.api_counts
    assert sorted((t.size, t.samples) for t in one.stack_types) == \
        sorted((t.size, t.samples) for t in two.stack_types)
    assert sum(t.samples for t in one.stack_types) > 100


def test_every_size_and_region_when_each_allocation_is_a_sample(heapscope, build, tmp_path):
    """With a mean of 1 byte every allocation of 40 bytes or more is a sample: the
    types and counts are those of an exact all-sizes recording, regions included."""
    program = build("rec_stacks.c", "-DHEAPSCOPE_WEAK")
    exact_path = record(heapscope, program, tmp_path / "exact", "--sizes", "all")
    every_path = record(heapscope, program, tmp_path / "every", "--sample-bytes", "1")
    every = read_profile(every_path)

    def key(path):   # (region, size, count, the first three functions) of each type
        doc = json.loads(heapscope("stacks", path, "--size", "1000-2000", "--top", "0",
                                   "--format", "json").stdout)
        return sorted((g["region"], g["size"], t["count"],
                       tuple(f["function"] for f in t["frames"][:3]))
                      for g in doc["groups"] for t in g["stack_types"])
    assert key(every_path) == key(exact_path)
    assert len(key(exact_path)) == 4    # 1234 by two paths in local, one in other; 1235
    assert {t.region for t in every.stack_types if t.size == 1234} == {"local", "other"}
    assert all(t.samples == t.count for t in every.stack_types if t.size >= 1000)
    # only the chosen regions
    local = read_profile(record(heapscope, program, tmp_path / "local", "--sample-bytes", "1",
                                "--regions", "local"))
    assert {t.region for t in local.stack_types if t.size >= 1000} == {"local"}


@pytest.mark.parametrize("options,message", [
    (["--sample-bytes", "0"], "bad --sample-bytes '0'"),
    (["--sample-bytes", "1k"], "bad --sample-bytes '1k'"),
    (["--sample-bytes", "4096", "--sizes", "all"], "does not go with --sizes"),
    (["--sample-bytes", "--track"], "does not go with --track"),
])
def test_bad_options(heapscope, tmp_path, options, message):
    res = heapscope("record", "-o", tmp_path / "x", *options, "--", "true", check=False)
    assert res.returncode == 2
    [line] = res.stderr.strip().splitlines()
    assert message in line
    assert not (tmp_path / "x").exists()


def test_diff_tells_a_change_from_sampling_noise(heapscope, build, tmp_path):
    program = build("smp_types.c")
    one = record(heapscope, program, tmp_path / "one", "--sample-bytes", "8192", seed=1)
    again = record(heapscope, program, tmp_path / "again", "--sample-bytes", "8192", seed=2)
    env = {"HEAPSCOPE_SAMPLE_SEED": "3"}
    heapscope("record", "-o", tmp_path / "twice", "--sample-bytes", "8192", "--", program, "2",
              env=env)

    def statuses(a, b):
        doc = json.loads(heapscope("diff", a, b, "--stacks", "--format", "json").stdout)
        return {int(s["frames"][0]["function"].rpartition("_")[2]): s["status"]
                for s in doc["stacks"]}
    # the same program twice: every difference is noise of the estimates
    assert set(statuses(one, again).values()) <= {"within sampling noise", "same"}
    # every count doubled: a change wherever the samples are enough to see it
    doubled = statuses(one, tmp_path / "twice")
    assert all(doubled[k] == "more" for k in range(8, SITES))

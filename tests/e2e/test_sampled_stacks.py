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


SEEDS = range(1, 21)
MEAN = 8192


def rare_count(size: int, depth: int) -> int:
    """count_of() in smp_rare.c: the allocations of the type `depth` levels deep."""
    if size == 48:
        return 2
    if size == 64:
        return 250
    if size == 80:
        return 3
    if size == 96:
        return 2000 if depth == 0 else 20
    return 1 + math.floor(400.0 * 0.8 ** depth)


RARE_TYPES = {48: 400, 64: 1, 80: 112, 96: 21, 112: 30}


def true_counts(program: str, group: dict) -> list:
    """The exact count of each listed type of a group (smp_types: by its site; smp_rare:
    by how deep in descend() it allocated)."""
    out = []
    for t in group["stack_types"]:
        functions = [f["function"] for f in t["frames"]]
        if program == "smp_types":
            out.append(exact_count(int(functions[0].rpartition("_")[2])))
        else:
            out.append(rare_count(group["size"], functions.count("descend") - 1))
    return out


def test_intervals_cover_the_exact_counts(heapscope, build, tmp_path):
    """Over 20 seeds, on two programs whose per-type counts are known: every estimate
    lies in its interval, at least 95% of the intervals hold the type's exact count,
    and so do at least 95% of those of sizes seen in 1-3 samples; the bound on the
    allocations of types no sample saw holds too."""
    programs = {"smp_types": (build("smp_types.c"), "all", ()),
                "smp_rare": (build("smp_rare.c", "-lm"), "48-112", ("--depth", "256"))}
    # the programs do what they say: an exact recording of each
    for name, (program, sizes, options) in programs.items():
        doc = json.loads(heapscope("stacks", record(heapscope, program, tmp_path / f"{name}-x",
                                                    "--sizes", sizes, *options),
                                   "--size", sizes, "--top", "0", "--format", "json").stdout)
        groups = [g for g in doc["groups"] if name == "smp_rare" or g["size"] in
                  {site_size(k) for k in range(SITES)}]
        for g in groups:
            assert [t["count"] for t in g["stack_types"]] == true_counts(name, g)
        if name == "smp_rare":
            assert {g["size"]: g["types"] for g in groups} == RARE_TYPES
    held = listed = few_held = few_listed = unseen_held = cells = 0
    outside = []
    for seed in SEEDS:
        for name, (program, sizes, options) in programs.items():
            path = record(heapscope, program, tmp_path / f"{name}-{seed}", "--sample-bytes",
                          str(MEAN), *options, seed=seed)
            doc = json.loads(heapscope("stacks", path, "--size", sizes, "--top", "0",
                                       "--format", "json").stdout)
            assert doc["sampling"]["mean_bytes"] == MEAN
            for g in doc["groups"]:
                if name == "smp_types" and g["size"] not in {site_size(k) for k in range(SITES)}:
                    continue
                truth = true_counts(name, g)
                assert sum(t["count"] for t in g["stack_types"]) == pytest.approx(g["count"], abs=len(truth))
                for t, n in zip(g["stack_types"], truth):
                    assert t["estimated"] and t["samples"] >= 1
                    if not t["count_low"] <= t["count"] <= t["count_high"]:
                        outside.append((name, seed, g["size"], t["count"], t["count_low"], t["count_high"]))
                    ok = t["count_low"] <= n <= t["count_high"]
                    held += ok
                    listed += 1
                    if g["samples"] <= 3:
                        few_held += ok
                        few_listed += 1
                # the types no sample saw: the exact count less the listed types' exact counts
                cells += 1
                unseen_held += g["count"] - sum(truth) <= g["unseen"]["count_high"]
    assert not outside, f"estimates outside their interval: {outside[:5]}"
    assert listed > 20 * 40 and few_listed >= 30
    assert held / listed >= 0.95, f"{held} of {listed} intervals hold the exact count"
    assert few_held / few_listed >= 0.95, \
        f"{few_held} of {few_listed} intervals of sizes seen in 1-3 samples hold the exact count"
    assert unseen_held / cells >= 0.95, f"{unseen_held} of {cells} unseen bounds hold"


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
    (["--sample-bytes", "4096", "--trace"], "does not go with --trace"),
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

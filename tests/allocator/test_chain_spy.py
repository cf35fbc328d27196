"""Chains in the allocator spy and on a chosen NUMA node (`chain_spy.c`): every live chain
in the JSON dumps (at exit and on SIGUSR2) with its name, number and exact figures, the
same as hsmalloc_chain_stats; `heapscope alloc-stats` shows them; a chain bound to node 0
is reported there by hsmalloc_numa_info (get_mempolicy, move_pages) and bad nodes are
EINVAL."""
import json
import os
import subprocess

N, F, R, T, BIG, C = 1000, 400, 10, 50, 100000, 100   # chain_spy.c
PAGE = 4096


def class_size(n):
    """hsmalloc's fixed classes (docs/hsmalloc.md): 16, then 8-byte steps to 128, then 8 per doubling."""
    if n <= 128:
        return max(16, (n + 7) // 8 * 8)
    top = 1 << ((n - 1).bit_length() - 1)
    step = top // 8
    return (n + step - 1) // step * step


def span_pages(block):
    """Pages of a chain's span of a class (docs/hsmalloc.md): the fewest, up to 32, whose
    unused tail is at most 1/8 of the span."""
    for k in range(1, 32):
        if k * PAGE // block >= 1 and k * PAGE - (k * PAGE // block) * block <= k * PAGE // 8:
            return k
    return 32


def spans(count, block):
    per = span_pages(block) * PAGE // block
    return -(-count // per) * span_pages(block)


def run(build, native, tmp_path, *args, stats="json"):
    lib = str(native / "lib")
    exe = build("../allocator/chain_spy.c", "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="chain_spy")
    out = tmp_path / "stats.json"
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("HSMALLOC_NUMA", None)
    env.update({"HSMALLOC_STATS": stats, "HSMALLOC_STATS_FILE": str(out)})
    res = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout, out


def pairs(words):
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def expected_mesh():
    live96 = N - F - R - T
    pages = spans(N, 96) + spans(R, 192) + spans(1, class_size(BIG))
    return {"allocs": N + R + 1, "frees": F + R + T, "reallocs": R,
            "requested_total": N * 96 + R * 192 + BIG,
            "allocated_total": N * 96 + R * 192 + class_size(BIG),
            "allocated_now": live96 * 96 + R * 192 + class_size(BIG),
            "rfq_blocks": T, "rfq_bytes": T * 96, "remote_frees": T,
            "page_bytes": pages * PAGE, "virtual_bytes": 2 << 20, "segments": 1, "heaps": 0,
            "free_not_returned": 0}


def expected_buffer():
    return {"allocs": C, "frees": 0, "reallocs": 0, "requested_total": C * 64,
            "allocated_total": C * 64, "allocated_now": C * 64, "rfq_blocks": 0,
            "page_bytes": spans(C, 64) * PAGE, "virtual_bytes": 1 << 20, "segments": 1}


def check_parts(chain):
    """The overhead is what is not a live block, in its three parts."""
    assert chain["real_bytes"] == chain["metadata_bytes"] + chain["page_bytes"] + \
        chain["free_not_returned"]
    assert chain["overhead_bytes"] == chain["real_bytes"] - chain["allocated_now"]
    assert chain["overhead_bytes"] == (chain["metadata_bytes"] + chain["free_in_pages"]
                                       + chain["free_not_returned"])
    assert chain["free_in_pages"] == chain["page_bytes"] - chain["allocated_now"]
    assert chain["committed_peak"] >= chain["committed"] == chain["real_bytes"]


def test_every_live_chain_in_the_dumps(build, native, tmp_path):
    stdout, path = run(build, native, tmp_path)
    dumps = [json.loads(line) for line in path.read_text().splitlines()]
    assert [d["event"] for d in dumps] == ["signal", "exit"]
    own = {line.split()[1]: pairs(line.split()[2:]) for line in stdout.splitlines()}
    for dump in dumps:
        # chain 3 was destroyed before the dumps; numbers in creation order
        assert [(c["chain"], c["chain_id"]) for c in dump["chains"]] == [("mesh", 1), ("2", 2)]
        mesh, buf = dump["chains"]
        want_buf = expected_buffer()
        if dump["event"] == "exit":   # after the reset: every block freed, the pages kept
            want_buf.update(frees=C, allocated_now=0, page_bytes=0,
                            free_not_returned=spans(C, 64) * PAGE)
        for chain, want in ((mesh, expected_mesh()), (buf, want_buf)):
            for key, value in want.items():
                assert chain[key] == value, (chain["chain"], key)
            check_parts(chain)
        # 1000 + 10 + 1 allocations, 26 of them on the slow path (a new span each, the big block)
        assert mesh["slow_allocs"] == spans(N, 96) + spans(R, 192) + 1
        assert abs(mesh["fast_path_hit_rate"] - (1 - mesh["slow_allocs"] / mesh["allocs"])) < 1e-6
        # a caller's buffer: bookkeeping of 8 bytes per page plus the headers
        assert 8 * (1 << 20) // PAGE < buf["metadata_bytes"] < 8 * (1 << 20) // PAGE + 8192
        # a chain does not follow pressure and has no node unless bound
        assert mesh["pressure"]["decay_ms_now"] == -1 and mesh["numa"]["numa_node"] == -1
        assert dump["numa"]["numa_node"] == -1
        # the program's own view (hsmalloc_chain_stats) is the dump's
        if dump["event"] == "exit":
            signal_buf = dumps[0]["chains"][1]
            assert buf["real_bytes"] == signal_buf["real_bytes"]   # a reset returns nothing
            continue
        for name, chain in (("mesh", mesh), ("2", buf)):
            mine = own[name]
            for key, jkey in (("allocs", "allocs"), ("frees", "frees"), ("reallocs", "reallocs"),
                              ("requested", "requested_total"), ("live", "allocated_now"),
                              ("real", "real_bytes"), ("virtual", "virtual_bytes"),
                              ("overhead", "overhead_bytes"), ("metadata", "metadata_bytes"),
                              ("rfq_bytes", "rfq_bytes"), ("page_bytes", "page_bytes")):
                assert mine[key] == chain[jkey], (name, key)


def test_alloc_stats_shows_chains(build, native, tmp_path, heapscope):
    _, path = run(build, native, tmp_path)
    text = heapscope("alloc-stats", str(path)).stdout
    header = next(line for line in text.splitlines() if line.strip().startswith("figure"))
    assert "chain mesh #1" in header and "chain 2" in header
    allocs = next(line for line in text.splitlines() if line.strip().startswith("allocations"))
    assert allocs.split()[-2:] == [f"{N + R + 1:,}", f"{C}"]
    reallocs = next(line for line in text.splitlines() if line.strip().startswith("reallocations"))
    assert reallocs.split()[-2:] == [str(R), "0"]
    doc = json.loads(heapscope("alloc-stats", str(path), "--format", "json").stdout)
    (proc,) = doc["processes"]
    mesh = proc["chains"][0]
    assert mesh["chain"] == "mesh" and mesh["chain_id"] == 1
    assert mesh["rfq_bytes"] == T * 96 and mesh["allocated_now"] == expected_mesh()["allocated_now"]


def test_text_report_lists_chains(build, native, tmp_path):
    """HSMALLOC_STATS=1: a line per live chain in the report at exit."""
    _, path = run(build, native, tmp_path, stats="1")
    lines = [line.strip() for line in path.read_text().splitlines()
             if line.strip().startswith("chain ")]
    want = expected_mesh()
    assert lines[0].startswith(f"chain mesh (#1): allocations {want['allocs']}, "
                               f"frees {want['frees']}, reallocations {R}, "
                               f"live {want['allocated_now'] / 1024:.1f} KiB")
    assert lines[1].startswith(f"chain 2: allocations {C}, frees {C}, reallocations 0, live 0 B")
    assert len(lines) == 2


def machine_nodes():
    text = open("/sys/devices/system/node/possible").read().strip()
    return max(int(part.split("-")[-1]) for part in text.split(",")) + 1


def test_chain_bound_to_a_node(build, native, tmp_path, heapscope):
    stdout, path = run(build, native, tmp_path, "numa")
    got = pairs(stdout.split())
    for where in ("os", "dedicated", "buffer"):
        # the node recorded, the kernel's policy (MPOL_PREFERRED, node 0), the page on node 0
        assert got[f"{where}_recorded"] == 0, where
        assert got[f"{where}_policy"] == 1 and got[f"{where}_policy_node"] == 0, where
        assert got[f"{where}_resident"] == 0, where
    # the first region at the call, the 4 MiB block's region when it was mapped
    assert got["os_node"] == 0 and got["os_binds"] == 2 and got["os_failures"] == 0
    assert got["buffer_node"] == 0 and got["buffer_binds"] == 1
    assert got["nodes"] == machine_nodes()
    for bad in ("bad_past", "bad_negative", "bad_null"):   # node = nodes, -2, NULL chain
        assert got[bad] == -1 and got[bad + "_einval"] == 1, bad
    assert got["after_bad_node"] == 0                    # a bad node changes nothing
    assert got["unbound_node"] == -1 and got["unbound_recorded"] == -1
    assert got["unbound_policy"] == 0                    # back to the kernel's default
    assert got["sum"] == 1024 * 4 + 3 + 5
    (dump,) = [json.loads(line) for line in path.read_text().splitlines()]
    os_chain, buf_chain = dump["chains"]
    assert os_chain["numa"]["numa_node"] == -1 and os_chain["numa"]["numa_binds"] == 4
    assert buf_chain["numa"]["numa_node"] == 0 and buf_chain["numa"]["numa_placing"] == 1
    text = heapscope("alloc-stats", str(path)).stdout
    assert "chain 2: bound to NUMA node 0, 1 placement (0 failed)" in text
    assert "chain 1: bound" not in text


def test_dumps_while_the_owner_maps_and_unmaps(build, native, tmp_path):
    """A dump reads a chain's counters, never its regions: dumps run without pause while
    the owner maps and unmaps a region for each of 3,000 blocks of 3 MiB."""
    stdout, path = run(build, native, tmp_path, "busy")
    got = pairs(stdout.split()[1:])
    assert got["allocs"] == got["frees"] == 3000 and got["dumps"] >= 1
    (dump,) = [json.loads(line) for line in path.read_text().splitlines()]
    (chain,) = dump["chains"]
    assert chain["allocs"] == chain["frees"] == 3000
    assert chain["allocated_now"] == 0 and chain["segments"] == 1   # the big regions are gone
    assert chain["virtual_bytes"] == 2 << 20


def test_alloc_stats_compares_chains_by_name(build, native, tmp_path, heapscope):
    """The signal dump (A) against the exit dump (B) of one run: between them chain "2" was
    reset (C frees, no live block left), chain "mesh" did nothing."""
    _, path = run(build, native, tmp_path)
    signal_dump, exit_dump = path.read_text().splitlines()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(signal_dump + "\n")
    b.write_text(exit_dump + "\n")
    doc = json.loads(heapscope("alloc-stats", str(a), str(b), "--format", "json").stdout)
    chains = {c["chain"]: ({r["key"]: r for r in c["rows"]}, c["in"]) for c in doc["chains"]}
    assert sorted(chains) == ["2", "mesh"]
    buf, where = chains["2"]
    assert where == "both"
    assert buf["frees"]["delta"] == C and buf["allocs"]["delta"] == 0
    assert buf["allocated_now"]["a"] == C * 64 and buf["allocated_now"]["delta"] == -C * 64
    assert buf["real_bytes"]["delta"] == 0          # a reset keeps the pages
    mesh, _ = chains["mesh"]
    assert mesh["allocs"]["a"] == N + R + 1
    assert all(r["delta"] in (0, 0.0) for r in mesh.values() if r["delta"] is not None)
    text = heapscope("alloc-stats", str(a), str(b)).stdout
    section = text[text.index("chain 2,"):]
    frees = next(line for line in section.splitlines() if line.strip().startswith("frees"))
    assert frees.split()[1:] == ["0", str(C), f"+{C}", "-"]

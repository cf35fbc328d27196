"""NUMA placement (`numa_place.c`): on this one-node machine, the placement hsmalloc
requests (mbind, seen with get_mempolicy) and where the pages are (move_pages), with
HSMALLOC_NUMA=1 (placement forced), auto (the default: off on one node) and 0; the
program's results are the same in all three."""
import os
import subprocess


def place(build, native, value):
    lib = str(native / "lib")
    exe = build("../allocator/numa_place.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="numa_place")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("HSMALLOC_NUMA", None)
    if value is not None:
        env["HSMALLOC_NUMA"] = value
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    words = res.stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def machine_nodes():
    text = open("/sys/devices/system/node/possible").read().strip()
    return max(int(part.split("-")[-1]) for part in text.split(",")) + 1


def test_placement_requested_and_reported(build, native):
    forced = place(build, native, "1")
    assert forced["nodes"] == machine_nodes()
    assert forced["placing"] == 1
    node = forced["thread"]
    assert forced["segment"] == node             # recorded in the segment header
    assert forced["policy"] == 1 and forced["policy_node"] == node   # MPOL_PREFERRED, asked
    assert forced["resident"] == node            # and where the kernel put the page
    # 2 x 80 blocks of 512 KiB: 20+ segments from the OS, bound once each; the second
    # round takes the cached ones of the same node
    assert forced["binds"] >= 20
    assert forced["reused_same"] >= 15 and forced["reused_other"] == 0


def test_no_change_on_one_node(build, native):
    auto = place(build, native, None)
    off = place(build, native, "0")
    forced = place(build, native, "1")
    if machine_nodes() == 1:
        assert auto["placing"] == 0
        assert auto["segment"] == -1 and auto["policy"] == 0 and auto["binds"] == 0
    assert off["placing"] == 0 and off["binds"] == 0
    assert auto["resident"] == off["resident"] == forced["resident"]
    assert auto["sum"] == off["sum"] == forced["sum"] == 128 * 5

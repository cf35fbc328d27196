"""Huge blocks made of the memory freed huge blocks left resident, moved rather than
faulted in again (huge_reuse.c: mimalloc-bench's malloc-large in small: 8 live blocks of
5-25 MiB, 300 replaced one at a time, every byte written)."""
import os
import signal
import subprocess

from hsm_linked import program_figures

MIB = 1 << 20


def figures(build, native, mode, env=None):
    return program_figures(build, native, "huge_reuse.c", mode, env)


def test_replaced_huge_blocks_reuse_resident_memory(build, native):
    """The blocks write 1,150,822 pages of 4 KiB. A freed mapping used to be reused only
    by a request within a quarter of its size, and idle ones were purged as fresh
    mappings were committed: 585,097 minor faults (half the pages faulted in again) and
    a resident set 118 MB above the most ever live. Now each new block is made of the
    freed blocks' pages (60,407 faults here; tcmalloc 64,425, glibc 166,282) and the
    resident set follows what is live."""
    f = figures(build, native, "churn")
    assert f["touched_pages"] == 1150822
    assert f["minflt"] < f["touched_pages"] // 10
    assert f["rss_peak"] <= f["live_peak"] + f["live_peak"] // 20 + 4 * MIB


def test_list_rebuilt_every_step_is_not_faulted_in_again(build, native):
    """mesh-refine's pattern (its list of triangles rebuilt every round while its objects
    grow): a list grown by doubling to 8 MiB and freed, every step, 39 steps counted,
    while 64 KiB blocks are added. The small blocks' fresh slices purged the freed
    list's pages against growth, step after step, and the list faulted them in again:
    132,450 minor faults for its 158,496 pages written (mesh-refine --pool 1: 41,338
    faults against glibc's 22,172, and 14% more CPU). Then the cache kept resident what
    its purges cost in refaults: 12,852, later 18,428 (the empty segment of the list's
    blocks below 2 MiB, cached every step, was purged as the small blocks grew: 23 MiB
    given back and faulted in again over the run). Now memory idle for
    less than the program's cycle of freeing and reusing is not given back against
    growth of its own kind: 12,685 (7,109 with nothing ever given back)."""
    f = figures(build, native, "rebuilt")
    assert f["touched_pages"] == 158496
    assert f["minflt"] < f["touched_pages"] // 10
    # what stays resident is what the next step takes again
    assert f["rss_peak"] <= f["live_peak"]


def test_replaced_huge_blocks_give_memory_back_under_pressure(build, native, tmp_path):
    """High memory pressure (HSMALLOC_PRESSURE_FILES: 10% of the memory available) purges
    a freed huge block at once: its pages fault in again, and the resident set follows
    what is live as closely."""
    (tmp_path / "meminfo").write_text("MemTotal: 16000000 kB\nMemFree: 1 kB\n"
                                      "MemAvailable: 1600000 kB\n")
    (tmp_path / "memory.pressure").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"
                                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    f = figures(build, native, "churn", {"HSMALLOC_PRESSURE_FILES": str(tmp_path)})
    assert f["minflt"] > f["touched_pages"] // 2
    assert f["rss_peak"] <= f["live_peak"] + f["live_peak"] // 20 + 4 * MIB


def test_calloc_of_a_reused_huge_block_reads_zero(build, native):
    """A 12 MiB calloc made of a freed 10 MiB block's pages (filled with 0xab) and fresh
    ones, and a 6 MiB one split off a freed 9 MiB block, read as zero."""
    assert figures(build, native, "calloc") == {"zero": 1}


def test_huge_block_shrunk_by_realloc_stays_in_place(build, native):
    """UMFPACK (Octave's sparse solve, `S \\ b`) writes a 17,229,680-byte workspace and
    realloc's it to the 6,688,928 bytes it keeps. realloc moved it: a fresh 6.4 MiB block
    written by the copy while the old one was resident, whose pages then stayed resident
    in the huge-block cache: the resident set 24.1 MB above the start after the realloc
    (Octave's max RSS 1.15x glibc's). Now the block stays where it is and the pages past
    its new end are unmapped, as glibc's mremap does: 6.9 MB, the kept block and
    the program's own few pages."""
    f = figures(build, native, "shrink")
    assert f["moved"] == 0
    assert f["kept"] == 1
    assert f["usable"] == 6692864  # 6,688,928 rounded up to whole 4 KiB pages
    assert f["live_after"] == f["usable"]  # the pages given back count as freed
    assert f["rss_full"] >= 17229680
    assert f["rss_after"] <= f["usable"] + 512 * 1024


def test_huge_block_grown_by_realloc_is_not_copied(build, native):
    """UMFPACK's workspace grows by realloc too (Octave's sparse lu of 3,000 columns:
    93,206,000 to 148,530,928 bytes); here a quarter of those sizes. realloc copied it
    into a fresh block, both resident at once, and cached the old one's pages after:
    46.8 MB above the start right after the realloc, 60.6 MB once the growth is written
    (Octave's max RSS 1.25x glibc's). Now its pages move to the bigger mapping (mremap)
    and only the growth is fresh: 23.5 MB, then 37.3 MB, what is live."""
    f = figures(build, native, "grow")
    assert f["kept"] == 1
    assert f["usable"] == 37134336  # 4,096 + 37,132,732 rounded up to whole pages, less the header
    assert f["live_after"] == f["usable"]
    assert f["rss_after"] <= 23301500 + 512 * 1024
    assert f["rss_full"] <= f["usable"] + 512 * 1024


def test_huge_block_grown_by_realloc_extends_where_it_lies(build, native):
    """A 4 MiB block with free address space after it (the 8 MiB block above it freed and,
    without a segment cache, unmapped) grows to 10 MiB where it lies, its contents kept;
    realloc moved it."""
    f = figures(build, native, "grow_here", {"HSMALLOC_CACHE_SEGMENTS": "0"})
    assert f == {"moved": 0, "kept": 1}


def test_secure_mode_resizes_huge_blocks_in_place_too(build, native):
    """HSMALLOC_SECURE=1 copied every huge block realloc resized (Octave 72.1 MiB against
    64.2 in the default mode): the same UMFPACK patterns now keep the block (its canary
    moved after the new request), malloc_usable_size being the request there."""
    secure = {"HSMALLOC_SECURE": "1"}
    f = figures(build, native, "shrink", secure)
    assert (f["moved"], f["kept"], f["usable"]) == (0, 1, 6688928)
    assert f["rss_after"] <= 6692864 + 512 * 1024
    f = figures(build, native, "grow", secure)
    assert (f["kept"], f["usable"]) == (1, 37132732)
    assert f["rss_after"] <= 23301500 + 512 * 1024
    assert f["rss_full"] <= 37134336 + 512 * 1024


def test_secure_mode_checks_the_canary_after_a_huge_block_grew(build, native):
    """The canary follows the new request: one byte written past the 12 MiB a realloc
    made of an 8 MiB block aborts at its free."""
    lib = str(native / "lib")
    exe = build("../allocator/huge_reuse.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="huge_reuse")
    env = dict(os.environ, HSMALLOC_SECURE="1")
    env.pop("LD_PRELOAD", None)
    res = subprocess.run([str(exe), "grow_overflow"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert res.returncode == -signal.SIGABRT, (res.returncode, res.stdout, res.stderr)
    assert "the bytes after the 12582912-byte request were overwritten" in res.stderr
    assert "undetected" not in res.stdout


def test_biggest_newest_huge_block_goes_back_when_freed(build, native):
    """gmsh's end: its biggest array (23 MiB) freed, then its output stage made small
    blocks. Kept resident in the cache, the array's pages were given back only as the
    small blocks' fresh memory offset them, and until then sat under whatever else the
    program touched (gmsh's max RSS 96.8 MiB against glibc's 92.1). A huge block bigger
    than any freed before, and the newest, is purged at its free, as glibc unmaps its
    first mapped chunk of a size (24.2 MiB resident after the free before, 0.2 now)."""
    f = figures(build, native, "last")
    assert f["rss_freed"] < MIB
    assert f["rss_end"] < 9 * MIB

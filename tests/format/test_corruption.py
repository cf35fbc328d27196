"""Format version 2 against damaged and crafted files: the crc covers a chunk's type and
length, so a changed type byte or a damaged length mid-file is "corrupt chunk at byte
N (type T)", not a silent change of meaning nor a file "cut short"; the chunks before
a corrupt one are read, and the file is flagged; counts that disagree with their
payload and unknown API ids are errors; the header's write-failed flag is reported;
version 1 files still read."""
import struct
import zlib

import pytest

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from helpers.profile_builder import API, ProfileBuilder, chunk, chunks_of, header, payload, types_crc

HEAD = fmt.CHUNK_HEADER_SIZE


def two_snapshots(version=fmt.FORMAT_VERSION):
    b = ProfileBuilder(version=version)
    b.snapshot(regions=[(1, 0, "solve")], sizes=[(1, 12, 5), (0, 100, 1)],
               apis=[(1, API["malloc"], 6)], reason="api")
    b.snapshot(regions=[(1, 0, "solve")], sizes=[(1, 12, 50), (0, 100, 2), (1, 24, 7)],
               apis=[(1, API["malloc"], 59), (1, API["free"], 40)],
               stacks=[(1, 12, 50, 600, (0x401000, 0x402000))])
    return b


def offset_of(data, ctype, nth=-1):
    return [o for t, o, _ in chunks_of(data) if t == ctype][nth]


def error_of(path) -> str:
    with pytest.raises(HeapscopeError) as info:
        read_profile(path)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("ctype", [fmt.CHUNK_SIZE_COUNTS, fmt.CHUNK_API_COUNTS, fmt.CHUNK_STACK_TYPES,
                                   fmt.CHUNK_MODULES])
def test_changed_type_byte_is_corruption(tmp_path, ctype):
    """Version 1's crc did not cover the type: SIZE_COUNTS retyped read as "0 of 0 sizes"."""
    b = two_snapshots()
    data = bytearray(b.data())
    at = offset_of(bytes(data), ctype)
    data[at] ^= 0x04
    p = read_profile(b.write(tmp_path / "t.hsp", bytes(data)))
    assert (p.snapshot_seq, p.complete) == (0, False)
    assert p.size_counts == {("solve", 12): 5, ("(none)", 100): 1}     # snapshot 0's figures
    assert p.warnings == [f"corrupt chunk at byte {at} (type {ctype ^ 4}, {fmt.chunk_name(ctype ^ 4)}): "
                          f"chunk header crc mismatch (type and length not to be trusted): the chunks "
                          f"before it are read, using snapshot 0"]


def test_type_changed_with_its_head_crc_redone_still_fails_the_chunk_crc(tmp_path):
    b = two_snapshots()
    data = bytearray(b.data())
    at = offset_of(bytes(data), fmt.CHUNK_SIZE_COUNTS)
    data[at] = 99
    data[at + 16:at + 20] = struct.pack("<I", zlib.crc32(bytes(data[at:at + 16])))
    p = read_profile(b.write(tmp_path / "t.hsp", bytes(data)))
    assert p.snapshot_seq == 0 and not p.complete
    assert p.warnings[0].startswith(f"corrupt chunk at byte {at} (type 99, type-99): crc mismatch")


def test_damaged_length_mid_file_is_corruption_not_a_cut(tmp_path):
    b = two_snapshots()
    data = bytearray(b.data())
    at = offset_of(bytes(data), fmt.CHUNK_REGIONS, 0)       # in snapshot 0: nothing before it
    data[at + 8] ^= 0x80                                     # payload_len, low byte
    message = error_of(b.write(tmp_path / "t.hsp", bytes(data)))
    assert f"corrupt chunk at byte {at} (type 5, REGIONS)" in message
    assert "no complete snapshot before it" in message and "cut short" not in message
    data[at + 8] ^= 0x80
    data[at + 12] = 0x7F                                     # a length far past the end
    message = error_of(b.write(tmp_path / "t.hsp", bytes(data)))
    assert f"corrupt chunk at byte {at} (type 5, REGIONS)" in message and "cut short" not in message


def test_payload_flip_reads_prefix(tmp_path):
    b = two_snapshots()
    data = bytearray(b.data())
    at = offset_of(bytes(data), fmt.CHUNK_STACK_TYPES)
    data[at + HEAD + 10] ^= 1
    p = read_profile(b.write(tmp_path / "t.hsp", bytes(data)))
    assert p.snapshot_seq == 0 and p.stack_types == [] and not p.complete
    assert p.warnings[0].startswith(f"corrupt chunk at byte {at} (type 8, STACK_TYPES): crc mismatch")


@pytest.mark.parametrize("delta", [-1, +1, 1000, 2 ** 32 - 1 - 3])
def test_crafted_row_count_is_an_error(tmp_path, delta):
    """A count that disagrees with its payload (crcs redone): never rows silently dropped."""
    b = two_snapshots()

    def change(ctype, data):
        if ctype != fmt.CHUNK_SIZE_COUNTS:
            return data
        (n,) = struct.unpack_from("<I", data)
        return struct.pack("<I", n + delta) + data[4:]
    crafted = header() + b"".join(chunk(t, change(t, p)) for t, _o, p in chunks_of(b.data()))
    message = error_of(b.write(tmp_path / "t.hsp", crafted))
    assert "malformed SIZE_COUNTS chunk at byte" in message
    if delta == -1:
        assert "24 bytes left after the last field (its count of rows disagrees with the payload)" in message


def test_unknown_api_id_is_an_error(tmp_path):
    b = ProfileBuilder()
    b.snapshot(apis=[(0, API["malloc"], 3), (0, 57, 9)])
    assert "malformed API_COUNTS chunk at byte" in error_of(b.write(tmp_path / "a.hsp"))
    assert error_of(tmp_path / "a.hsp").endswith("unknown API id 57")


def test_snapshot_without_its_counts_is_malformed(tmp_path):
    """Version 1 (no types_crc): a SIZE_COUNTS retyped to an unknown type leaves a
    snapshot without its counts, an error (it read as "0 of 0 sizes"). Version 2: the
    snapshots' chunk lists no longer match their ends."""
    v1 = two_snapshots(version=1)
    retyped = header(version=1) + b"".join(chunk(200 if t == fmt.CHUNK_SIZE_COUNTS else t, p, version=1)
                                           for t, _o, p in chunks_of(v1.data()))
    assert "malformed snapshot 1 at byte" in error_of(v1.write(tmp_path / "t.hsp", retyped))
    assert error_of(tmp_path / "t.hsp").endswith("no SIZE_COUNTS chunk")
    b = two_snapshots()
    retyped = header() + b"".join(chunk(200 if t == fmt.CHUNK_SIZE_COUNTS else t, p)
                                  for t, _o, p in chunks_of(b.data()))
    message = error_of(b.write(tmp_path / "t.hsp", retyped))
    assert "no complete snapshot: snapshot 0 at byte" in message and "is corrupt: the chunk types before its end" in message


def test_corrupt_file_header(tmp_path):
    b = two_snapshots()
    data = bytearray(b.data())
    data[16] ^= 1                                   # start_real_ns
    assert error_of(b.write(tmp_path / "h.hsp", bytes(data))).endswith("corrupt header (crc mismatch)")


def test_write_failed_flag_is_reported(tmp_path):
    b = two_snapshots()
    data = b.data()
    flagged = header(flags=fmt.HEADER_WRITE_FAILED, write_errno=28, lost_at=4242) + data[fmt.HEADER_SIZE:]
    p = read_profile(b.write(tmp_path / "f.hsp", flagged))
    assert p.snapshot_seq == 1 and not p.complete
    assert p.warnings == ["incomplete: a write of the recorder failed at byte 4,242 (No space left on "
                          "device): some of the run's data is not in this file"]


def test_version_1_still_reads(tmp_path):
    """A version 1 file (32-byte header, 16-byte chunk headers, crc of the payload only)."""
    v1 = two_snapshots(version=1)
    data = v1.data()
    assert struct.unpack_from("<II", data, 8) == (1, 32)
    p = read_profile(v1.write(tmp_path / "v1.hsp"))
    v2 = read_profile(two_snapshots().write(tmp_path / "v2.hsp"))
    for name in ("snapshot_seq", "size_counts", "api_counts", "stack_types", "regions", "settings",
                 "cmdline", "warnings", "complete"):
        assert getattr(p, name) == getattr(v2, name), name
    # its rules: a cut is read up to there; a payload crc mismatch ends the chunks read
    cut = read_profile(v1.write(tmp_path / "c.hsp", data[:-3]))
    assert cut.snapshot_seq == 0 and not cut.complete
    bad = bytearray(data)
    at = offset_of(data, fmt.CHUNK_SIZE_COUNTS)
    bad[at + 16 + 6] ^= 1
    p = read_profile(v1.write(tmp_path / "b.hsp", bytes(bad)))
    assert p.snapshot_seq == 0 and p.warnings[0].startswith(f"corrupt chunk at byte {at} (type 6, "
                                                            f"SIZE_COUNTS): crc mismatch")


def test_fixed_layout_chunk_may_grow(tmp_path):
    """Forward compatibility kept where it is safe: bytes after SNAPSHOT_END's fields
    (a later version's) are skipped."""
    b = ProfileBuilder()
    b.add("SNAPSHOT_BEGIN", seq=0, reason=0, mono_ns=5)
    for name, fields in (("MODULES", {"modules": []}), ("REGIONS", {"regions": [
            dict(id=0, parent_id=fmt.NO_PARENT, name="")]}), ("SIZE_COUNTS", {"rows": [
            dict(region=0, size=8, count=2)]}), ("API_COUNTS", {"rows": []})):
        b.add(name, **fields)
    types = types_crc(t for t, _o, _p in chunks_of(b.data()))
    b.raw(chunk("SNAPSHOT_END", payload("SNAPSHOT_END", seq=0, types_crc=types, lost_stacks=0,
                                        total_threads=1) + b"later"))
    p = read_profile(b.write(tmp_path / "g.hsp"))
    assert p.size_counts == {("(none)", 8): 2} and p.complete


@pytest.mark.parametrize("change", ["retype", "drop", "add"])
def test_snapshot_chunk_list_is_checked(tmp_path, change):
    """A chunk of the last snapshot retyped, dropped or added with every crc redone (a
    crafted file): SNAPSHOT_END's types_crc no longer matches; snapshot 0 is used, flagged."""
    b = two_snapshots()
    parts = chunks_of(b.data())
    stacks = [i for i, (t, _o, _p) in enumerate(parts) if t == fmt.CHUNK_STACK_TYPES][-1]
    out = [chunk(t, p) for t, _o, p in parts]
    if change == "retype":
        out[stacks] = chunk(fmt.TRACK_SUMMARY, parts[stacks][2] + bytes(64))
    elif change == "drop":
        del out[stacks]
    else:
        out.insert(stacks, chunk(fmt.CHUNK_STACK_TYPES, parts[stacks][2]))
    p = read_profile(b.write(tmp_path / "s.hsp", header() + b"".join(out)))
    assert (p.snapshot_seq, p.complete, p.stack_types) == (0, False, [])
    assert p.warnings[0].startswith("snapshot 1 at byte ") and "is corrupt: the chunk types before its end" in p.warnings[0]


def test_version_1_keeps_its_lenient_structure_rules(tmp_path):
    """Version 1 files were written without types_crc or place checks: a chunk after a
    snapshot that version 2 would call out of place is read as before."""
    b = ProfileBuilder(version=1)
    b.snapshot(sizes=[(0, 8, 1)])
    b.add("PROCESS", pid=9, ppid=1, rank=-1, start_real_ns=0, host="h", exe="/x", cmdline="x",
          job_id="", recorder_version="v1")
    b.snapshot(sizes=[(0, 8, 2)])
    p = read_profile(b.write(tmp_path / "v1.hsp"))
    assert p.snapshot_seq == 1 and p.size_counts == {("(none)", 8): 2} and p.complete
    v2 = ProfileBuilder()
    v2.snapshot(sizes=[(0, 8, 1)])
    v2.add("PROCESS", pid=9, ppid=1, rank=-1, start_real_ns=0, host="h", exe="/x", cmdline="x",
           job_id="", recorder_version="v2")
    v2.snapshot(sizes=[(0, 8, 2)])
    p = read_profile(v2.write(tmp_path / "v2.hsp"))
    assert p.snapshot_seq == 0 and not p.complete
    assert p.warnings[0].startswith("PROCESS chunk at byte") and "is out of place" in p.warnings[0]

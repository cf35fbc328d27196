"""read_profile / load_profiles: a profile file -> Profile, using its last complete snapshot.

Steps: framing.parse (crc, truncation) -> find the snapshots -> decode the PROCESS
and SETTINGS chunks and the chunks of the last complete snapshot -> tracking (its TRACK_*
chunks, or else the event trace, replayed when Profile.tracking is first read) and
timeline. The reader is the top of
profile/: the modules it calls never import it.
"""
import os
import struct
import zlib
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from heapscope.errors import HeapscopeError, NoSnapshotError
from heapscope.profile import decode
from heapscope.profile import format as fmt
from heapscope.profile import access, ending, framing, sampling, trace, tracking
from heapscope.profile.job_file import JOB_FILE
from heapscope.profile.model import Profile, Region, StackType
from heapscope.profile.timeline import timeline_of

PROFILE_SUFFIX = ".hsp"


def read_profile(path, modules: bool = True) -> Profile:
    path = str(path)
    if JOB_FILE.match(os.path.basename(path)):
        raise HeapscopeError(f"{path}: a job file (every rank's summary), not a process's "
                             f"profile: `heapscope report` reads it; other commands read rank files")
    data = framing.read_file(path)
    # the event trace's chunks are checked when replayed (trace.py), not here: a report
    # that does not replay never reads them
    frame = framing.parse(data, path, unchecked={fmt.TRACE_EVENTS})
    profile = Profile(path=path, start_real_ns=frame.start_real_ns)
    snapshots, open_snapshot = _find_snapshots(frame, profile, path)

    first = {}
    for chunk in frame.chunks:
        first.setdefault(chunk.type, chunk)
    if fmt.CHUNK_PROCESS not in first:
        if frame.corrupt:
            raise HeapscopeError(f"{path}: {frame.corrupt}; no complete snapshot before it")
        raise HeapscopeError(f"{path}: not a complete profile: no PROCESS chunk")
    for key, value in _decode(decode.process, first[fmt.CHUNK_PROCESS], path).items():
        setattr(profile, key, value)
    if fmt.CHUNK_SETTINGS in first:
        profile.settings = _decode(decode.settings, first[fmt.CHUNK_SETTINGS], path)
    elif frame.header.version >= 2:   # every version 2 recorder writes it
        raise HeapscopeError(f"{path}: not a complete profile: no SETTINGS chunk")
    else:
        profile.settings = dict(stack_sizes="", stack_regions="", max_depth=0, unwinder="")
        profile.complete = False
        profile.warnings.append("no SETTINGS chunk: recording settings unknown")
    profile.settings["sample_bytes"] = (
        _decode(decode.sampling, first[fmt.CHUNK_SAMPLING], path)
        if fmt.CHUNK_SAMPLING in first else 0)

    if not snapshots:
        if frame.cut:
            raise HeapscopeError(f"{path}: no complete snapshot: {frame.cut}")
        if frame.corrupt:
            raise HeapscopeError(f"{path}: {frame.corrupt}; no complete snapshot before it")
        if frame.header.write_failed:
            raise HeapscopeError(f"{path}: no complete snapshot: {frame.header.write_failure()}")
        where = (f"file cut short at byte {frame.truncated_at}" if frame.truncated_at is not None
                 else "the process ended before its first dump")
        raise NoSnapshotError(f"{path}: no complete snapshot in this profile ({where})", path)
    begin, end = snapshots[-1]
    chosen_seq = _decode(decode.snapshot_begin, frame.chunks[begin], path)[0]
    _incomplete_warnings(profile, frame, open_snapshot, len(data), chosen_seq, path)
    _decode_snapshot(profile, frame.chunks[begin:end + 1], path, modules)
    if profile.settings["sample_bytes"]:
        profile.stack_types = sampling.estimated(profile.stack_types, profile.settings["sample_bytes"],
                                                 profile.size_counts)
    profile.ending = _decode(lambda _payload: ending.from_snapshot(profile), frame.chunks[end], path)
    profile.process_end = _decode(lambda _payload: ending.process_end(profile), frame.chunks[end], path)
    if profile.complete and profile.snapshot_reason not in ending.FINAL_REASONS:
        # (a file already flagged says why it ends where it does)
        profile.complete = False
        profile.warnings.append(
            f"the last snapshot ({profile.snapshot_reason}, at {profile.snapshot_mono_ns / 1e9:.3f} s) "
            f"was taken while the process ran: its end is not in this file (killed by SIGKILL, "
            f"ended by a raw exit system call, or the file copied before the process ended); "
            f"what it did after that snapshot is not counted")
    profile.tracking = tracking.from_snapshot(profile)
    if profile.tracking is not None and profile.settings["sample_bytes"]:
        profile.tracking = sampling.estimated_tracking(profile.tracking)
    if profile.tracking is None and fmt.TRACE_START in profile.file_chunks:
        # record --trace without --track: replayed when a report first reads it
        profile.defer_tracking(lambda: trace.replay(profile))
    profile.timeline = timeline_of(profile.file_chunks, path, profile.warnings)
    profile.access = access.from_snapshot(profile)
    return profile


def _decode(decoder, chunk, path):
    """decoder(chunk.payload), a malformed payload becoming a one-line HeapscopeError."""
    try:
        return decoder(chunk.payload)
    except decode.Malformed as exc:
        raise HeapscopeError(f"{path}: malformed {fmt.chunk_name(chunk.type)} chunk "
                             f"at byte {chunk.offset}: {exc}") from None


def last_snapshot(path) -> Optional[Tuple[str, float]]:
    """(reason, seconds since start) of a profile's last complete snapshot, from its chunk
    headers and that snapshot's SNAPSHOT_BEGIN alone (an event trace is not read); None
    when it has none. A file that cannot be read raises HeapscopeError."""
    path = str(path)
    with framing.open_regular(path) as fh:
        begin = last = None
        for head in framing.scan(fh, path):
            if head.type == fmt.CHUNK_SNAPSHOT_BEGIN:
                begin = head
            elif head.type == fmt.CHUNK_SNAPSHOT_END and begin is not None:
                last, begin = begin, None
        if last is None:
            return None
        try:
            _seq, reason, mono_ns = decode.snapshot_begin(framing.read_payload(fh, last, path))
        except decode.Malformed as exc:
            raise HeapscopeError(f"{path}: malformed SNAPSHOT_BEGIN chunk at byte {last.offset}: "
                                 f"{exc}") from None
    return fmt.reason_name(reason), mono_ns / 1e9


def profile_files(paths: Iterable) -> List[str]:
    """The files named, and the *.hsp files of the directories named (sorted), once each
    (a file named twice, itself and through its directory, is listed once)."""
    files: List[str] = []
    for arg in map(str, paths):
        if os.path.isdir(arg):
            found = sorted(str(p) for p in Path(arg).glob("*" + PROFILE_SUFFIX) if p.is_file())
            if not found:
                raise HeapscopeError(f"{arg}: directory holds no profile (*{PROFILE_SUFFIX}) files")
            files.extend(found)
        else:
            files.append(arg)
    if not files:
        raise HeapscopeError("no profile given")
    unique = {}
    for f in files:
        unique.setdefault(os.path.realpath(f), f)
    return list(unique.values())


def load_profiles(paths: Iterable, left_out: Optional[list] = None) -> List[Profile]:
    """Read every file named, and every *.hsp file of every directory named. With
    `left_out` (a list), a file that cannot be read (no complete snapshot: a process
    killed by SIGKILL; damaged) is left out and (path, why) appended to it, as the job
    report does with its ranks: only when no file at all can be read is the first one's
    error raised. Without it, the first such file is the error."""
    files = profile_files(paths)
    if left_out is None:
        return [read_profile(f) for f in files]
    profiles: List[Profile] = []
    first = None
    for f in files:
        try:
            profiles.append(read_profile(f))
        except HeapscopeError as exc:
            first = first or exc
            text = str(exc)
            left_out.append((f, text[len(f) + 2:] if text.startswith(f + ": ") else text))
    if not profiles and first is not None:
        raise first
    return profiles


_PLACE = {c.id: c.place for c in fmt.TABLE.chunks}


def _find_snapshots(frame, profile: Profile, path: str):
    """[(begin_index, end_index)] of complete snapshots, and the index of an unfinished one.
    Version 2: a chunk out of place (a snapshot's outside one, a stream or file chunk
    inside one, a snapshot begun twice or ended unbegun) or a SNAPSHOT_END whose
    types_crc does not match ends the readable part at the last good snapshot."""
    complete: List[Tuple[int, int]] = []
    open_at = None
    open_seq = None
    strict = frame.header.version >= 2
    types = 0       # crc32 of the types of the chunks before this one (SNAPSHOT_END.types_crc)
    for i, chunk in enumerate(frame.chunks):
        before, types = types, zlib.crc32(struct.pack("<I", chunk.type), types)
        place = _PLACE.get(chunk.type)
        inside = open_at is not None
        misplaced = chunk.type not in (fmt.CHUNK_SNAPSHOT_BEGIN, fmt.CHUNK_SNAPSHOT_END) and (
            (place == "snapshot") != inside or (place == "file" and bool(complete)))
        if strict and place is not None and misplaced:
            return _cut(frame, profile, path, complete, open_at, i,
                        f"{fmt.chunk_name(chunk.type)} chunk at byte {chunk.offset} is out of place")
        if chunk.type == fmt.CHUNK_SNAPSHOT_BEGIN:
            if inside:
                if strict:
                    return _cut(frame, profile, path, complete, open_at, i,
                                f"snapshot {open_seq} at byte {frame.chunks[open_at].offset} has no end")
                profile.warnings.append(f"snapshot {open_seq} at byte {frame.chunks[open_at].offset} "
                                        f"has no end; ignored")
            open_at = i
            open_seq = _decode(decode.snapshot_begin, chunk, path)[0]
        elif chunk.type == fmt.CHUNK_SNAPSHOT_END:
            if not inside:
                if strict:
                    return _cut(frame, profile, path, complete, open_at, i,
                                f"snapshot end at byte {chunk.offset} without a beginning")
                profile.warnings.append(f"snapshot end at byte {chunk.offset} without a beginning; ignored")
                continue
            end_seq = _decode(decode.snapshot_end, chunk, path)[0]
            if strict and before != _decode(decode.snapshot_types_crc, chunk, path):
                return _cut(frame, profile, path, complete, open_at, i,
                            f"snapshot {open_seq} at byte {frame.chunks[open_at].offset} is corrupt: "
                            f"the chunk types before its end are not the ones it lists (a chunk "
                            f"retyped, lost or added)")
            if end_seq != open_seq:
                profile.warnings.append(f"snapshot {open_seq} ends with seq {end_seq}; using it anyway")
            complete.append((open_at, i))
            open_at = None
        elif chunk.type == fmt.TRACE_EVENTS:
            continue   # the event trace is streamed from the file by trace.py, not kept
        elif chunk.type not in fmt.CORE_CHUNKS and open_at is None:
            profile.file_chunks.setdefault(chunk.type, []).append(bytes(chunk.payload))
    return complete, open_at


def _cut(frame, profile: Profile, path: str, complete, open_at, at: int, why: str):
    """The readable part ended at the last complete snapshot (or, with none, before the
    snapshot or chunk at fault): every chunk left was vouched for by a snapshot's end."""
    profile.complete = False
    frame.cut = why
    profile.warnings.append(f"{why}: the file is read up to the snapshot before it")
    del frame.chunks[complete[-1][1] + 1 if complete else min(at, open_at if open_at is not None else at):]
    profile.file_chunks.clear()
    return _find_snapshots(frame, profile, path)


def _incomplete_warnings(profile: Profile, frame, open_snapshot, file_size: int, chosen: int,
                         path: str) -> None:
    if frame.header.write_failed:
        profile.complete = False
        profile.warnings.append(frame.header.write_failure())
    if frame.header.unknown_flags():
        profile.warnings.append(frame.header.unknown_flags())
    if frame.corrupt:
        profile.complete = False
        profile.warnings.append(f"{frame.corrupt}: the chunks before it are read, "
                                f"using snapshot {chosen}")
        return
    cut = frame.truncated_at
    if cut is None and open_snapshot is None:
        return
    profile.complete = False
    where = cut if cut is not None else file_size
    if open_snapshot is not None:
        seq = _decode(decode.snapshot_begin, frame.chunks[open_snapshot], path)[0]
        profile.warnings.append(f"last snapshot (seq {seq}) cut short at byte {where}; "
                                f"using snapshot {chosen}")
    else:
        profile.warnings.append(f"file cut short at byte {where} (a chunk being written); "
                                f"using snapshot {chosen}")


# Every snapshot has one of each (profile_format.h): one missing is a damaged file.
_REQUIRED = (fmt.CHUNK_MODULES, fmt.CHUNK_REGIONS, fmt.CHUNK_SIZE_COUNTS, fmt.CHUNK_API_COUNTS)


def _decode_snapshot(profile: Profile, snapshot: List, path: str, modules: bool = True) -> None:
    seq, reason, mono_ns = _decode(decode.snapshot_begin, snapshot[0], path)
    present = {c.type for c in snapshot}
    missing = [fmt.chunk_name(t) for t in _REQUIRED if t not in present]
    if missing:
        raise HeapscopeError(f"{path}: malformed snapshot {seq} at byte {snapshot[0].offset}: "
                             f"no {' or '.join(missing)} chunk")
    profile.snapshot_seq = seq
    profile.snapshot_reason = fmt.reason_name(reason)
    profile.snapshot_mono_ns = mono_ns
    _, profile.lost_stacks, profile.total_threads = _decode(decode.snapshot_end, snapshot[-1], path)

    region_rows = []
    regions_chunk = snapshot[0]
    for chunk in snapshot:
        if chunk.type == fmt.CHUNK_REGIONS:
            region_rows.extend(_decode(decode.regions, chunk, path))
            regions_chunk = chunk
    if not any(rid == 0 for rid, _, _ in region_rows):
        region_rows.insert(0, (0, fmt.NO_PARENT, ""))
    paths = _decode(lambda _payload: decode.region_paths(region_rows), regions_chunk, path)
    profile.regions = {rid: Region(rid, parent, name, paths[rid]) for rid, parent, name in region_rows}

    sizes: Dict[Tuple[str, int], int] = {}
    apis: Dict[Tuple[str, str], int] = {}
    stacks: Dict[tuple, List[int]] = {}
    failed: Dict[tuple, int] = {}
    for chunk in snapshot:
        t = chunk.type
        if t == fmt.CHUNK_MODULES:
            if modules:   # (the job report needs no frames: 40% of its decoding time)
                profile.modules.extend(_decode(decode.modules, chunk, path))
        elif t == fmt.CHUNK_SIZE_COUNTS:
            rows = list(_decode(decode.size_rows, chunk, path))
            for rid in {row[0] for row in rows} - paths.keys():
                _path(paths, rid, profile)
            # The hot loop of reading: a comprehension when the sizes are new (one chunk,
            # the usual case), an accumulating loop otherwise.
            fresh = {(paths[rid], size): count for rid, _reserved, size, count in rows}
            if not sizes and len(fresh) == len(rows):
                sizes = fresh
            else:
                for rid, _reserved, size, count in rows:
                    key = (paths[rid], size)
                    sizes[key] = sizes.get(key, 0) + count
        elif t == fmt.CHUNK_API_COUNTS:
            for rid, api, calls in _decode(decode.api_rows, chunk, path):
                key = (_path(paths, rid, profile), _api(api, chunk, path))
                apis[key] = apis.get(key, 0) + calls
        elif t == fmt.FAILED_ALLOCS:
            for rid, api, size, calls, size_known, _reserved in _decode(decode.failed_rows, chunk, path):
                key = (_path(paths, rid, profile), _api(api, chunk, path), size if size_known else None)
                failed[key] = failed.get(key, 0) + calls
        elif t == fmt.CHUNK_STACK_TYPES:
            for rid, size, count, nbytes, frames in _decode(decode.stack_rows, chunk, path):
                key = (_path(paths, rid, profile), size, frames)
                acc = stacks.setdefault(key, [0, 0])
                acc[0] += count
                acc[1] += nbytes
        elif t not in fmt.CORE_CHUNKS:
            profile.extra_chunks.setdefault(t, []).append(bytes(chunk.payload))
    profile.size_counts = sizes
    profile.api_counts = apis
    profile.failed_allocs = failed
    profile.stack_types = [StackType(region, size, count, nbytes, frames)
                           for (region, size, frames), (count, nbytes) in stacks.items()]
    profile.stack_types.sort(key=lambda s: (-s.count, s.region, s.size, s.frames))
    if profile.lost_stacks:
        n = profile.lost_stacks
        profile.warnings.append(f"{n:,} allocation{'s' if n != 1 else ''} of the selected sizes "
                                f"lost {'their stacks' if n != 1 else 'its stack'} (the stack table was full)")


def _path(paths: Dict[int, str], rid: int, profile: Profile) -> str:
    path = paths.get(rid)
    if path is None:
        path = f"(region {rid})"
        paths[rid] = path
        profile.regions[rid] = Region(rid, fmt.NO_PARENT, path, path)
        profile.warnings.append(f"counts refer to region {rid}, which the REGIONS chunk does not define")
    return path


def _api(api: int, chunk, path: str) -> str:
    """An API id's name; one this reader does not know is a malformed chunk, not a row
    quietly left out."""
    if not 0 <= api < len(fmt.API_NAMES) or not fmt.API_NAMES[api]:
        raise HeapscopeError(f"{path}: malformed {fmt.chunk_name(chunk.type)} chunk at byte "
                             f"{chunk.offset}: unknown API id {api}")
    return fmt.API_NAMES[api]

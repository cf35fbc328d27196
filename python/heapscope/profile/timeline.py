"""The timeline chunks of a profile (types 20..29, src/format/profile_format.h) -> Timeline.

TIMELINE chunks are written outside snapshots as the run goes, so they are read from
the whole file: read_profile() fills Profile.timeline from them (timeline_of), and
read_timeline() reads a file that has no complete snapshot at all (a process killed
by SIGKILL before its first dump) for `heapscope timeline`.
"""
import struct
from typing import Dict, Iterable, List, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import chunks as framing
from heapscope.profile import decode
from heapscope.profile import format as fmt
from heapscope.profile.model import Profile, Sample, Timeline

# enum hs_timeline_chunk_type, enum hs_sample_kind (mirrored; tests check the header)
TIMELINE_SAMPLES = 20
TIMELINE_REGIONS = 21
SAMPLE_KINDS = ["periodic", "region-begin", "region-end", "mpi-before", "mpi-after", "final"]
HEAP_MEASURES = ["usable", "requested", "none"]   # "none": heap_bytes/heap_mpi_bytes are -1
NO_LABEL = 0xFFFFFFFF
NO_SNAPSHOT_WARNING = ("no complete snapshot (the process was killed before its first dump): "
                       "timeline up to its last flush")

_HEAD = struct.Struct("<QqII QQqqQ")
_COUNT = struct.Struct("<II")
_ROW = struct.Struct("<QIIIIqqqq")


def decode_samples(payload) -> Tuple[dict, List[tuple]]:
    """(header fields, [(mono_ns, kind, region, label or None, heap, heap_mpi, rss, pss)])"""
    c = decode.Cursor(payload)
    (interval_ns, caliper_ns, heap_measure, _reserved, taken, skipped, rss_delta, pss_delta,
     lost) = c.take(_HEAD)
    labels = [c.string() for _ in range(c.u32())]
    count, _reserved = c.take(_COUNT)
    rows = []
    for mono, kind, region, label, _r, heap, heap_mpi, rss, pss in _ROW.iter_unpack(c.rows(_ROW, count)):
        if label != NO_LABEL and label >= len(labels):
            raise decode.Malformed(f"sample label {label} but {len(labels)} labels")
        rows.append((mono, kind, region, None if label == NO_LABEL else labels[label],
                     heap, heap_mpi, rss, pss))
    head = dict(interval_ns=interval_ns, caliper_ns=caliper_ns, heap_measure=heap_measure,
                calipers_taken=taken, calipers_skipped=skipped, mpi_rss_delta=rss_delta,
                mpi_pss_delta=pss_delta, samples_lost=lost)
    return head, rows


def kind_name(kind: int) -> str:
    return SAMPLE_KINDS[kind] if 0 <= kind < len(SAMPLE_KINDS) else f"kind-{kind}"


def build(chunk_list: Iterable[Tuple[int, int, bytes]], path: str, warnings: List[str]):
    """Timeline from (type, offset, payload) chunks in file order, or None if there are
    no TIMELINE chunks. Malformed payloads raise a one-line HeapscopeError."""
    region_rows: Dict[int, Tuple[int, str]] = {}
    batches = []
    for ctype, offset, payload in chunk_list:
        try:
            if ctype == TIMELINE_REGIONS:
                for rid, parent, name in decode.regions(payload):
                    region_rows[rid] = (parent, name)
            elif ctype == TIMELINE_SAMPLES:
                batches.append(decode_samples(payload))
        except decode.Malformed as exc:
            name = "TIMELINE" if ctype == TIMELINE_SAMPLES else "TIMELINE_REGIONS"
            raise HeapscopeError(f"{path}: malformed {name} chunk at byte {offset}: {exc}") from None
    if not batches:
        return None
    region_rows.setdefault(0, (fmt.NO_PARENT, ""))
    rows = [(rid, parent, name) for rid, (parent, name) in region_rows.items()]
    try:
        paths = decode.region_paths(rows)
    except decode.Malformed as exc:
        raise HeapscopeError(f"{path}: malformed TIMELINE_REGIONS chunks: {exc}") from None

    def region_path(rid: int) -> str:
        if rid not in paths:
            paths[rid] = f"(region {rid})"
            warnings.append(f"timeline samples refer to region {rid}, which no TIMELINE_REGIONS "
                            f"chunk defines")
        return paths[rid]

    samples = []
    for _head, batch in batches:
        for mono, kind, rid, label, heap, heap_mpi, rss, pss in batch:
            kname = kind_name(kind)
            rpath = region_path(rid)
            if kname in ("region-begin", "region-end"):
                label = region_rows.get(rid, (0, rpath))[1]
            samples.append(Sample(mono, kname, rpath, label or "", heap, heap_mpi, rss, pss))
    samples.sort(key=lambda s: s.mono_ns)   # several threads append: order by time
    last = batches[-1][0]
    if last["samples_lost"]:
        n = last["samples_lost"]
        warnings.append(f"{n:,} timeline sample{'s' if n != 1 else ''} lost (sample buffer full "
                        f"or the file not writable)")
    measure = last["heap_measure"]
    return Timeline(interval_ns=last["interval_ns"],
                    heap_measure=HEAP_MEASURES[measure] if measure < len(HEAP_MEASURES)
                    else f"measure-{measure}",
                    samples=samples,
                    mpi_rss_delta_bytes=last["mpi_rss_delta"],
                    mpi_pss_delta_bytes=last["mpi_pss_delta"],
                    calipers_taken=last["calipers_taken"],
                    calipers_skipped=last["calipers_skipped"])


def timeline_of(file_chunks: Dict[int, List[bytes]], path: str, warnings: List[str]):
    """For read_profile: the Timeline from Profile.file_chunks (chunks outside snapshots)."""
    chunk_list = [(t, -1, payload) for t in (TIMELINE_REGIONS, TIMELINE_SAMPLES)
                  for payload in file_chunks.get(t, [])]
    return build(chunk_list, path, warnings)


def read_timeline(path) -> Profile:
    """A profile's process description and timeline, whether or not it holds a complete
    snapshot (the counts are not read: use read_profile for them)."""
    from heapscope.profile.reader import _read_bytes   # one way of opening files
    path = str(path)
    data = _read_bytes(path)
    frame = framing.parse(data, path)
    profile = Profile(path=path, start_real_ns=frame.start_real_ns)
    process = next((c for c in frame.chunks if c.type == fmt.CHUNK_PROCESS), None)
    if process is None:
        raise HeapscopeError(f"{path}: not a complete profile: no PROCESS chunk")
    try:
        for key, value in decode.process(process.payload).items():
            setattr(profile, key, value)
    except decode.Malformed as exc:
        raise HeapscopeError(f"{path}: malformed PROCESS chunk at byte {process.offset}: {exc}") from None
    if frame.truncated_at is not None:
        profile.complete = False
        profile.warnings.append(f"file cut short at byte {frame.truncated_at} (a chunk being "
                                f"written): timeline read up to there")
    if not any(c.type == fmt.CHUNK_SNAPSHOT_END for c in frame.chunks):
        profile.complete = False
        profile.warnings.append(NO_SNAPSHOT_WARNING)
    profile.timeline = build(((c.type, c.offset, c.payload) for c in frame.chunks
                              if c.type in (TIMELINE_SAMPLES, TIMELINE_REGIONS)), path,
                             profile.warnings)
    return profile

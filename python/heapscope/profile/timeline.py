"""The timeline chunks of a profile (TIMELINE, TIMELINE_REGIONS, HEAP_PEAK,
TIMELINE_RECORDER: the format table) -> Timeline.

A sample's RSS and PSS are the process's as the recorder read them; when its
TIMELINE_RECORDER chunk gives the recorder's own resident memory at that moment, the
Sample carries the program's figures, net of it, and the recorder's beside them.

TIMELINE chunks are written outside snapshots as the run goes, so they are read from
the whole file: read_profile() fills Profile.timeline from them (timeline_of), and
read_timeline() reads a file that has no complete snapshot at all (a process killed
by SIGKILL before its first dump) for `heapscope timeline`.
"""
from typing import Dict, Iterable, List, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import decode
from heapscope.profile import format as fmt
from heapscope.profile import framing
from heapscope.profile.layout import Malformed
from heapscope.profile.model import Profile, Sample, Timeline

TIMELINE_SAMPLES, TIMELINE_REGIONS = fmt.TIMELINE_SAMPLES, fmt.TIMELINE_REGIONS
HEAP_PEAK = fmt.TIMELINE_HEAP_PEAK
RECORDER = fmt.TIMELINE_RECORDER
STREAM_TYPES = (TIMELINE_SAMPLES, TIMELINE_REGIONS, HEAP_PEAK, RECORDER)
SAMPLE_KINDS = fmt.SAMPLE_KINDS
NO_SNAPSHOT_WARNING = ("no complete snapshot (the process was killed before its first dump): "
                       "timeline up to its last flush")


def decode_samples(payload) -> Tuple[dict, List[tuple]]:
    """(header fields, [(mono_ns, kind, region, label or None, heap, heap_mpi, rss, pss)])"""
    r = fmt.CODECS[TIMELINE_SAMPLES].decode(payload)
    labels = r.labels
    rows = []
    # samples are plain rows, fields in table order (layout.py)
    for mono, kind, region, label, _reserved, heap, heap_mpi, rss, pss in r.samples:
        if label != fmt.NO_LABEL and label >= len(labels):
            raise Malformed(f"sample label {label} but {len(labels)} labels")
        rows.append((mono, kind, region, None if label == fmt.NO_LABEL else labels[label],
                     heap, heap_mpi, rss, pss))
    head = dict(interval_ns=r.interval_ns, caliper_ns=r.caliper_ns, heap_measure=r.heap_measure,
                calipers_taken=r.calipers_taken, calipers_skipped=r.calipers_skipped,
                mpi_rss_delta=r.mpi_rss_delta, mpi_pss_delta=r.mpi_pss_delta,
                samples_lost=r.samples_lost)
    return head, rows


def build(chunk_list: Iterable[Tuple[int, int, bytes]], path: str, warnings: List[str]):
    """Timeline from (type, offset, payload) chunks in file order, or None if there are
    no TIMELINE chunks. Malformed payloads raise a one-line HeapscopeError."""
    region_rows: Dict[int, Tuple[int, str]] = {}
    batches = []
    owns: List[tuple] = []   # per TIMELINE_RECORDER chunk: the recorder's bytes per sample
    peaks = None      # the last HEAP_PEAK: the exact peaks as of the last flush
    for ctype, offset, payload in chunk_list:
        try:
            if ctype == TIMELINE_REGIONS:
                for rid, parent, name in decode.regions(payload):
                    region_rows[rid] = (parent, name)
            elif ctype == TIMELINE_SAMPLES:
                batches.append(decode_samples(payload))
            elif ctype == RECORDER:
                r = fmt.CODECS[RECORDER].decode(payload)
                if len(owns) >= len(batches) or r.count != len(batches[len(owns)][1]):
                    raise Malformed(f"{r.count} samples, but the TIMELINE chunk before it has "
                                    f"{len(batches[len(owns)][1]) if len(owns) < len(batches) else 0}")
                if any(v < -1 for v in r.recorder_bytes):
                    raise Malformed("a negative byte count")
                owns.append(tuple(r.recorder_bytes))
            elif ctype == HEAP_PEAK:
                peaks = fmt.CODECS[HEAP_PEAK].decode(payload)
                if min(peaks.peak_bytes, peaks.peak_component_bytes, peaks.peak_app_bytes) < 0:
                    raise Malformed("a negative heap peak")
        except Malformed as exc:
            raise HeapscopeError(f"{path}: malformed {fmt.chunk_name(ctype)} chunk at byte "
                                 f"{offset}: {exc}") from None
    if not batches:
        return None
    region_rows.setdefault(0, (fmt.NO_PARENT, ""))
    rows = [(rid, parent, name) for rid, (parent, name) in region_rows.items()]
    try:
        paths = decode.region_paths(rows)
    except Malformed as exc:
        raise HeapscopeError(f"{path}: malformed TIMELINE_REGIONS chunks: {exc}") from None

    def region_path(rid: int) -> str:
        if rid not in paths:
            paths[rid] = f"(region {rid})"
            warnings.append(f"timeline samples refer to region {rid}, which no TIMELINE_REGIONS "
                            f"chunk defines")
        return paths[rid]

    samples = []
    kind_names: Dict[int, str] = {}      # (names and paths looked up once, not per sample:
    rpaths: Dict[int, str] = {}          #  a job report reads 10^3 files of 10^3 samples)
    for i, (_head, batch) in enumerate(batches):
        # (a file cut short may end with a TIMELINE whose TIMELINE_RECORDER was lost)
        own = owns[i] if i < len(owns) else (-1,) * len(batch)
        for (mono, kind, rid, label, heap, heap_mpi, rss, pss), mine in zip(batch, own):
            kname = kind_names.get(kind) or kind_names.setdefault(kind, fmt.sample_kind_name(kind))
            rpath = rpaths.get(rid) or rpaths.setdefault(rid, region_path(rid))
            if kname in ("region-begin", "region-end"):
                label = region_rows.get(rid, (0, rpath))[1]
            if mine >= 0:
                rss = rss - mine if rss >= 0 else rss
                pss = pss - mine if pss >= 0 else pss
            samples.append(Sample(mono, kname, rpath, label or "", heap, heap_mpi, rss, pss, mine))
    samples.sort(key=lambda s: s.mono_ns)   # several threads append: order by time
    last = batches[-1][0]
    if last["samples_lost"]:
        n = last["samples_lost"]
        warnings.append(f"{n:,} timeline sample{'s' if n != 1 else ''} lost (sample buffer full "
                        f"or the file not writable)")
    measure = last["heap_measure"]
    return Timeline(interval_ns=last["interval_ns"],
                    heap_measure=fmt.heap_measure_name(measure),
                    samples=samples,
                    mpi_rss_delta_bytes=last["mpi_rss_delta"],
                    mpi_pss_delta_bytes=last["mpi_pss_delta"],
                    calipers_taken=last["calipers_taken"],
                    calipers_skipped=last["calipers_skipped"],
                    heap_peak=None if peaks is None else peaks.peak_bytes,
                    heap_peak_mpi=None if peaks is None else peaks.peak_component_bytes,
                    heap_peak_app=None if peaks is None else peaks.peak_app_bytes)


def timeline_of(file_chunks: Dict[int, List[bytes]], path: str, warnings: List[str]):
    """For read_profile: the Timeline from Profile.file_chunks (chunks outside snapshots)."""
    chunk_list = [(t, -1, payload) for t in STREAM_TYPES
                  for payload in file_chunks.get(t, [])]
    return build(chunk_list, path, warnings)


def read_timeline(path) -> Profile:
    """A profile's process description and timeline, whether or not it holds a complete
    snapshot (the counts are not read: use read_profile for them)."""
    path = str(path)
    data = framing.read_file(path)
    # an event trace's chunks are not read here (their crcs: when replayed)
    frame = framing.parse(data, path, unchecked={fmt.TRACE_EVENTS})
    profile = Profile(path=path, start_real_ns=frame.start_real_ns)
    process = next((c for c in frame.chunks if c.type == fmt.CHUNK_PROCESS), None)
    if process is None:
        raise HeapscopeError(f"{path}: not a complete profile: no PROCESS chunk")
    try:
        for key, value in decode.process(process.payload).items():
            setattr(profile, key, value)
    except Malformed as exc:
        raise HeapscopeError(f"{path}: malformed PROCESS chunk at byte {process.offset}: {exc}") from None
    if frame.header.write_failed:
        profile.complete = False
        profile.warnings.append(frame.header.write_failure())
    if frame.corrupt:
        profile.complete = False
        profile.warnings.append(f"{frame.corrupt}: timeline read up to there")
    elif frame.truncated_at is not None:
        profile.complete = False
        profile.warnings.append(f"file cut short at byte {frame.truncated_at} (a chunk being "
                                f"written): timeline read up to there")
    if not any(c.type == fmt.CHUNK_SNAPSHOT_END for c in frame.chunks):
        profile.complete = False
        profile.warnings.append(NO_SNAPSHOT_WARNING)
    profile.timeline = build(((c.type, c.offset, c.payload) for c in frame.chunks
                              if c.type in STREAM_TYPES), path,
                             profile.warnings)
    return profile

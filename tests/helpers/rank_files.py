"""Rank files as the job file sees them (tests/mpi): cut after the dump at MPI_Finalize."""
from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from heapscope.profile.framing import parse, read_file


def at_finalize(path, tmp):
    """The rank file read up to the end of its first snapshot (the dump at MPI_Finalize),
    through a copy cut there in `tmp`."""
    data = read_file(str(path))
    frame = parse(data, str(path))
    begin = next(c for c in frame.chunks if c.type == fmt.CHUNK_SNAPSHOT_BEGIN)
    end = next(c for c in frame.chunks if c.type == fmt.CHUNK_SNAPSHOT_END)
    assert fmt.reason_name(begin.payload[4]) == "api"
    cut = tmp / path.name
    cut.write_bytes(data[:end.offset + fmt.CHUNK_HEADER_SIZE + len(end.payload)])
    return read_profile(cut)

"""The fast paths of reading (profile/word_rows.py, profile/ordering.py) against the
format table's codec and Python's own sort, on tables shaped as the recorder writes
them: every row the codec reads is read the same; a payload the codec refuses is
refused with the codec's words; every order is sorted()'s."""
import random
import struct

import pytest

from heapscope.profile import decode, ordering, tracking, word_rows
from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from helpers.profile_builder import payload

rng = random.Random(20261127)
ADDRESSES = [0x400000 + 16 * i for i in range(40)] + [0x7F0000000000 + 8 * i for i in range(20)]


def stack_rows(n):
    """n STACK_TYPES rows: few regions and sizes, frames that share prefixes, depth 0-9."""
    return [dict(region=rng.choice([0, 1, 7]), size=rng.choice([8, 16, 24, 2 ** 40]),
                 count=rng.choice([1, 1, 2, 5, 2 ** 63]), bytes=rng.randrange(2 ** 64),
                 frames=[rng.choice(ADDRESSES[:8]) for _ in range(rng.randrange(10))])
            for _ in range(n)]


def track_rows(n):
    rows = []
    for _ in range(n):
        time_mask = rng.choice([0, 1, 1 << 63, rng.randrange(2 ** 64)])
        between_mask = rng.choice([0, 3, rng.randrange(2 ** 64)])
        allocs = rng.randrange(1, 1000)
        rows.append(dict(region=rng.choice([0, 2]), size=rng.choice([16, 48]), allocs=allocs,
                         frees=rng.randrange(allocs + 1), temporaries=rng.randrange(allocs + 1),
                         live_at_peak=rng.randrange(allocs + 1), live_at_end=rng.randrange(allocs + 1),
                         extra_bytes=rng.randrange(2 ** 32), time_mask=time_mask,
                         between_mask=between_mask,
                         time_bins=[rng.randrange(1, 9) for _ in range(bin(time_mask).count("1"))],
                         between_bins=[rng.randrange(1, 9) for _ in range(bin(between_mask).count("1"))],
                         frames=[rng.choice(ADDRESSES) for _ in range(rng.randrange(6))]))
    return rows


def by_codec(name, data):
    return fmt.CODECS[fmt.TABLE.chunk(name).id].decode(data)


def test_stack_types_are_read_as_the_codec_reads_them():
    data = payload("STACK_TYPES", types=stack_rows(500))
    fast = word_rows.stack_rows(data)
    assert fast is not None and len(fast) == 500
    assert fast == [(t.region, t.size, t.count, t.bytes, tuple(t.frames))
                    for t in by_codec("STACK_TYPES", data).types]
    assert word_rows.stack_rows(payload("STACK_TYPES", types=[])) == []


def test_track_types_are_read_as_the_codec_reads_them():
    data = payload("TRACK_TYPES", rows=track_rows(400))
    fast = word_rows.track_rows(data)
    slow = [(r.region, r.size, tuple(r.frames), r.allocs, r.frees, r.temporaries, r.live_at_peak,
             r.live_at_end, r.extra_bytes, tracking._hist(r.time_mask, r.time_bins),
             tracking._hist(r.between_mask, r.between_bins))
            for r in by_codec("TRACK_TYPES", data).rows]
    assert fast == slow
    assert all(len(row[9]) == len(row[10]) == 64 for row in fast)


@pytest.mark.parametrize("cut", [1, 3, 8, 12])
def test_a_payload_cut_short_is_refused_in_the_codecs_words(cut):
    for name, decoder, rows in (("STACK_TYPES", decode.stack_rows, dict(types=stack_rows(20))),
                                ("TRACK_TYPES", tracking.type_rows, dict(rows=track_rows(20)))):
        data = payload(name, **rows)[:-cut]
        with pytest.raises(Malformed) as fast:
            decoder(data)
        with pytest.raises(Malformed) as codec:
            by_codec(name, data)
        assert str(fast.value) == str(codec.value)


def test_bytes_after_the_last_row_or_a_count_too_high_are_refused():
    data = payload("STACK_TYPES", types=stack_rows(5))
    for bad in (data + bytes(8), struct.pack("<I", 6) + data[4:]):
        assert word_rows.stack_rows(bad) is None
        with pytest.raises(Malformed):
            decode.stack_rows(bad)


def test_order_is_sorteds_with_ties_prefixes_and_counts_past_64_bits():
    keys = [(r["count"], f"r{r['region']}", r["size"], tuple(r["frames"])) for r in stack_rows(3000)]
    keys += [(1, "r0", 8, ()), (1, "r0", 8, (ADDRESSES[0],)), (1, "r0", 8, (ADDRESSES[0], 1))]
    expected = sorted(range(len(keys)), key=lambda i: (-keys[i][0],) + keys[i][1:])
    assert ordering.most_first(keys) == expected
    keys.append((2 ** 64 + 5, "r1", 8, ()))            # a sum of counts: no longer 64 bits
    assert ordering.most_first(keys) == sorted(range(len(keys)), key=lambda i: (-keys[i][0],) + keys[i][1:])

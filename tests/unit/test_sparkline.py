"""render.text.sparkline, the one sparkline of timelines, the job report and lifetime
histograms: both scales, the reduction to a width, absent values."""
from heapscope.render.text import ASCII_BLOCKS, sparkline


def test_zero_based_scale_rounds_up_so_no_value_vanishes():
    assert sparkline([0, 1, 4, 8]) == " ▁▄█"
    assert sparkline([1, 1000]) == "▁█"          # 1/1000 still shows as the lowest block
    assert sparkline([3, 3], top=12) == "▂▂"      # one scale across panels
    assert sparkline([]) == ""


def test_low_based_scale_shows_a_change_on_a_large_base():
    assert sparkline([1000, 1004, 1008], low=1000) == "▁▄█"
    assert sparkline([None, 5, 5], low=5) == " ▁▁"   # no rise: the lowest block
    assert sparkline([0, 7], low=0, blocks=ASCII_BLOCKS) == "_#"


def test_width_keeps_each_cells_peak():
    values = [0] * 120
    values[61] = 9
    line = sparkline(values, width=60)
    assert len(line) == 60 and line[30] == "█" and line.count(" ") == 59


def test_fewer_values_than_width_are_one_cell_each():
    # the job report drew the first value repeated when it had fewer bins than columns
    assert sparkline([1, 2, 3, 4, 5, 6, 7, 8], width=60) == "▁▂▃▄▅▆▇█"

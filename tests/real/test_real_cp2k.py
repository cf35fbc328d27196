"""CP2K 2023.1 (Debian 12, cp2k.psmp), Quickstep energy of one water molecule
(inputs/h2o.inp; basis and pseudopotentials from cp2k-data), one OpenMP thread.

Busiest size: 272 bytes, 118,617 blocks made by CP2K (10% of about 1,236,900), and one or
two more inside MPI_Init (Open MPI's `opal_argv_append_nosize`, and, where the environment
is short, as a debootstrapped root's, its `opal_setenv` growing `environ` to 272 bytes).
cp2k.psmp is stripped (20 dynamic symbols, no -dbgsym here): functions are told apart by
their .eh_frame ranges and the source-file names their error messages carry. Nearly all
(118,582 through `val_create`) are a `val_type`
(input/input_val_types.F, `val_create`) made by `keyword_create`
(input/input_keyword_types.F) for a keyword's default value while CP2K builds the
description of its whole input language at start-up, whatever the input. 65,176 (54.9%)
come through `libxc_add_sections` (xc/xc_libxc.F:205-288), which adds one section with
2 + n_param keywords for every functional LibXC has, each time an XC_FUNCTIONAL section
is described; 35,333 (29.8%) through `cp_print_key_section_create`
(input/cp_output_handling.F), the print keys. The fix target is libxc_add_sections (the
loop that repeats; keyword_create and val_create pass each call to one block); a ranking
of a program without symbols names it by module and offset."""
import pytest

from helpers.real_programs import (allocating_frames, busiest, callgraph, copy_inputs,
                                   first_ranked_offset, function_range, record_as_a_user,
                                   require_version, size_counts, stacks, through, within)

pytestmark = pytest.mark.real
CP2K = "/usr/bin/cp2k.psmp"
LIBXC_ADD_SECTIONS = (0x2193260, 0x2193d9c)     # from .eh_frame
PRINT_KEY_SECTION = (0x2462ba0, 0x2464197)
KEYWORD_CREATE = (0x244c1a0, 0x244efab)
ENV = {"OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def cp2k(tmp_path_factory):
    require_version("cp2k", "2023.1-2")
    tmp = tmp_path_factory.mktemp("cp2k")
    copy_inputs(tmp, "h2o.inp")
    cmd = ["cp2k.psmp", "-i", "h2o.inp"]
    res = record_as_a_user(tmp, cmd, 272, env=ENV)
    assert "ENERGY| Total FORCE_EVAL ( QS ) energy" in res.stdout
    return tmp


def test_busiest_size_is_272_bytes(heapscope, cp2k):
    counts = size_counts(heapscope, cp2k / "counts")
    assert busiest(counts)[0] == 272
    # the program's own, exact; MPI_Init's 272-byte blocks depend on the environment's size
    assert size_counts(heapscope, cp2k / "counts", "(none)")[272] == 118_617
    assert 1 <= size_counts(heapscope, cp2k / "counts", "[MPI]")[272] <= 2


def test_keyword_defaults_of_the_input_description(heapscope, cp2k):
    doc = stacks(heapscope, cp2k / "stacks", 272)
    frames = allocating_frames(doc)
    # (118,617, 118,617, 79,090 and 39,507 when every ?? frame of the program was one
    # frame and the merged stack types kept the frames of the first of them)
    assert frames[("?? (cp2k.psmp+0x24302c1)", "cp2k.psmp")] == 118_582
    assert function_range(CP2K, 0x24302c1) == (0x2430030, 0x24321ea)   # val_create
    assert through(doc, within(CP2K, *KEYWORD_CREATE)) == 118_555
    assert through(doc, within(CP2K, *LIBXC_ADD_SECTIONS)) == 65_176
    assert through(doc, within(CP2K, *PRINT_KEY_SECTION)) == 35_333


def test_fix_target_is_libxc_add_sections_by_offset(heapscope, cp2k):
    doc = callgraph(heapscope, cp2k / "stacks", 272)
    first = first_ranked_offset(doc, "cp2k.psmp")
    assert first is not None and LIBXC_ADD_SECTIONS[0] <= first < LIBXC_ADD_SECTIONS[1], \
        doc["ranking"][0]["function"]

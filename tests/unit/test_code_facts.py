"""symbolize.code: what the ranking reads of a function's machine code (docs/ranking.md,
rule 3), on functions of known shapes (tests/programs/code_shapes.c) built -O0 and -O2,
and on the same program stripped (the functions found by their call-frame information)."""
import subprocess

import pytest

from conftest import PROGRAMS, require
from heapscope.symbolize.code import function_code


def symbols(program):
    out = subprocess.run(["nm", program], capture_output=True, text=True, check=True).stdout
    return {parts[2]: int(parts[0], 16) for parts in map(str.split, out.splitlines())
            if len(parts) == 3}


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_the_code_tells_a_wrapper_from_kernels(tmp_path, opt):
    require("gcc", "strip")
    program = tmp_path / "shapes"
    subprocess.run(["gcc", opt, "-g", "-o", program, PROGRAMS / "code_shapes.c"], check=True)
    bare = tmp_path / "shapes_stripped"
    subprocess.run(["strip", "--strip-all", "-o", bare, program], check=True)
    at = symbols(program)
    for binary in (program, bare):
        facts = {name: function_code(str(binary), at[name] + 1)
                 for name in ("take", "fill", "pass_on", "own_temporary", "long_one")}
        assert all(f is not None and f.start == at[name] for name, f in facts.items())
        # malloc on the way back; perror and exit are its error path
        assert (facts["take"].small, facts["take"].loops, facts["take"].calls) == (
            True, False, ("malloc",)), opt
        assert facts["fill"].loops and facts["fill"].calls == ("malloc",)
        # keep() is the program's own function: not the allocator
        assert not facts["pass_on"].loops and facts["pass_on"].calls == ("?", "malloc")
        assert facts["own_temporary"].calls == ("free", "malloc")
        assert not facts["long_one"].small

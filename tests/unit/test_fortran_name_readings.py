"""symbolize.names.fortran_name: each compiler's linkage name of a Fortran module
procedure read back as module::procedure, the main program's as "main program"; any
other name (C, C++, a Fortran external procedure) left alone."""
import pytest

from heapscope.symbolize.names import fortran_name, short_name


@pytest.mark.parametrize("symbol, name", [
    ("__mesh_mod_MOD_build", "mesh_mod::build"),                        # gfortran
    ("__mesh_mod_MOD_build.constprop.0", "mesh_mod::build.constprop.0"),
    ("__solver_MOD_step._omp_fn.2", "solver::step._omp_fn.2"),
    ("__m_MOD___copy_m_Cell", "m::__copy_m_Cell"),                      # gfortran's generated copy
    ("mesh_mod_mp_build_", "mesh_mod::build"),                          # Intel
    ("my_mp_mod_mp_run_", "my::mod_mp_run"),                            # (the first _mp_ splits)
    ("_QMmesh_modPbuild", "mesh_mod::build"),                           # LLVM flang
    ("_QMmeshSrefinePsplit", "mesh::refine::split"),                    # a submodule's
    ("_QMmeshFbuildPinner", "mesh::build::inner"),                      # a host's internal one
    ("_QFsolvePhelper", "solve::helper"),
    ("_QPsolve", "solve"),
    ("MAIN__", "main program"),                                         # gfortran, Intel
    ("_QQmain", "main program"),                                        # LLVM flang
])
def test_fortran_symbols_read_as_fortran(symbol, name):
    assert fortran_name(symbol) == name


@pytest.mark.parametrize("symbol", [
    "main", "build_", "mesh_mod_build_", "__libc_start_main", "_ZN4mesh5buildEv",
    "std::vector<int>::push_back(int const&)", "foo_mp_bar", "_QQclX9a37c0", "__MOD_x", "??",
])
def test_other_names_are_left_alone(symbol):
    assert fortran_name(symbol) is None


def test_the_main_programs_source_file_is_no_parameter_list():
    assert short_name("main program (solver.f90)") == "main program (solver.f90)"

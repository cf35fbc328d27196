"""Short C++ names in text reports: template arguments and parameter lists elided."""
import pytest

from heapscope.symbolize.names import short_name


@pytest.mark.parametrize("full, short", [
    ("std::vector<std::vector<double, std::allocator<double> >, std::allocator<std::vector<double, "
     "std::allocator<double> > > >::_M_fill_initialize(unsigned long, std::vector<double, "
     "std::allocator<double> > const&)", "std::vector<...>::_M_fill_initialize(...)"),
    ("void std::_Construct<std::vector<double>, std::vector<double> const&>(std::vector<double>*)",
     "void std::_Construct<...>(...)"),
    ("Mesh::getElem(int) const", "Mesh::getElem(...) const"),
    ("main", "main"),
    ("foo()", "foo()"),
    ("operator new(unsigned long)", "operator new(...)"),
    ("std::ostream::operator<<(int)", "std::ostream::operator<<(...)"),
    ("Vec::operator<(Vec const&) const", "Vec::operator<(...) const"),
    ("Functor::operator()(int)", "Functor::operator()(...)"),
    ("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper(...)"),
    ("broken<name(", "broken<name("),
])
def test_short_name(full, short):
    assert short_name(full) == short

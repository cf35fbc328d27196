// Symbolizer test program: prints return addresses taken at known source lines,
// its load bias and its executable address ranges, for tests/e2e/test_symbolize.py.
// Each call site the test checks carries a LINE-MARK comment; the test finds the line.
#include <link.h>
#include <cstdio>

static void *probe_result;

extern "C" __attribute__((noinline)) void probe(void) {
    probe_result = __builtin_return_address(0);
}

namespace solver {
template <typename T>
struct Matrix {
    T value;
    __attribute__((noinline)) void multiply() {
        probe();  // LINE-MARK template-call
        value = value * 2;
    }
};
}  // namespace solver

static inline __attribute__((always_inline)) void inlined_helper(int n) {
    if (n > 0)
        probe();  // LINE-MARK inlined-call
}

__attribute__((noinline)) void outer_function(int n) {
    inlined_helper(n);  // LINE-MARK outer-call
}

extern "C" __attribute__((noinline)) void plain_c_function(void) {
    probe();  // LINE-MARK c-call
}

static int print_ranges(struct dl_phdr_info *info, size_t, void *) {
    if (info->dlpi_name && info->dlpi_name[0])
        return 0;  // the main program comes first, with an empty name
    printf("bias %#lx\n", (unsigned long)info->dlpi_addr);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
            printf("range %#lx %#lx\n", (unsigned long)(info->dlpi_addr + ph->p_vaddr),
                   (unsigned long)(info->dlpi_addr + ph->p_vaddr + ph->p_memsz));
    }
    return 1;
}

int main() {
    dl_iterate_phdr(print_ranges, nullptr);
    solver::Matrix<double> m{1.5};
    m.multiply();
    printf("template-call %p\n", probe_result);
    outer_function(3);
    printf("inlined-call %p\n", probe_result);
    plain_c_function();
    printf("c-call %p\n", probe_result);
    return 0;
}

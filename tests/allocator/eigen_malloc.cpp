// Eigen's allocator takes malloc's 16-byte alignment for granted on glibc x86-64 and
// asserts it (Memory.h: "System's malloc returned an unaligned pointer"): gmsh from
// Debian aborted under hsmalloc while malloc took the 8-aligned packed classes. Every
// size 16..256 through Eigen::internal::aligned_malloc, 32 blocks each (8-aligned
// blocks fall on both halves of 16 bytes), then vectors of 3 and 5 doubles.
// Prints "ok <sizes>".
#undef NDEBUG
#include <Eigen/Core>
#include <cstdio>

int main() {
  long sizes = 0;
  for (std::size_t n = 16; n <= 256; n++, sizes++) {
    void *p[32];
    for (auto &q : p) q = Eigen::internal::aligned_malloc(n);
    for (auto &q : p) Eigen::internal::aligned_free(q);
  }
  Eigen::VectorXd a = Eigen::VectorXd::Ones(3), b = Eigen::VectorXd::Ones(5);
  std::printf("ok %ld %.0f\n", sizes, a.sum() + b.sum());
  return 0;
}

// Every C++ operator new/delete variant, the new-handler loop and std::bad_alloc.
// Prints "ok <checks> handler_calls=<n>"; exits 1 naming the first failed check.
// With argument "owned", also asserts that the memory comes from hsmalloc.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

static int checks;
static int (*owns)(const void *);
static int handler_calls;

#define CHECK(cond)                                                              \
  do {                                                                           \
    checks++;                                                                    \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);    \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)
#define OWNED(p) CHECK(owns == nullptr || owns(p))

struct alignas(256) Wide { char bytes[256]; };

static void handler() {
  handler_calls++;
  if (handler_calls == 3) std::set_new_handler(nullptr);   // give up: new must throw
}

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "owned") == 0) {
    owns = reinterpret_cast<int (*)(const void *)>(dlsym(RTLD_DEFAULT, "hsmalloc_owns"));
    CHECK(owns != nullptr);
  }
  // plain, array, sized delete
  int *one = new int(42);
  OWNED(one);
  CHECK(*one == 42);
  delete one;
  char *arr = new char[1000];
  OWNED(arr);
  std::memset(arr, 1, 1000);
  delete[] arr;
  ::operator delete(::operator new(64), 64);
  ::operator delete[](::operator new[](640), 640);
  // nothrow
  void *nt = ::operator new(100, std::nothrow);
  CHECK(nt != nullptr);
  OWNED(nt);
  ::operator delete(nt, std::nothrow);
  void *nta = ::operator new[](100, std::nothrow);
  CHECK(nta != nullptr);
  ::operator delete[](nta, std::nothrow);
  // aligned (C++17), every form
  for (std::size_t a = 16; a <= (std::size_t(1) << 20); a <<= 1) {
    std::align_val_t al{a};
    void *p = ::operator new(a * 3, al);
    CHECK((reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0);
    OWNED(p);
    ::operator delete(p, al);
    p = ::operator new[](100, al);
    CHECK((reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0);
    ::operator delete[](p, 100, al);
    p = ::operator new(7, al, std::nothrow);
    CHECK(p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0);
    ::operator delete(p, al, std::nothrow);
    p = ::operator new[](7, al, std::nothrow);
    CHECK(p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0);
    ::operator delete[](p, al, std::nothrow);
    p = ::operator new(a, al);
    ::operator delete(p, a, al);
  }
  Wide *w = new Wide[3];
  CHECK((reinterpret_cast<std::uintptr_t>(w) & 255) == 0);
  delete[] w;
  // containers
  std::vector<std::string> v;
  for (int i = 0; i < 10000; i++) v.push_back(std::string(i % 100, 'x') + std::to_string(i));
  CHECK(v[9999] == std::string(99, 'x') + "9999");
  // failure: nothrow gives nullptr, throwing new runs the handler then throws
  CHECK(::operator new(SIZE_MAX / 2, std::nothrow) == nullptr);
  CHECK(::operator new[](SIZE_MAX / 2, std::align_val_t{64}, std::nothrow) == nullptr);
  bool thrown = false;
  try {
    void *p = ::operator new(SIZE_MAX / 2);
    std::printf("unexpected %p\n", p);
  } catch (const std::bad_alloc &) {
    thrown = true;
  }
  CHECK(thrown);
  std::set_new_handler(handler);
  thrown = false;
  try {
    void *p = ::operator new[](SIZE_MAX / 2, std::align_val_t{4096});
    std::printf("unexpected %p\n", p);
  } catch (const std::bad_alloc &) {
    thrown = true;
  }
  CHECK(thrown);
  CHECK(handler_calls == 3);
  std::printf("ok %d handler_calls=%d\n", checks, handler_calls);
  return 0;
}

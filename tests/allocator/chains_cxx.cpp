// chains_cxx.cpp — hsmalloc's chains from C++ (hsmalloc_chain.hpp): std::pmr containers
// on a chain_resource, standard containers with chain_allocator, the default switch
// around std::string and new, and a full chain failing `new` with std::bad_alloc after
// the new-handler. Linked with -lhsmalloc; prints "ok <checks>".
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "hsmalloc_chain.hpp"

static long checks;
#define CHECK(cond, what)                                                          \
  do {                                                                             \
    checks++;                                                                      \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "FAILED %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, what); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

static char *buf;
static const size_t buf_size = 4 << 20;
static bool inside(const void *p) {
  return (const char *)p >= buf && (const char *)p < buf + buf_size;
}

static int handler_calls;
static void handler() {
  handler_calls++;
  std::set_new_handler(nullptr);  // the next failure throws
}

int main() {
  buf = (char *)mmap(nullptr, buf_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(buf != MAP_FAILED, "mmap");
  {
    hsmalloc::chain_resource res(buf, buf_size);
    std::pmr::vector<std::pmr::string> words(&res);
    std::pmr::map<int, std::pmr::string> byid(&res);
    for (int i = 0; i < 2000; i++) {
      words.emplace_back("a string longer than the small-string buffer #" + std::to_string(i));
      byid.emplace(i, words.back());
    }
    CHECK(inside(words.data()), "pmr vector storage in the chain");
    CHECK(inside(words[1999].data()) && inside(byid.at(7).data()), "pmr strings in the chain");
    CHECK(words[1234] == "a string longer than the small-string buffer #1234", "contents");
    CHECK(byid.at(1999) == words[1999], "map contents");
    hsmalloc_stats_t st;
    hsmalloc_chain_stats(res.chain(), &st);
    CHECK(st.allocs >= 6000, "the chain counted the containers' allocations");
    byid.clear();
    words.clear();
    words.shrink_to_fit();
    hsmalloc_chain_stats(res.chain(), &st);
    CHECK(st.allocs == st.frees, "containers gave every block back");
  }
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf, buf_size, 0);
  CHECK(c != nullptr, "the resource destroyed its chain: the buffer is free again");
  {
    hsmalloc::chain_allocator<double> alloc(c);
    std::vector<double, hsmalloc::chain_allocator<double>> v(alloc);
    for (int i = 0; i < 10000; i++) v.push_back(i * 0.5);
    CHECK(inside(v.data()) && v[9999] == 4999.5, "vector with chain_allocator");
    std::list<int, hsmalloc::chain_allocator<int>> l(alloc);
    for (int i = 0; i < 100; i++) l.push_back(i);
    CHECK(inside(&l.back()) && l.back() == 99, "list nodes (rebound allocator) in the chain");
  }
  {
    hsmalloc::default_scope scope(c);
    std::string s(200, 'x');
    int *arr = new int[1000];
    std::vector<int> plain(5000, 3);
    CHECK(inside(s.data()) && inside(arr) && inside(plain.data()), "std::string, new[], vector in scope");
    delete[] arr;
    hsmalloc_chain_t *os = hsmalloc_chain_create(nullptr, 0, 0);
    {
      hsmalloc::default_scope inner(os);
      std::string t(300, 'y');
      CHECK(!inside(t.data()) && hsmalloc_owns(t.data()), "the inner scope's chain");
    }
    hsmalloc_chain_destroy(os);
    std::string u(300, 'z');
    CHECK(inside(u.data()), "back to the outer chain");
    // out of memory in scope: the new-handler, then std::bad_alloc; nothing elsewhere
    std::set_new_handler(handler);
    bool threw = false;
    try {
      char *huge = new char[8 << 20];
      huge[0] = 1;
    } catch (const std::bad_alloc &) {
      threw = true;
    }
    CHECK(threw && handler_calls == 1, "a full chain: new-handler once, then bad_alloc");
    char *n = new (std::nothrow) char[8 << 20];
    CHECK(n == nullptr, "nothrow new: nullptr");
  }
  std::string after(300, 'w');
  CHECK(!inside(after.data()), "after the scope: the heap");
  hsmalloc_chain_destroy(c);
  std::printf("ok %ld\n", checks);
  return 0;
}

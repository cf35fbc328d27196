// hsmalloc_chain.hpp: C++ over hsmalloc's chains (hsmalloc.h), header only (C++17).
//
//   hsmalloc::chain_resource   a std::pmr::memory_resource over a chain, so that
//                              std::pmr containers live there
//   hsmalloc::chain_allocator  a standard allocator (std::vector<T, chain_allocator<T>>)
//   hsmalloc::default_scope    the chain is this thread's default (malloc, new, library
//                              code) until the scope ends
//
// A chain that is full makes allocate() throw std::bad_alloc; nothing ever falls back to
// other memory. Deallocation frees into the chain; a reset frees everything at once.
#ifndef HSMALLOC_CHAIN_HPP
#define HSMALLOC_CHAIN_HPP

#include <cstddef>
#include <memory_resource>
#include <new>

#include "hsmalloc.h"

namespace hsmalloc {

inline void *chain_allocate(hsmalloc_chain_t *c, std::size_t bytes, std::size_t align) {
  // (hsmalloc_chain_malloc aligns some sizes to 8 only: ask for more when T needs it)
  void *p = align <= 8 ? hsmalloc_chain_malloc(c, bytes)
                       : hsmalloc_chain_aligned_alloc(c, align, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Either wraps a chain the caller keeps (and destroys), or creates one and destroys it
// with itself.
class chain_resource : public std::pmr::memory_resource {
public:
  explicit chain_resource(hsmalloc_chain_t *c) noexcept : chain_(c), owned_(false) {}
  // buf nullptr: OS memory with `size` as soft limit (0: none). Throws std::bad_alloc
  // when the chain cannot be made (errno says why).
  chain_resource(void *buf, std::size_t size, unsigned flags = 0)
      : chain_(hsmalloc_chain_create(buf, size, flags)), owned_(true) {
    if (chain_ == nullptr) throw std::bad_alloc();
  }
  chain_resource(const chain_resource &) = delete;
  chain_resource &operator=(const chain_resource &) = delete;
  ~chain_resource() override {
    if (owned_) hsmalloc_chain_destroy(chain_);
  }

  hsmalloc_chain_t *chain() const noexcept { return chain_; }
  // Free-all: every block, including those of containers still alive (which must not be
  // used afterwards: release or reset them first).
  void reset() noexcept { hsmalloc_chain_reset(chain_); }

protected:
  void *do_allocate(std::size_t bytes, std::size_t align) override {
    return chain_allocate(chain_, bytes, align);
  }
  void do_deallocate(void *p, std::size_t, std::size_t) override { hsmalloc_chain_free(chain_, p); }
  bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override {
    auto *o = dynamic_cast<const chain_resource *>(&other);
    return o != nullptr && o->chain_ == chain_;
  }

private:
  hsmalloc_chain_t *chain_;
  bool owned_;
};

template <class T>
class chain_allocator {
public:
  using value_type = T;
  explicit chain_allocator(hsmalloc_chain_t *c) noexcept : chain_(c) {}
  template <class U>
  chain_allocator(const chain_allocator<U> &other) noexcept : chain_(other.chain()) {}

  T *allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T *>(chain_allocate(chain_, n * sizeof(T), alignof(T)));
  }
  void deallocate(T *p, std::size_t) noexcept { hsmalloc_chain_free(chain_, p); }
  hsmalloc_chain_t *chain() const noexcept { return chain_; }

  template <class U>
  bool operator==(const chain_allocator<U> &o) const noexcept { return chain_ == o.chain(); }
  template <class U>
  bool operator!=(const chain_allocator<U> &o) const noexcept { return chain_ != o.chain(); }

private:
  hsmalloc_chain_t *chain_;
};

// The chain is the calling thread's default while the scope lives (nestable).
class default_scope {
public:
  explicit default_scope(hsmalloc_chain_t *c) noexcept : previous_(hsmalloc_chain_set_default(c)) {}
  default_scope(const default_scope &) = delete;
  default_scope &operator=(const default_scope &) = delete;
  ~default_scope() { hsmalloc_chain_set_default(previous_); }

private:
  hsmalloc_chain_t *previous_;
};

}  // namespace hsmalloc

#endif

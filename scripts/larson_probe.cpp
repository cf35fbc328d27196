// larson's loop (mimalloc-bench's bench/larson) with its factors separable, to tell
// where an allocator's CPU per operation goes: two chains of threads, each thread
// freeing a random slot of its chain's array and putting a new block of 8 .. 8 + MAX - 1
// bytes there, then (after OPS operations) starting its successor and exiting, as
// larson's workers do. Run it under each allocator (LD_PRELOAD) and compare.
//
//   g++ -O2 -pthread -o /tmp/larson_probe scripts/larson_probe.cpp
//   LD_PRELOAD=LIB /tmp/larson_probe SECONDS OPS SLOTS MAX WARMUP_IN_THREAD
//     defaults 2 500000 5000 992 0 (larson's own: a thread lives 500,000 operations;
//     OPS 1000000000000: threads never exit; SLOTS 500: the blocks fit in L2; MAX 1:
//     one size, one class; WARMUP_IN_THREAD 1: the first blocks are made by a thread
//     that exits, not by the main thread, which larson leaves idle for the whole run)
//
// Prints "ops N cpu_ns_per_op X pages4k P": the operations done, the process's CPU
// time (user + system) per operation, and the distinct 4 KiB pages the live blocks lie
// in at the end.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <set>

static const int kChains = 2;
static int slots = 5000, max_size = 992;
static long ops_per_thread = 500000;
static char **blocks;
static std::atomic<int> stop{0}, stopped{0};
static std::atomic<long> ops{0};

struct Chain {
  int index;
  uint64_t seed;
};
static Chain chains[kChains];

static uint64_t next_random(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 33;
}

static void *worker(void *arg) {
  Chain *c = static_cast<Chain *>(arg);
  char **slot = blocks + (size_t)c->index * slots;
  long done = 0;
  for (; done < ops_per_thread; done++) {
    if (stop.load(std::memory_order_relaxed)) break;
    size_t victim = next_random(&c->seed) % slots;
    delete[] slot[victim];
    slot[victim] = new char[8 + next_random(&c->seed) % max_size];
    slot[victim][0] = 'a';
  }
  ops.fetch_add(done);
  if (done < ops_per_thread) {
    stopped.fetch_add(1);
    return nullptr;
  }
  pthread_t next;
  if (pthread_create(&next, nullptr, worker, c) != 0) abort();
  pthread_detach(next);
  return nullptr;
}

static void *warm_up(void *arg) {
  uint64_t *seed = static_cast<uint64_t *>(arg);
  for (long i = 0; i < (long)kChains * slots; i++)
    blocks[i] = new char[8 + next_random(seed) % max_size];
  return nullptr;
}

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 2) ops_per_thread = atol(argv[2]);
  if (argc > 3) slots = atoi(argv[3]);
  if (argc > 4) max_size = atoi(argv[4]);
  int warm_in_thread = argc > 5 ? atoi(argv[5]) : 0;
  if (seconds < 1 || ops_per_thread < 1 || slots < 1 || max_size < 1) {
    fprintf(stderr, "usage: larson_probe [SECONDS OPS SLOTS MAX WARMUP_IN_THREAD]\n");
    return 2;
  }
  blocks = static_cast<char **>(calloc((size_t)kChains * slots, sizeof(char *)));
  if (blocks == nullptr) abort();
  uint64_t seed = 4141;
  if (warm_in_thread) {
    pthread_t t;
    if (pthread_create(&t, nullptr, warm_up, &seed) != 0) abort();
    pthread_join(t, nullptr);
  } else {
    warm_up(&seed);
  }
  for (int i = 0; i < kChains; i++) {
    chains[i] = {i, 77u + (uint64_t)i};
    pthread_t t;
    if (pthread_create(&t, nullptr, worker, &chains[i]) != 0) abort();
    pthread_detach(t);
  }
  sleep(seconds);
  stop = 1;
  while (stopped.load() < kChains) usleep(1000);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
               (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  std::set<uintptr_t> pages;
  for (long i = 0; i < (long)kChains * slots; i++) pages.insert((uintptr_t)blocks[i] >> 12);
  printf("ops %ld cpu_ns_per_op %.2f pages4k %zu\n", ops.load(), cpu * 1e9 / ops.load(),
         pages.size());
  return 0;
}

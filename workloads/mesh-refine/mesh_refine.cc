// hs-wl-mesh-refine — adaptive refinement of a pointer-based triangle mesh.
//
// Triangles and vertices are individual heap objects (new/delete) linked by pointers, as
// in Delaunay-style mesh generators (Chernikov et al., "Experience with Memory Allocators
// for Parallel Mesh Generation on Multicore Architectures"). In each round a refinement
// target moves across the unit square; every triangle larger than the local size wanted
// there is split at the midpoint of its longest edge: the parent is deleted, two children
// are created, and the midpoint vertex is shared with the neighbour through an edge table
// (a candidate vertex is created first and deleted again when the neighbour already made
// it). Triangles are never merged, so memory grows round after round. --threads T refines
// T vertical strips in parallel, each with its own containers; the checksum combines the
// strips in order.
//
// --pool chooses where triangles and vertices live (the checksum is the same):
//   0  new/delete, one object at a time (the process allocator)
//   1  the study's custom pool: per thread and per type, objects cut from 64 KiB chunks
//      by a pointer bump, deleted ones recycled through a vector, all chunks released
//      at once at the end
//   2  hsmalloc chains, per thread and per type like the pools (hsmalloc_chain_malloc
//      and _free), each released at once by hsmalloc_chain_destroy at the end (needs
//      libhsmalloc, preloaded or linked)
// Every thread builds, refines and tears down its own strip, whatever the pool.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hsmalloc.h"
#include "wl_common.h"

// Weak: the program also runs without hsmalloc (--pool 2 then says it needs it).
#pragma weak hsmalloc_chain_create
#pragma weak hsmalloc_chain_malloc
#pragma weak hsmalloc_chain_free
#pragma weak hsmalloc_chain_destroy

enum PoolKind { POOL_NONE = 0, POOL_CUSTOM = 1, POOL_CHAIN = 2 };

// The study's pool: objects of one type cut from chunks by a pointer bump; deleted ones
// kept in a vector and handed out again first; everything released with the pool.
template <class T>
class Pool {
public:
    Pool() = default;
    Pool(const Pool &) = delete;
    ~Pool() {
        for (char *c : chunks_) std::free(c);
    }
    void *get() {
        if (!recycled_.empty()) {
            T *p = recycled_.back();
            recycled_.pop_back();
            return p;
        }
        if (next_ == end_) grow();
        void *p = next_;
        next_ += sizeof(T);
        return p;
    }
    void put(T *p) { recycled_.push_back(p); }

private:
    static constexpr size_t kChunk = 64 * 1024;
    std::vector<char *> chunks_;
    std::vector<T *> recycled_;
    char *next_ = nullptr, *end_ = nullptr;
    void grow() {
        char *c = static_cast<char *>(std::malloc(kChunk));
        if (c == nullptr) throw std::bad_alloc();
        chunks_.push_back(c);
        next_ = c;
        end_ = c + kChunk / sizeof(T) * sizeof(T);
    }
};

struct Vertex {
    double x, y;
    uint32_t id;
};

struct Triangle {
    Vertex *v[3];
    int level;
};

struct RefineConfig {
    int rounds;
    double min_area;
    int max_level;
};

// Where a strip's triangles and vertices come from and go back to.
template <class T>
class Objects {
public:
    explicit Objects(PoolKind kind)
        : kind_(kind), chain_(kind == POOL_CHAIN ? hsmalloc_chain_create(nullptr, 0, 0) : nullptr) {
        if (kind == POOL_CHAIN && chain_ == nullptr) {
            std::fprintf(stderr, "mesh-refine: hsmalloc_chain_create: %s\n", std::strerror(errno));
            std::exit(1);
        }
    }
    Objects(const Objects &) = delete;
    ~Objects() {
        if (chain_ != nullptr) hsmalloc_chain_destroy(chain_);  // every block at once
    }
    template <class... A>
    T *make(A... args) {
        void *p = kind_ == POOL_CUSTOM  ? pool_.get()
                  : kind_ == POOL_CHAIN ? hsmalloc_chain_malloc(chain_, sizeof(T))
                                        : nullptr;
        if (kind_ == POOL_NONE) return new T{args...};
        if (p == nullptr) throw std::bad_alloc();
        return new (p) T{args...};
    }
    void drop(T *p) {
        if (kind_ == POOL_NONE) delete p;
        else if (kind_ == POOL_CUSTOM) pool_.put(p);
        else hsmalloc_chain_free(chain_, p);
    }
    bool oneByOne() const { return kind_ == POOL_NONE; }  // else released all at once

private:
    PoolKind kind_;
    hsmalloc_chain_t *chain_;
    Pool<T> pool_;
};

class StripRefiner {
public:
    StripRefiner(double x0, double x1, PoolKind kind = POOL_NONE)
        : tris_(kind), verts_(kind) {
        Vertex *a = newVertex(x0, 0.0), *b = newVertex(x1, 0.0);
        Vertex *c = newVertex(x1, 1.0), *d = newVertex(x0, 1.0);
        mesh_.push_back(tris_.make(a, b, c, 0));
        mesh_.push_back(tris_.make(a, c, d, 0));
    }

    ~StripRefiner() {
        if (tris_.oneByOne()) {
            for (Triangle *t : mesh_) tris_.drop(t);
            for (Vertex *v : vertices_) verts_.drop(v);
        }  // else the pools or chains release everything with themselves
    }

    void run(const RefineConfig &cfg) {
        for (int r = 0; r < cfg.rounds; r++) {
            const double s = cfg.rounds > 1 ? (double)r / (cfg.rounds - 1) : 0.0;
            refineRound(cfg, 0.1 + 0.8 * s, 0.5 + 0.3 * std::sin(6.0 * s));
        }
    }

    uint64_t checksum() const {
        uint64_t h = wl_hash_u64(WL_FNV_INIT, mesh_.size());
        h = wl_hash_u64(h, vertices_.size());
        for (const Triangle *t : mesh_) {
            for (const Vertex *v : t->v) {
                h = wl_hash_bytes(h, &v->x, sizeof v->x);
                h = wl_hash_bytes(h, &v->y, sizeof v->y);
            }
            h = wl_hash_u64(h, (uint64_t)t->level);
        }
        return h;
    }

    size_t triangles() const { return mesh_.size(); }
    size_t vertices() const { return vertices_.size(); }

private:
    Objects<Triangle> tris_;
    Objects<Vertex> verts_;
    std::vector<Triangle *> mesh_;        // the current triangles, in a deterministic order
    std::vector<Vertex *> vertices_;      // every live vertex (owned)
    std::unordered_map<uint64_t, Vertex *> midpoints_;  // split edges waiting for their neighbour
    uint32_t next_id_ = 0;

    Vertex *newVertex(double x, double y) {
        Vertex *v = verts_.make(x, y, next_id_++);
        vertices_.push_back(v);
        return v;
    }

    static double area(const Triangle *t) {
        const Vertex *a = t->v[0], *b = t->v[1], *c = t->v[2];
        return 0.5 * std::fabs((b->x - a->x) * (c->y - a->y) - (c->x - a->x) * (b->y - a->y));
    }

    static bool tooBig(const Triangle *t, const RefineConfig &cfg, double cx, double cy) {
        if (t->level >= cfg.max_level) return false;
        const double mx = (t->v[0]->x + t->v[1]->x + t->v[2]->x) / 3.0 - cx;
        const double my = (t->v[0]->y + t->v[1]->y + t->v[2]->y) / 3.0 - cy;
        return area(t) > cfg.min_area + 0.001 * (mx * mx + my * my);
    }

    __attribute__((noinline)) Vertex *midpoint(Vertex *a, Vertex *b) {
        const uint64_t lo = a->id < b->id ? a->id : b->id, hi = a->id < b->id ? b->id : a->id;
        Vertex *candidate = verts_.make(0.5 * (a->x + b->x), 0.5 * (a->y + b->y), 0u);
        auto ins = midpoints_.emplace((lo << 32) | hi, candidate);
        if (!ins.second) {               // the neighbour split this edge already
            verts_.drop(candidate);
            Vertex *m = ins.first->second;
            midpoints_.erase(ins.first);
            return m;
        }
        candidate->id = next_id_++;
        vertices_.push_back(candidate);
        return candidate;
    }

    __attribute__((noinline)) void split(Triangle *t, std::vector<Triangle *> &work) {
        int e = 0;   // longest edge (v[e], v[e+1]); the first one on ties
        double best = -1.0;
        for (int k = 0; k < 3; k++) {
            const Vertex *a = t->v[k], *b = t->v[(k + 1) % 3];
            const double len = (b->x - a->x) * (b->x - a->x) + (b->y - a->y) * (b->y - a->y);
            if (len > best) { best = len; e = k; }
        }
        Vertex *a = t->v[e], *b = t->v[(e + 1) % 3], *c = t->v[(e + 2) % 3];
        Vertex *m = midpoint(a, b);
        work.push_back(tris_.make(a, m, c, t->level + 1));
        work.push_back(tris_.make(m, b, c, t->level + 1));
        tris_.drop(t);
    }

    void refineRound(const RefineConfig &cfg, double cx, double cy) {
        std::vector<Triangle *> work;
        work.swap(mesh_);
        while (!work.empty()) {
            Triangle *t = work.back();
            work.pop_back();
            if (tooBig(t, cfg, cx, cy))
                split(t, work);
            else
                mesh_.push_back(t);
        }
    }
};

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"rounds", "refinement rounds (the target moves each round)", 32, 1, 100000},
        {"min-area-ppb", "smallest triangle area wanted, in 1e-9 units", 20, 1, 1000000000},
        {"max-level", "deepest bisection level", 40, 1, 60},
        {"threads", "strips refined in parallel", 1, 1, 256},
        {"pool", "triangles and vertices: 0 new/delete, 1 custom pool, 2 hsmalloc chain", 0, 0, 2},
    };
    wl_parse(argc, argv, "Adaptive refinement of a pointer-based triangle mesh; --threads T for T strips.",
             opts, 5);
    RefineConfig cfg;
    cfg.rounds = (int)opts[0].value;
    cfg.min_area = (double)opts[1].value * 1e-9;
    cfg.max_level = (int)opts[2].value;
    const int nthreads = (int)opts[3].value;
    const PoolKind pool = (PoolKind)opts[4].value;
    if (pool == POOL_CHAIN && &hsmalloc_chain_create == nullptr) {
        std::fprintf(stderr, "mesh-refine: --pool 2 needs hsmalloc (LD_PRELOAD=libhsmalloc.so)\n");
        return 2;
    }

    // Each thread builds, refines, sums and releases its strip (its pool or chain is its
    // own; with new/delete its blocks are freed one by one, by the thread that made them).
    struct Result { uint64_t sum; size_t tri, vert; };
    std::vector<Result> results(nthreads);
    auto strip = [&](int s) {
        StripRefiner r((double)s / nthreads, (double)(s + 1) / nthreads, pool);
        r.run(cfg);
        results[s] = Result{r.checksum(), r.triangles(), r.vertices()};
    };
    std::vector<std::thread> threads;
    for (int s = 1; s < nthreads; s++)
        threads.emplace_back(strip, s);
    strip(0);
    for (auto &th : threads)
        th.join();
    uint64_t h = WL_FNV_INIT;
    size_t ntri = 0, nvert = 0;
    for (const Result &r : results) {
        h = wl_hash_u64(h, r.sum);
        ntri += r.tri;
        nvert += r.vert;
    }
    printf("mesh-refine: %d strips, %zu triangles, %zu vertices\n", nthreads, ntri, nvert);
    wl_print_checksum(h);
    return 0;
}

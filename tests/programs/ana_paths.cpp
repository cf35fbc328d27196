// Call-graph test program: 12-byte blocks reach the allocator along several call
// paths. Three of them (assemble, boundary, refine) meet in Mesh::getElem, the user
// function nearest the allocation (std::vector internals lie in between); a fourth
// (neighbours) does not pass through it. All run in region "local" under the driver
// run_local_phase, which lies on every path.
//
// Allocations of 12 bytes in "local": assemble 100 + boundary 30 + refine 7 (through
// getElem) + neighbours 50 = 187. Outside "local": the mesh's connectivity, 3*ELEMS ints.
#define HEAPSCOPE_WEAK
#include <heapscope.h>
#include <cstdio>
#include <vector>

static const int ELEMS = 200;

struct Element {
    std::vector<int> nodes;
};

class Mesh {
public:
    Mesh() : conn(3 * ELEMS) {
        for (int i = 0; i < 3 * ELEMS; ++i) conn[i] = i;
    }
    __attribute__((noinline)) Element getElem(int i) const {
        Element e{std::vector<int>(conn.begin() + 3 * i, conn.begin() + 3 * i + 3)};
        return e;
    }
    std::vector<int> conn;
};

static long sink;

__attribute__((noinline)) void assemble(const Mesh &m) {
    for (int i = 0; i < 100; ++i) sink += m.getElem(i).nodes[0];
}

__attribute__((noinline)) void boundary(const Mesh &m) {
    for (int i = 0; i < 30; ++i) sink += m.getElem(i).nodes[1];
}

__attribute__((noinline)) void refine(const Mesh &m) {
    for (int i = 0; i < 7; ++i) sink += m.getElem(i).nodes[2];
}

__attribute__((noinline)) void neighbours(const Mesh &m) {
    for (int i = 0; i < 50; ++i) {
        std::vector<int> adj(3);
        adj[0] = m.conn[i];
        sink += adj[0];
    }
}

__attribute__((noinline)) void run_local_phase(const Mesh &m) {
    HEAPSCOPE_REGION_BEGIN("local");
    assemble(m);
    boundary(m);
    refine(m);
    neighbours(m);
    HEAPSCOPE_REGION_END();
}

int main() {
    Mesh mesh;
    run_local_phase(mesh);
    std::printf("%ld\n", sink);
    return 0;
}

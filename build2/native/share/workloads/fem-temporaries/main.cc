// hs-wl-fem-temporaries — a finite-element-style simulator with the allocation
// anomalies Gomes et al. found (default) or without them (--fixed), in four phases
// marked as heapscope regions: split, local, reduce, post. Both variants print the
// same checksum. Built with -DHEAPSCOPE_WEAK: runs with or without the profiler.
#include <cstdio>

#include "fem.h"
#include "heapscope.h"
#include "wl_common.h"

static uint64_t checksum(const FemResult &r)
{
    uint64_t h = WL_FNV_INIT;
    h = wl_hash_bytes(h, r.field.data(), r.field.size() * sizeof(double));
    h = wl_hash_bytes(h, r.coarse.data(), r.coarse.size() * sizeof(double));
    h = wl_hash_bytes(h, r.post.data(), r.post.size() * sizeof(double));
    return h;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"cells", "the mesh is CELLS x CELLS squares, 2 triangles each", 256, 2, 4096},
        {"subdomains", "subdomains per side (local problems: its square)", 16, 1, 256},
        {"iterations", "Jacobi iterations per local problem", 40, 0, 100000},
        {"coarse-steps", "power iterations on the coarse operator", 20, 0, 100000},
        WL_FLAG("fixed", "run the variant without the allocation anomalies"),
    };
    wl_parse(argc, argv,
             "Finite-element-style simulator with allocation anomalies (phases split, local,\n"
             "reduce, post as heapscope regions); --fixed removes them, same checksum.",
             opts, 5);
    FemConfig cfg;
    cfg.cells = (int)opts[0].value;
    cfg.subdomains = (int)opts[1].value;
    cfg.iterations = (int)opts[2].value;
    cfg.coarse_steps = (int)opts[3].value;
    const bool fixed_variant = opts[4].value != 0;
    if (cfg.subdomains > cfg.cells) {
        fprintf(stderr, "hs-wl-fem-temporaries: --subdomains (%d) must not exceed --cells (%d)\n",
                cfg.subdomains, cfg.cells);
        return 2;
    }

    Mesh mesh(cfg.cells);
    std::vector<Subdomain> subs;
    FemResult result;
    if (!fixed_variant) {
        std::vector<std::vector<double>> solutions;
        { heapscope::Region r("split");  anomalous::splitPhase(mesh, cfg, subs); }
        { heapscope::Region r("local");  anomalous::localPhase(mesh, cfg, subs, solutions); }
        { heapscope::Region r("reduce"); anomalous::reducePhase(mesh, cfg, subs, solutions, result); }
        { heapscope::Region r("post");   anomalous::postPhase(mesh, cfg, result); }
    } else {
        std::vector<double> solutions;
        std::vector<size_t> offsets;
        { heapscope::Region r("split");  fixed::splitPhase(mesh, cfg, subs); }
        { heapscope::Region r("local");  fixed::localPhase(mesh, cfg, subs, solutions, offsets); }
        { heapscope::Region r("reduce"); fixed::reducePhase(mesh, cfg, subs, solutions, offsets, result); }
        { heapscope::Region r("post");   fixed::postPhase(mesh, cfg, result); }
    }
    printf("fem-temporaries: %s, %d elements, %d nodes, %zu local problems\n",
           fixed_variant ? "fixed" : "anomalous", mesh.numElems(), mesh.numNodes(), subs.size());
    wl_print_checksum(checksum(result));
    return 0;
}

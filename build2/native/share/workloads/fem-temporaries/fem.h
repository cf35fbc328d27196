// fem.h — the finite-element-style simulator of the fem-temporaries workload.
//
// Four phases, as in the MHM simulator of Gomes et al., each marked as a heapscope
// region by main.cc:
//   split   partition the mesh into subdomains (local problems), number their nodes
//   local   per subdomain: assemble a dense stiffness matrix element by element and
//           run Jacobi iterations on it
//   reduce  gather the local solutions into a global field, build the coarse
//           (subdomain-to-subdomain) operator, power iterations on it
//   post    per element: mean value and flux of the combined solution
// anomalous.cc writes them with the paper's allocation anomalies (element copies,
// vector<vector<double>> matrices, Eigen `a = a * b` temporaries, maps of small
// nodes, big arguments passed by value); fixed.cc does the same arithmetic in the
// same order without them, so both print the same checksum.
#ifndef HS_WL_FEM_H
#define HS_WL_FEM_H

#include <cstdint>
#include <map>
#include <vector>

#include "mesh.h"

struct FemConfig {
    int cells;        // the mesh is cells x cells squares, two triangles each
    int subdomains;   // subdomains per side: subdomains^2 local problems
    int iterations;   // Jacobi iterations per local problem
    int coarse_steps; // power iterations on the coarse operator
};

struct Subdomain {
    std::vector<int> elems;   // global element ids, ascending
    std::vector<int> nodes;   // global node ids, ascending: position = local id
    std::map<int, int> g2l;   // anomalous variant only: global -> local id, a tree of small nodes
};

struct FemResult {
    std::vector<double> field;   // global node values after reduce
    std::vector<double> coarse;  // coarse weights, one per subdomain
    std::vector<double> post;    // per element: mean value * area, flux * area
};

// The phases, one function each per variant (anomalous.cc, fixed.cc).
namespace anomalous {
void splitPhase(const Mesh &mesh, const FemConfig &cfg, std::vector<Subdomain> &subs);
void localPhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                std::vector<std::vector<double>> &solutions);
void reducePhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                 const std::vector<std::vector<double>> &solutions, FemResult &out);
void postPhase(const Mesh &mesh, const FemConfig &cfg, FemResult &out);
}

namespace fixed {
void splitPhase(const Mesh &mesh, const FemConfig &cfg, std::vector<Subdomain> &subs);
void localPhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                std::vector<double> &solutions, std::vector<size_t> &offsets);
void reducePhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                 const std::vector<double> &solutions, const std::vector<size_t> &offsets,
                 FemResult &out);
void postPhase(const Mesh &mesh, const FemConfig &cfg, FemResult &out);
}

#endif

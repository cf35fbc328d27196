// fixed.cc — the four phases after the paper's fixes: elements are read through
// ElementView (no copy), small matrices live on the stack, Eigen products go into
// preallocated results with noalias(), node numbering is a sorted vector, big
// matrices are reused across subdomains. Same arithmetic in the same order as
// anomalous.cc, hence the same checksum.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "fem.h"
#include "kernels.h"

namespace fixed {

static int localId(const Subdomain &sd, int g)
{
    return (int)(std::lower_bound(sd.nodes.begin(), sd.nodes.end(), g) - sd.nodes.begin());
}

// ---- split ----

WL_NOINLINE void numberNodes(const Mesh &mesh, Subdomain &sd)
{
    sd.nodes.reserve(3 * sd.elems.size());
    for (int e : sd.elems) {
        ElementView K = mesh.view(e);
        for (int k = 0; k < 3; k++)
            sd.nodes.push_back(K.node(k));
    }
    std::sort(sd.nodes.begin(), sd.nodes.end());
    sd.nodes.erase(std::unique(sd.nodes.begin(), sd.nodes.end()), sd.nodes.end());
    sd.nodes.shrink_to_fit();
}

void splitPhase(const Mesh &mesh, const FemConfig &cfg, std::vector<Subdomain> &subs)
{
    const int S = cfg.subdomains;
    std::vector<int> owner(mesh.numElems());
    std::vector<size_t> count((size_t)S * S, 0);
    for (int e = 0; e < mesh.numElems(); e++)
        count[owner[e] = kernels::subdomainOf(mesh.view(e), S)]++;
    subs.assign((size_t)S * S, Subdomain());
    for (size_t p = 0; p < subs.size(); p++)
        subs[p].elems.reserve(count[p]);
    for (int e = 0; e < mesh.numElems(); e++)
        subs[owner[e]].elems.push_back(e);
    for (auto &sd : subs)
        numberNodes(mesh, sd);
}

// ---- local ----

WL_NOINLINE void assembleLocal(const Mesh &mesh, const Subdomain &sd, int e,
                               Eigen::MatrixXd &A, Eigen::VectorXd &b)
{
    const ElementView K = mesh.view(e);
    double g[3][2], ke[3][3];
    const double area = kernels::p1Gradients(K, g);
    const double t = kernels::materialAngle(K);
    Eigen::Matrix2d D, R;
    D << 1.0, 0.0, 0.0, 0.1;
    R << std::cos(t), -std::sin(t), std::sin(t), std::cos(t);
    const Eigen::Matrix2d RD = R * D;
    const Eigen::Matrix2d Kmat = RD * R.transpose();
    kernels::p1Stiffness(g, Kmat(0, 0), Kmat(0, 1), Kmat(1, 0), Kmat(1, 1), area, ke);
    const double f = kernels::p1Load(K, area);
    int l[3];
    for (int i = 0; i < 3; i++)
        l[i] = localId(sd, K.node(i));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            A(l[i], l[j]) += ke[i][j];
        b(l[i]) += f;
    }
}

struct SolverWork {
    Eigen::MatrixXd A;
    Eigen::VectorXd b, x, Ax, r, dinv;
};

WL_NOINLINE void solveLocal(SolverWork &w, int iterations)
{
    const Eigen::Index n = w.b.size();
    for (Eigen::Index i = 0; i < n; i++)
        w.A(i, i) += 1.0;
    w.dinv = w.A.diagonal().cwiseInverse();
    w.x.setZero(n);
    w.Ax.resize(n);
    w.r.resize(n);
    for (int it = 0; it < iterations; it++) {
        w.Ax.noalias() = w.A * w.x;
        w.r = w.b - w.Ax;
        w.x += w.dinv.cwiseProduct(w.r);
    }
}

void localPhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                std::vector<double> &solutions, std::vector<size_t> &offsets)
{
    size_t total = 0;
    offsets.resize(subs.size() + 1);
    for (size_t p = 0; p < subs.size(); p++) {
        offsets[p] = total;
        total += subs[p].nodes.size();
    }
    offsets[subs.size()] = total;
    solutions.resize(total);
    SolverWork w;
    for (size_t p = 0; p < subs.size(); p++) {
        const Subdomain &sd = subs[p];
        const Eigen::Index n = (Eigen::Index)sd.nodes.size();
        w.A.setZero(n, n);
        w.b.setZero(n);
        for (int e : sd.elems)
            assembleLocal(mesh, sd, e, w.A, w.b);
        solveLocal(w, cfg.iterations);
        std::copy(w.x.data(), w.x.data() + n, solutions.begin() + offsets[p]);
    }
}

// ---- reduce ----

void reducePhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                 const std::vector<double> &solutions, const std::vector<size_t> &offsets,
                 FemResult &out)
{
    const int P = (int)subs.size(), N = mesh.numNodes();
    // owners of each node in compressed rows, subdomains ascending
    std::vector<int> start(N + 1, 0);
    for (const Subdomain &sd : subs)
        for (int g : sd.nodes)
            start[g + 1]++;
    for (int g = 0; g < N; g++)
        start[g + 1] += start[g];
    std::vector<int> owners(start[N]), fill(start.begin(), start.end() - 1);
    std::vector<double> u(N, 0.0);
    for (int p = 0; p < P; p++)
        for (size_t l = 0; l < subs[p].nodes.size(); l++) {
            const int g = subs[p].nodes[l];
            owners[fill[g]++] = p;
            u[g] += solutions[offsets[p] + l];
        }
    for (int g = 0; g < N; g++)
        u[g] /= (double)(start[g + 1] - start[g]);

    std::vector<int> shared((size_t)P * P, 0), degree(P, 0);
    for (int g = 0; g < N; g++)
        for (int i = start[g]; i < start[g + 1]; i++)
            for (int j = start[g]; j < start[g + 1]; j++)
                if (owners[i] != owners[j]) {
                    shared[(size_t)owners[i] * P + owners[j]]++;
                    degree[owners[i]]++;
                }
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(P, P);
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++)
            if (shared[(size_t)a * P + b])
                G(a, b) = -shared[(size_t)a * P + b] / 16.0;
    for (int p = 0; p < P; p++)
        G(p, p) = 2.0 + degree[p] / 16.0;

    Eigen::VectorXd v = Eigen::VectorXd::Constant(P, 1.0 / P), w(P);
    for (int k = 0; k < cfg.coarse_steps; k++) {
        w.noalias() = G * v;
        v.swap(w);
        v /= v.norm();
    }
    Eigen::MatrixXd Gk = G, tmp(P, P);
    for (int k = 0; k < 2; k++) {
        tmp.noalias() = Gk * G;
        Gk.swap(tmp);
    }
    Eigen::VectorXd c(P);
    c.noalias() = Gk * v;
    c /= c.cwiseAbs().maxCoeff();

    out.coarse.assign(c.data(), c.data() + P);
    out.field.resize(N);
    for (int g = 0; g < N; g++) {
        double s = 0.0;
        for (int i = start[g]; i < start[g + 1]; i++)
            s += c[owners[i]];
        out.field[g] = u[g] * (1.0 + 0.5 * s / (double)(start[g + 1] - start[g]));
    }
}

// ---- post ----

void postPhase(const Mesh &mesh, const FemConfig &, FemResult &out)
{
    out.post.assign(2 * (size_t)mesh.numElems(), 0.0);
    for (int e = 0; e < mesh.numElems(); e++) {
        const ElementView K = mesh.view(e);
        double g[3][2], v[3];
        for (int k = 0; k < 3; k++)
            v[k] = out.field[K.node(k)];
        const double area = kernels::p1Gradients(K, g);
        kernels::p1Post(g, v, area, out.post[2 * e], out.post[2 * e + 1]);
    }
}

}  // namespace fixed

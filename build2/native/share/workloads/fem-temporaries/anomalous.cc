// anomalous.cc — the four phases the way Gomes et al. found them (README):
// every element read is a copy (Mesh::operator[] -> Mesh::getElem -> Element::alloc),
// small matrices are vector<vector<double>>, Eigen expressions `a = a * b` and
// `r = b - A x` create temporaries, node numbering lives in std::map,
// a dense matrix is passed by value. Functions are kept out of line so that each
// allocation has a distinct, readable call path.
#include <Eigen/Dense>
#include <cmath>
#include <utility>

#include "fem.h"
#include "kernels.h"

namespace anomalous {

typedef std::vector<std::vector<double>> Matrix;  // "a matrix is a vector of rows"

// ---- split ----

WL_NOINLINE int classifyElement(const Mesh &mesh, int e, int S)
{
    Element K = mesh[e];                 // copy just to read three coordinates
    return kernels::subdomainOf(K, S);
}

WL_NOINLINE void numberNodes(const Mesh &mesh, Subdomain &sd)
{
    for (int e : sd.elems) {
        Element K = mesh[e];
        for (int k = 0; k < K.numNodes(); k++)
            sd.g2l.emplace(K.node(k), 0);
    }
    int next = 0;
    for (auto &kv : sd.g2l) {
        kv.second = next++;
        sd.nodes.push_back(kv.first);
    }
}

void splitPhase(const Mesh &mesh, const FemConfig &cfg, std::vector<Subdomain> &subs)
{
    const int S = cfg.subdomains;
    subs.assign((size_t)S * S, Subdomain());
    for (int e = 0; e < mesh.numElems(); e++)
        subs[classifyElement(mesh, e, S)].elems.push_back(e);
    for (auto &sd : subs)
        numberNodes(mesh, sd);
}

// ---- local ----

WL_NOINLINE Matrix computeGradients(const Element &K, double *area)
{
    Matrix g(3, std::vector<double>(2));
    *area = kernels::p1Gradients(K, g);
    return g;
}

WL_NOINLINE Eigen::MatrixXd materialTensor(const Element &K)
{
    const double t = kernels::materialAngle(K);
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(2, 2);
    D(0, 0) = 1.0;
    D(1, 1) = 0.1;
    Eigen::MatrixXd R(2, 2);
    R << std::cos(t), -std::sin(t), std::sin(t), std::cos(t);
    D = R * D;                // a = b * a: a temporary
    D = D * R.transpose();    // a = a * b: another one
    return D;
}

WL_NOINLINE Matrix elementStiffness(const Matrix &g, const Eigen::MatrixXd &Kmat, double area)
{
    Matrix ke(3, std::vector<double>(3));
    kernels::p1Stiffness(g, Kmat(0, 0), Kmat(0, 1), Kmat(1, 0), Kmat(1, 1), area, ke);
    return ke;
}

WL_NOINLINE std::vector<double> elementLoad(const Element &K, double area)
{
    const double f = kernels::p1Load(K, area);
    return std::vector<double>(3, f);
}

WL_NOINLINE void assembleLocal(const Mesh &mesh, const Subdomain &sd, int e,
                               Eigen::MatrixXd &A, Eigen::VectorXd &b)
{
    Element K = mesh[e];
    double area;
    Matrix g = computeGradients(K, &area);
    Eigen::MatrixXd Kmat = materialTensor(K);
    Matrix ke = elementStiffness(g, Kmat, area);
    std::vector<double> fe = elementLoad(K, area);
    for (int i = 0; i < 3; i++) {
        const int li = sd.g2l.at(K.node(i));
        for (int j = 0; j < 3; j++)
            A(li, sd.g2l.at(K.node(j))) += ke[i][j];
        b(li) += fe[i];
    }
}

WL_NOINLINE Eigen::VectorXd residual(const Eigen::MatrixXd &A, const Eigen::VectorXd &x,
                                     const Eigen::VectorXd &b)
{
    Eigen::VectorXd Ax = A * x;   // a temporary per iteration
    return b - Ax;                // and the residual itself
}

WL_NOINLINE std::vector<double> solveLocal(Eigen::MatrixXd A, Eigen::VectorXd b, int iterations)
{
    const Eigen::Index n = b.size();
    for (Eigen::Index i = 0; i < n; i++)
        A(i, i) += 1.0;
    Eigen::VectorXd dinv = A.diagonal().cwiseInverse();
    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    for (int it = 0; it < iterations; it++) {
        Eigen::VectorXd r = residual(A, x, b);
        x = x + dinv.cwiseProduct(r);
    }
    return std::vector<double>(x.data(), x.data() + n);
}

void localPhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                std::vector<std::vector<double>> &solutions)
{
    for (const Subdomain &sd : subs) {
        const Eigen::Index n = (Eigen::Index)sd.nodes.size();
        Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
        Eigen::VectorXd b = Eigen::VectorXd::Zero(n);
        for (int e : sd.elems)
            assembleLocal(mesh, sd, e, A, b);
        std::vector<double> x = solveLocal(A, b, cfg.iterations);
        solutions.push_back(x);           // a copy, not a move
    }
}

// ---- reduce ----

WL_NOINLINE Eigen::MatrixXd coarseOperator(const std::vector<std::vector<int>> &owners, int P)
{
    std::map<std::pair<int, int>, int> shared;   // one small tree node per coupled pair
    for (const auto &own : owners)
        for (int a : own)
            for (int b : own)
                if (a != b)
                    shared[std::make_pair(a, b)] += 1;
    std::vector<int> degree(P, 0);
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(P, P);
    for (const auto &kv : shared) {
        G(kv.first.first, kv.first.second) = -kv.second / 16.0;
        degree[kv.first.first] += kv.second;
    }
    for (int p = 0; p < P; p++)
        G(p, p) = 2.0 + degree[p] / 16.0;
    return G;
}

void reducePhase(const Mesh &mesh, const FemConfig &cfg, const std::vector<Subdomain> &subs,
                 const std::vector<std::vector<double>> &solutions, FemResult &out)
{
    const int P = (int)subs.size();
    std::vector<std::vector<int>> owners(mesh.numNodes());
    std::vector<double> u(mesh.numNodes(), 0.0);
    for (int p = 0; p < P; p++)
        for (size_t l = 0; l < subs[p].nodes.size(); l++) {
            const int g = subs[p].nodes[l];
            owners[g].push_back(p);
            u[g] += solutions[p][l];
        }
    for (int g = 0; g < mesh.numNodes(); g++)
        u[g] /= (double)owners[g].size();

    Eigen::MatrixXd G = coarseOperator(owners, P);
    Eigen::VectorXd v = Eigen::VectorXd::Constant(P, 1.0 / P);
    for (int k = 0; k < cfg.coarse_steps; k++) {
        v = G * v;                // aliasing: a temporary each step
        v = v / v.norm();
    }
    Eigen::MatrixXd Gk = G;
    for (int k = 0; k < 2; k++)
        Gk = Gk * G;              // a = a * b: a P x P temporary
    Eigen::VectorXd c = Gk * v;
    c = c / c.cwiseAbs().maxCoeff();

    out.coarse.assign(c.data(), c.data() + P);
    out.field.resize(u.size());
    for (int g = 0; g < mesh.numNodes(); g++) {
        double s = 0.0;
        for (int p : owners[g])
            s += c[p];
        out.field[g] = u[g] * (1.0 + 0.5 * s / (double)owners[g].size());
    }
}

// ---- post ----

WL_NOINLINE std::vector<double> nodalValues(const Element &K, const std::vector<double> &field)
{
    std::vector<double> v(3);
    for (int k = 0; k < 3; k++)
        v[k] = field[K.node(k)];
    return v;
}

WL_NOINLINE void postElement(const Mesh &mesh, int e, FemResult &out)
{
    Element K = mesh[e];
    std::vector<double> v = nodalValues(K, out.field);
    double area;
    Matrix g = computeGradients(K, &area);
    kernels::p1Post(g, v, area, out.post[2 * e], out.post[2 * e + 1]);
}

void postPhase(const Mesh &mesh, const FemConfig &, FemResult &out)
{
    out.post.assign(2 * (size_t)mesh.numElems(), 0.0);
    for (int e = 0; e < mesh.numElems(); e++)
        postElement(mesh, e, out);
}

}  // namespace anomalous

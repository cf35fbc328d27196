// mesh.h — the mesh of the fem-temporaries workload, and the two ways to look at
// one of its triangles:
//   Element      a copy that owns its node ids and coordinates (two heap blocks:
//                12 and 48 bytes). Mesh::operator[] / Mesh::getElem return one by
//                value: the allocation anomaly of Gomes et al., section 3.4.
//   ElementView  the fix (the paper's SurrogateElement): a mesh pointer and an
//                index, same interface, no allocation.
// Both read the same doubles from the mesh, so the arithmetic is bit-identical.
#ifndef HS_WL_FEM_MESH_H
#define HS_WL_FEM_MESH_H

#include <cstddef>
#include <vector>

#define WL_NOINLINE __attribute__((noinline))

class Mesh;

class Element {
public:
    int id = -1;
    std::vector<int> nodes;      // 3 node ids       (12-byte block)
    std::vector<double> coords;  // x0 y0 x1 y1 x2 y2 (48-byte block)

    WL_NOINLINE void alloc(int nnodes);
    int numNodes() const { return (int)nodes.size(); }
    int node(int k) const { return nodes[k]; }
    double x(int k) const { return coords[2 * k]; }
    double y(int k) const { return coords[2 * k + 1]; }

private:
    WL_NOINLINE void allocNodes(int nnodes);
};

class ElementView {
public:
    ElementView(const Mesh *mesh, int id) : mesh_(mesh), id(id) {}
    inline int numNodes() const;
    inline int node(int k) const;
    inline double x(int k) const;
    inline double y(int k) const;

private:
    const Mesh *mesh_;

public:
    int id;
};

// The unit square cut into cells x cells squares, each split into two triangles.
class Mesh {
public:
    explicit Mesh(int cells);

    int cells() const { return cells_; }
    int numElems() const { return (int)(conn_.size() / 3); }
    int numNodes() const { return (int)(xy_.size() / 2); }
    int elemNode(int e, int k) const { return conn_[3 * e + k]; }
    double nodeX(int n) const { return xy_[2 * n]; }
    double nodeY(int n) const { return xy_[2 * n + 1]; }

    // The anomaly: a full copy of element i (mesh.cc).
    WL_NOINLINE Element getElem(int i) const;
    WL_NOINLINE Element operator[](int i) const;
    // The fix: a view of element i.
    ElementView view(int i) const { return ElementView(this, i); }

private:
    int cells_;
    std::vector<double> xy_;   // node coordinates
    std::vector<int> conn_;    // 3 node ids per triangle
};

int ElementView::numNodes() const { return 3; }
int ElementView::node(int k) const { return mesh_->elemNode(id, k); }
double ElementView::x(int k) const { return mesh_->nodeX(mesh_->elemNode(id, k)); }
double ElementView::y(int k) const { return mesh_->nodeY(mesh_->elemNode(id, k)); }

#endif

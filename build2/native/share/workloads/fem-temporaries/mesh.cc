// mesh.cc — building the structured triangle mesh and copying elements out of it.
#include "mesh.h"

Mesh::Mesh(int cells) : cells_(cells)
{
    const int n = cells + 1;
    xy_.resize(2 * (std::size_t)n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            xy_[2 * (j * n + i)] = (double)i / cells;
            xy_[2 * (j * n + i) + 1] = (double)j / cells;
        }
    conn_.reserve(6 * (std::size_t)cells * cells);
    for (int j = 0; j < cells; j++)
        for (int i = 0; i < cells; i++) {
            const int a = j * n + i, b = a + 1, c = a + n, d = c + 1;
            conn_.insert(conn_.end(), {a, b, d});
            conn_.insert(conn_.end(), {a, d, c});
        }
}

void Element::allocNodes(int nnodes)
{
    nodes.resize(nnodes);
}

void Element::alloc(int nnodes)
{
    allocNodes(nnodes);
    coords.resize(2 * nnodes);
}

Element Mesh::getElem(int i) const
{
    Element K;
    K.id = i;
    K.alloc(3);
    for (int k = 0; k < 3; k++) {
        const int n = conn_[3 * i + k];
        K.nodes[k] = n;
        K.coords[2 * k] = xy_[2 * n];
        K.coords[2 * k + 1] = xy_[2 * n + 1];
    }
    return K;
}

Element Mesh::operator[](int i) const
{
    return getElem(i);
}

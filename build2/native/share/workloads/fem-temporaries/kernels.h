// kernels.h — the arithmetic both variants share, written once as templates over
// the element type (Element or ElementView) and the matrix type (vector<vector<double>>
// or a plain array), so the anomalous and the fixed variant compute bit-identical
// values and print the same checksum.
#ifndef HS_WL_FEM_KERNELS_H
#define HS_WL_FEM_KERNELS_H

#include <cmath>

namespace kernels {

// Subdomain of a triangle: the block of the S x S partition holding its centroid.
template <class E>
int subdomainOf(const E &K, int S)
{
    const double cx = (K.x(0) + K.x(1) + K.x(2)) / 3.0;
    const double cy = (K.y(0) + K.y(1) + K.y(2)) / 3.0;
    int i = (int)(cx * S), j = (int)(cy * S);
    if (i >= S) i = S - 1;
    if (j >= S) j = S - 1;
    return j * S + i;
}

// Gradients of the three P1 basis functions (g[i][0..1]); returns the area.
template <class E, class G>
double p1Gradients(const E &K, G &g)
{
    const double x0 = K.x(0), y0 = K.y(0), x1 = K.x(1), y1 = K.y(1), x2 = K.x(2), y2 = K.y(2);
    const double det = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    g[0][0] = (y1 - y2) / det; g[0][1] = (x2 - x1) / det;
    g[1][0] = (y2 - y0) / det; g[1][1] = (x0 - x2) / det;
    g[2][0] = (y0 - y1) / det; g[2][1] = (x1 - x0) / det;
    return 0.5 * std::fabs(det);
}

// Angle of the anisotropic diffusion tensor in a triangle.
template <class E>
double materialAngle(const E &K)
{
    const double cx = (K.x(0) + K.x(1) + K.x(2)) / 3.0;
    const double cy = (K.y(0) + K.y(1) + K.y(2)) / 3.0;
    return 3.0 * cx + 2.0 * cy;
}

// Element stiffness: ke[i][j] = area * g_i . (Kmat g_j).
template <class G, class KE>
void p1Stiffness(const G &g, double k00, double k01, double k10, double k11, double area, KE &ke)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const double a0 = k00 * g[j][0] + k01 * g[j][1];
            const double a1 = k10 * g[j][0] + k11 * g[j][1];
            ke[i][j] = area * (g[i][0] * a0 + g[i][1] * a1);
        }
}

// Element load for f(x, y) = 1 + x y, one-point quadrature.
template <class E>
double p1Load(const E &K, double area)
{
    const double cx = (K.x(0) + K.x(1) + K.x(2)) / 3.0;
    const double cy = (K.y(0) + K.y(1) + K.y(2)) / 3.0;
    return area * (1.0 + cx * cy) / 3.0;
}

// Post-processing of one triangle from its nodal values v[0..2].
template <class G, class V>
void p1Post(const G &g, const V &v, double area, double &mean, double &flux)
{
    const double gx = v[0] * g[0][0] + v[1] * g[1][0] + v[2] * g[2][0];
    const double gy = v[0] * g[0][1] + v[1] * g[1][1] + v[2] * g[2][1];
    mean = area * (v[0] + v[1] + v[2]) / 3.0;
    flux = area * std::sqrt(gx * gx + gy * gy);
}

}  // namespace kernels

#endif

// Helpers shared by the Eigen tests (test_eigen.cpp, test_long_gemm.cpp): random matrices and the standard that
// Eigen's own GEMM must satisfy.
#pragma once

#include <Eigen/Core>

#include <random>

#include "exactref/standard.h"

namespace exactref::testing_support {

/// A rows x cols matrix of normal(0, 1) values rounded to M's scalar type.
template <class M>
M gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    M m(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = static_cast<typename M::Scalar>(normal(rng));
    return m;
}

/// Any order of K products, each rounded (with FMA when Eigen uses it).
inline standard eigen_gemm_standard() {
    standard s = any_order();
#ifdef EIGEN_VECTORIZE_FMA
    s.fma = true;
#endif
    return s;
}

}  // namespace exactref::testing_support

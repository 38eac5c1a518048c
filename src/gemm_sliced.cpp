// The Ozaki-scheme GEMMs: error-free slices of A and B multiplied exactly by Eigen's binary64 GEMM and summed per
// level as 64-bit integers (docs/algorithms/ozaki.md, Steps S3 and S4).
//
// Invariants (why nothing rounds):
//   every slice entry is an integer alpha with |alpha| <= 2^w - 1 (held exactly in a double);
//   K·2^(2w) <= 2^53 (the planner's choice of w), so every partial sum of K slice products, in whatever order and with
//   or without FMA, is an integer of magnitude < 2^53: exact in binary64, never subnormal, never rounded;
//   a level sum adds at most min(s_A, s_B) such integers, far below 2^63.
#include <Eigen/Core>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "gemm_state.h"

namespace exactref::detail {

namespace {

// Integer value of slice p (0 = most significant) of an entry under the grid top `top`: the bits of the entry at
// positions [top - (p+1)·w, top - p·w), as an integer in units of 2^(top - (p+1)·w).
std::uint64_t slice_value(const entry_parts& e, int top, int w, int p) noexcept {
    const int lsb = top - (p + 1) * w;
    const int t = e.exponent - lsb;  // position of the entry's lowest significand bit inside the slice
    const std::uint64_t mask = (std::uint64_t{1} << w) - 1;
    if (t >= w) return 0;
    if (t >= 0) return (e.significand & (mask >> t)) << t;
    if (-t >= 64) return 0;
    return (e.significand >> (-t)) & mask;
}

// Output columns per GEMM call: one block per worker (Eigen's GEMM is most efficient on wide panels), but at least 16
// and at most what keeps a worker's D (s_A·m x s_B·columns doubles) within 64 MiB.
std::size_t column_block(std::size_t n, unsigned threads, std::size_t d_rows, int sb) {
    const std::size_t per = (n + threads - 1) / std::max(1u, threads);
    const std::size_t memory_cap = (std::size_t{64} << 20) / sizeof(double) / std::max<std::size_t>(1, d_rows) /
                                   static_cast<std::size_t>(sb);
    return std::max<std::size_t>(16, std::min(per, memory_cap));
}

}  // namespace

double eigen_fma_ns() noexcept {
#if defined(EIGEN_VECTORIZE_AVX512)
    return 0.035;
#elif defined(EIGEN_VECTORIZE_FMA) && defined(EIGEN_VECTORIZE_AVX2)
    return 0.06;
#elif defined(EIGEN_VECTORIZE_AVX)
    return 0.1;
#else
    return 0.19;  // SSE2, measured on the 2-core CI machine: 195 ms for a 1024^3 binary64 GEMM
#endif
}

void build_sliced_levels(product_reference::state& st, unsigned threads) {
    const std::size_t m = st.m, n = st.n, k = st.k;
    const int w = st.w, sa = st.sa, sb = st.sb, levels = st.levels;
    const auto ms = static_cast<Eigen::Index>(m * static_cast<std::size_t>(sa));
    const auto ns = static_cast<Eigen::Index>(n * static_cast<std::size_t>(sb));
    const auto kk = static_cast<Eigen::Index>(k);

    // Step S3: the slice matrices. Row i·s_A + p of A_hat is slice p of row i of A; column j·s_B + q of B_hat is slice q
    // of column j of B. Both column-major, as Eigen's GEMM prefers.
    Eigen::MatrixXd a_hat(ms, kk), b_hat(kk, ns);
    parallel_for(k, threads, 64, [&](std::size_t l0, std::size_t l1) {
        for (std::size_t l = l0; l < l1; ++l) {
            double* col = a_hat.data() + static_cast<std::ptrdiff_t>(l) * ms;
            for (std::size_t i = 0; i < m; ++i) {
                const entry_parts e = split_entry(*st.f, st.a[i * k + l]);
                for (int p = 0; p < sa; ++p) {
                    double v = 0;
                    if (!e.special && e.significand != 0) {
                        v = static_cast<double>(slice_value(e, st.row_top[i], w, p));
                        if (e.negative) v = -v;
                    }
                    col[i * static_cast<std::size_t>(sa) + static_cast<std::size_t>(p)] = v;
                }
            }
        }
    });
    parallel_for(n, threads, 16, [&](std::size_t j0, std::size_t j1) {
        for (std::size_t j = j0; j < j1; ++j) {
            for (int q = 0; q < sb; ++q) {
                double* col = b_hat.data() + static_cast<std::ptrdiff_t>(j * static_cast<std::size_t>(sb) +
                                                                         static_cast<std::size_t>(q)) * kk;
                for (std::size_t l = 0; l < k; ++l) {
                    const entry_parts e = split_entry(*st.f, st.bt[j * k + l]);
                    double v = 0;
                    if (!e.special && e.significand != 0) {
                        v = static_cast<double>(slice_value(e, st.col_top[j], w, q));
                        if (e.negative) v = -v;
                    }
                    col[l] = v;
                }
            }
        }
    });
    const Eigen::MatrixXd a_abs = a_hat.cwiseAbs();
    const Eigen::MatrixXd b_abs = b_hat.cwiseAbs();

    // Step S4: D = A_hat·B_hat per block of output columns, each entry an exact integer; level p + q of element (i, j)
    // gathers D(i·s_A + p, j·s_B + q). The same for |A_hat|·|B_hat| into the T levels.
    // One worker per column block; a lone worker runs Eigen with this thread's OpenMP team size set to one (the
    // nthreads-var ICV is per thread, so nothing else in the process changes), as options.threads asks.
    struct team_size_guard {
        int saved = omp_get_max_threads();
        explicit team_size_guard(unsigned threads) { if (threads <= 1) omp_set_num_threads(1); }
        ~team_size_guard() { omp_set_num_threads(saved); }
    } guard(threads);
    st.s_levels.assign(m * n * static_cast<std::size_t>(levels), 0);
    st.t_levels.assign(m * n * static_cast<std::size_t>(levels), 0);
    parallel_for(n, threads, column_block(n, threads, static_cast<std::size_t>(ms), sb), [&](std::size_t j0, std::size_t j1) {
        const auto cols = static_cast<Eigen::Index>((j1 - j0) * static_cast<std::size_t>(sb));
        const auto first = static_cast<Eigen::Index>(j0 * static_cast<std::size_t>(sb));
        Eigen::MatrixXd d(ms, cols);
        for (int pass = 0; pass < 2; ++pass) {
            if (pass == 0) d.noalias() = a_hat * b_hat.middleCols(first, cols);
            else d.noalias() = a_abs * b_abs.middleCols(first, cols);
            std::vector<std::int64_t>& out = pass == 0 ? st.s_levels : st.t_levels;
            for (std::size_t j = j0; j < j1; ++j) {
                for (int q = 0; q < sb; ++q) {
                    const double* dc = d.data() + static_cast<std::ptrdiff_t>((j - j0) * static_cast<std::size_t>(sb) +
                                                                             static_cast<std::size_t>(q)) * ms;
                    std::int64_t* lev = out.data() + j * m * static_cast<std::size_t>(levels) + static_cast<std::size_t>(q);
                    for (std::size_t i = 0; i < m; ++i) {
                        std::int64_t* li = lev + i * static_cast<std::size_t>(levels);
                        const double* di = dc + i * static_cast<std::size_t>(sa);
                        for (int p = 0; p < sa; ++p) li[p] += static_cast<std::int64_t>(di[p]);  // exact integer
                    }
                }
            }
        }
    });
}

}  // namespace exactref::detail

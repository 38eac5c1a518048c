// The Ozaki-scheme GEMMs: error-free slices of A and B multiplied exactly by Eigen's binary64 GEMM and summed per
// level as 64-bit integers (docs/algorithms/ozaki.md, Steps S3 and S4).
//
// Invariants (why nothing rounds):
//   every slice entry is an integer alpha with |alpha| <= 2^w - 1, a paired operand alpha_p + alpha_q (both slices of
//   one entry, so of one sign) an integer below 2^(w+1); all held exactly in a double;
//   K·2^(2w) <= 2^53 (unpaired) or K·2^(2w+2) <= 2^53 (paired; the planner's choice of w), so every partial sum of K
//   operand products, in whatever order and with or without FMA, is an integer of magnitude < 2^53: exact in
//   binary64, never subnormal, never rounded;
//   a level sum adds and subtracts at most 3·16 + 1 such integers (< 2^59), far below 2^63.
#include <Eigen/Core>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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
// and at most what keeps a worker's D (m x columns doubles) within 64 MiB.
std::size_t column_block(std::size_t n, unsigned threads, std::size_t m) {
    const std::size_t per = (n + threads - 1) / std::max(1u, threads);
    const std::size_t memory_cap = (std::size_t{64} << 20) / sizeof(double) / std::max<std::size_t>(1, m);
    return std::max<std::size_t>(16, std::min(per, memory_cap));
}

// Operand r of one side (rows x k for A, k x cols for B, column-major): r < slices is slice r; r = slices + (index of
// the pair p < q in pairs_of(paired)) is slice p + slice q.
std::vector<std::pair<int, int>> pairs_of(int paired) {
    std::vector<std::pair<int, int>> out;
    for (int p = 0; p < paired; ++p)
        for (int q = p + 1; q < paired; ++q) out.emplace_back(p, q);
    return out;
}

}  // namespace

std::vector<slice_gemm> slice_gemms(int sa, int sb, bool karatsuba) {
    const int s = karatsuba ? std::min(sa, sb) : 0;  // slices 0 .. s-1 of both sides are paired
    std::vector<slice_gemm> out;
    // Diagonal products A_p·B_p: level 2p, and taken out of every pair (p, q) that contains them.
    for (int p = 0; p < s; ++p) {
        slice_gemm g{p, p, {{2 * p, 1}}};
        for (int q = 0; q < s; ++q)
            if (q != p) g.into.emplace_back(p + q, -1);
        out.push_back(std::move(g));
    }
    // Pairs (A_p + A_q)·(B_p + B_q) = A_p·B_p + A_p·B_q + A_q·B_p + A_q·B_q: level p + q (Karatsuba).
    const std::vector<std::pair<int, int>> pairs = pairs_of(s);
    for (std::size_t r = 0; r < pairs.size(); ++r)
        out.push_back({sa + static_cast<int>(r), sb + static_cast<int>(r), {{pairs[r].first + pairs[r].second, 1}}});
    // The rest one by one: A_p·B_q at level p + q.
    for (int p = 0; p < sa; ++p)
        for (int q = 0; q < sb; ++q)
            if (p >= s || q >= s) out.push_back({p, q, {{p + q, 1}}});
    return out;
}

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
    const auto mm = static_cast<Eigen::Index>(m);
    const auto kk = static_cast<Eigen::Index>(k);
    const std::vector<std::pair<int, int>> pairs = pairs_of(st.karatsuba ? std::min(sa, sb) : 0);

    // Step S3: the operands. Left operand p (m x k) is slice p of A, right operand q (k x n) slice q of B; the paired
    // operands follow (slice p + slice q). Column-major, as Eigen's GEMM prefers.
    std::vector<Eigen::MatrixXd> left(static_cast<std::size_t>(sa) + pairs.size());
    std::vector<Eigen::MatrixXd> right(static_cast<std::size_t>(sb) + pairs.size());
    for (Eigen::MatrixXd& x : left) x.resize(mm, kk);
    for (Eigen::MatrixXd& x : right) x.resize(kk, static_cast<Eigen::Index>(n));
    parallel_for(k, threads, 64, [&](std::size_t l0, std::size_t l1) {
        for (std::size_t l = l0; l < l1; ++l)
            for (std::size_t i = 0; i < m; ++i) {
                const entry_parts e = split_entry(*st.f, st.a[i * k + l]);
                const bool zero = e.special || e.significand == 0;
                for (int p = 0; p < sa; ++p) {
                    const double v = zero ? 0.0 : static_cast<double>(slice_value(e, st.row_top[i], w, p));
                    left[static_cast<std::size_t>(p)].data()[l * m + i] = e.negative ? -v : v;
                }
            }
    });
    parallel_for(n, threads, 16, [&](std::size_t j0, std::size_t j1) {
        for (std::size_t j = j0; j < j1; ++j)
            for (std::size_t l = 0; l < k; ++l) {
                const entry_parts e = split_entry(*st.f, st.bt[j * k + l]);
                const bool zero = e.special || e.significand == 0;
                for (int q = 0; q < sb; ++q) {
                    const double v = zero ? 0.0 : static_cast<double>(slice_value(e, st.col_top[j], w, q));
                    right[static_cast<std::size_t>(q)].data()[j * k + l] = e.negative ? -v : v;
                }
            }
    });
    for (std::size_t r = 0; r < pairs.size(); ++r) {  // sums of two integers below 2^w: exact
        left[static_cast<std::size_t>(sa) + r] = left[static_cast<std::size_t>(pairs[r].first)] +
                                                  left[static_cast<std::size_t>(pairs[r].second)];
        right[static_cast<std::size_t>(sb) + r] = right[static_cast<std::size_t>(pairs[r].first)] +
                                                   right[static_cast<std::size_t>(pairs[r].second)];
    }

    // Step S4: D = left·right per slice GEMM and block of output columns, each entry an exact integer, added to (or
    // taken from) its levels. Then the same with |left|·|right| into the T levels: the slices of an entry share its
    // sign, so |slice p + slice q| = |slice p| + |slice q| and the pairing holds for T as well.
    // One worker per column block; a lone worker runs Eigen with this thread's OpenMP team size set to one (the
    // nthreads-var ICV is per thread, so nothing else in the process changes), as options.threads asks.
    struct team_size_guard {
        int saved = omp_get_max_threads();
        explicit team_size_guard(unsigned threads) { if (threads <= 1) omp_set_num_threads(1); }
        ~team_size_guard() { omp_set_num_threads(saved); }
    } guard(threads);
    const std::vector<slice_gemm> gemms = slice_gemms(sa, sb, st.karatsuba);
    const auto stride = static_cast<std::size_t>(levels);
    st.s_levels.assign(m * n * stride, 0);
    st.t_levels.assign(m * n * stride, 0);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            for (Eigen::MatrixXd& x : left) x = x.cwiseAbs();
            for (Eigen::MatrixXd& x : right) x = x.cwiseAbs();
        }
        std::vector<std::int64_t>& out = pass == 0 ? st.s_levels : st.t_levels;
        parallel_for(n, threads, column_block(n, threads, m), [&](std::size_t j0, std::size_t j1) {
            const auto cols = static_cast<Eigen::Index>(j1 - j0);
            Eigen::MatrixXd d(mm, cols);
            for (const slice_gemm& g : gemms) {
                d.noalias() = left[static_cast<std::size_t>(g.left)] *
                              right[static_cast<std::size_t>(g.right)].middleCols(static_cast<Eigen::Index>(j0), cols);
                for (std::size_t j = j0; j < j1; ++j) {
                    const double* dc = d.data() + (j - j0) * m;
                    std::int64_t* lev = out.data() + j * m * stride;
                    for (const auto& [level, sign] : g.into) {
                        std::int64_t* li = lev + static_cast<std::size_t>(level);
                        if (sign > 0)
                            for (std::size_t i = 0; i < m; ++i) li[i * stride] += static_cast<std::int64_t>(dc[i]);
                        else
                            for (std::size_t i = 0; i < m; ++i) li[i * stride] -= static_cast<std::int64_t>(dc[i]);
                    }
                }
            }
        });
    }
}

}  // namespace exactref::detail

// The Ozaki-scheme GEMMs: error-free slices of A and B multiplied exactly by OpenBLAS's binary64 GEMM (cblas_dgemm,
// its kernels chosen at run time for the CPU) and summed per level as 64-bit integers (docs/algorithms/ozaki.md,
// Steps S3 and S4). OpenBLAS computes each element as a sum of K products in some order, with or without FMA, never
// by a fast (Strassen-like) algorithm, so the invariants below make every element exact.
//
// Invariants (why nothing rounds):
//   every slice entry is an integer alpha with |alpha| <= 2^w - 1, a paired operand alpha_p + alpha_q (both slices of
//   one entry, so of one sign) an integer below 2^(w+1); all held exactly in a double;
//   K·2^(2w) <= 2^53 (unpaired) or K·2^(2w+2) <= 2^53 (paired; the planner's choice of w), so every partial sum of K
//   operand products, in whatever order and with or without FMA, is an integer of magnitude < 2^53: exact in
//   binary64, never subnormal, never rounded;
//   a level sum adds and subtracts at most 3·16 + 1 such integers (< 2^59), far below 2^63.
#include <Eigen/Core>
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>  // std::ldexp
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "covers_filter.h"  // next_up, next_down (Step S6's outward rounding)
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

// Output columns per GEMM call: one block per worker (a GEMM is most efficient on wide panels), but at least 16
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
static_assert(slice_gemm_count(3, 3, true) == 6 && slice_gemm_count(2, 3, true) == 5 && slice_gemm_count(3, 2, false) == 6);

// OpenBLAS's own threads are turned off while the slice GEMMs run (the workers of parallel_for split the output
// columns instead) and restored afterwards. openblas_set_num_threads is process-wide: a BLAS call that another thread
// makes meanwhile runs on one thread too (slower, never different).
struct blas_single_thread {
    int saved = openblas_get_num_threads();
    blas_single_thread() { openblas_set_num_threads(1); }
    ~blas_single_thread() { openblas_set_num_threads(saved); }
    blas_single_thread(const blas_single_thread&) = delete;
    blas_single_thread& operator=(const blas_single_thread&) = delete;
};

// One m x n x k binary64 GEMM, column-major: c = a·b.
void gemm(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c) noexcept {
    const auto mi = static_cast<blasint>(m), ni = static_cast<blasint>(n), ki = static_cast<blasint>(k);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, mi, ni, ki, 1.0, a, mi, b, ki, 0.0, c, mi);
}

double blas_fma_ns() noexcept {
    // Measured once per process on one thread: the best of three 192^3 GEMMs (about 7 M multiply-adds, a few ms).
    static const double ns = [] {
        constexpr std::size_t n = 192;
        std::vector<double> a(n * n, 1.0), b(n * n, 1.0), c(n * n);
        const blas_single_thread one;
        double best = 1e300;
        for (int rep = 0; rep < 3; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            gemm(n, n, n, a.data(), b.data(), c.data());
            const std::chrono::duration<double, std::nano> t = std::chrono::steady_clock::now() - t0;
            best = std::min(best, t.count());
        }
        return std::clamp(best / static_cast<double>(n * n * n), 0.005, 5.0);
    }();
    return ns;
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
    // One worker per column block, each running single-threaded GEMMs.
    const blas_single_thread one_blas_thread;
    const std::vector<slice_gemm> gemms = slice_gemms(sa, sb, st.karatsuba);
    const auto stride = static_cast<std::size_t>(levels);
    st.s_levels.assign(m * n * stride, 0);
    st.t_levels.assign(st.t_enclosed ? 0 : m * n * stride, 0);  // Step S6 encloses T instead
    const std::size_t block = column_block(n, threads, m);
    const std::size_t workers = std::min<std::size_t>(std::max(1u, threads), (n + block - 1) / block);
    st.plan.peak_bytes = sizeof(std::uint64_t) * (st.a.size() + st.bt.size() + st.c.size()) +
                         sizeof(double) * (left.size() * m * k + right.size() * k * n + workers * m * block) +
                         sizeof(std::int64_t) * (st.s_levels.size() + st.t_levels.size());
    for (int pass = 0; pass < (st.t_enclosed ? 1 : 2); ++pass) {
        if (pass == 1) {
            for (Eigen::MatrixXd& x : left) x = x.cwiseAbs();
            for (Eigen::MatrixXd& x : right) x = x.cwiseAbs();
        }
        std::vector<std::int64_t>& out = pass == 0 ? st.s_levels : st.t_levels;
        parallel_for(n, threads, block, [&](std::size_t j0, std::size_t j1) {
            const std::size_t cols = j1 - j0;
            std::vector<double> d(m * cols);
            for (const slice_gemm& g : gemms) {
                gemm(m, cols, k, left[static_cast<std::size_t>(g.left)].data(),
                     right[static_cast<std::size_t>(g.right)].data() + j0 * k, d.data());
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

namespace {

// |x| as binary64 bits (exact: p <= 24) for a finite entry of format f; 0 for Inf/NaN (their elements never use T's
// enclosure: rows and columns with Inf/NaN entries are built as references).
std::uint64_t magnitude_bits(const format_info& f, std::uint64_t bits) noexcept {
    const entry_parts e = split_entry(f, bits);
    if (e.special || e.significand == 0) return 0;
    // significand·2^exponent with significand < 2^24: normal in binary64 (exponent >= -149 - 23 > -1022 + 52).
    const int width = std::bit_width(e.significand);
    const std::uint64_t fraction = (e.significand << (53 - width)) & ((std::uint64_t{1} << 52) - 1);
    return (static_cast<std::uint64_t>(e.exponent + width - 1 + 1023) << 52) | fraction;
}

}  // namespace

void build_t_estimate(product_reference::state& st, unsigned threads) {
    const std::size_t m = st.m, n = st.n, k = st.k;
    // |A| column-major m x k and |B| column-major k x n (bt's rows are B's columns: the same layout).
    std::vector<double> abs_a(m * k), abs_b(k * n);
    parallel_for(m, threads, 64, [&](std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i)
            for (std::size_t l = 0; l < k; ++l)
                abs_a[l * m + i] = std::bit_cast<double>(magnitude_bits(*st.f, st.a[i * k + l]));
    });
    parallel_for(n * k, threads, 4096, [&](std::size_t e0, std::size_t e1) {
        for (std::size_t e = e0; e < e1; ++e) abs_b[e] = std::bit_cast<double>(magnitude_bits(*st.f, st.bt[e]));
    });
    st.t_hat.assign(m * n, 0.0);
    // t_enclosure's factors, once per product. 1 - g and 1 - 2g are exact (g is a multiple of 2^-52 below 2^-20, K - 1
    // < 2^32), and next_up of the quotient rounded in any mode is at least the quotient: valid whatever rounding mode
    // the caller runs exact_matmul in.
    const double g = std::ldexp(static_cast<double>(k - 1), -52);
    st.t_below = 1 - g;
    st.t_above = next_up((1 - g) / (1 - 2 * g));
    const blas_single_thread one_blas_thread;
    const std::size_t block = column_block(n, threads, m);
    parallel_for(n, threads, block, [&](std::size_t j0, std::size_t j1) {
        gemm(m, j1 - j0, k, abs_a.data(), abs_b.data() + j0 * k, st.t_hat.data() + j0 * m);
    });
    const std::size_t peak = sizeof(std::uint64_t) * (st.a.size() + st.bt.size() + st.c.size()) +
                             sizeof(double) * (abs_a.size() + abs_b.size() + st.t_hat.size()) +
                             sizeof(std::int64_t) * (st.s_levels.size() + st.t_levels.size());
    st.plan.peak_bytes = std::max(st.plan.peak_bytes, peak);
}

bool t_enclosure(const product_reference::state& st, std::size_t i, std::size_t j, double& lo, double& hi) noexcept {
    // ozaki.md, Step S6: every |a|·|b| is exact in binary64 and >= 2^-298, so only the K - 1 additions round, each by
    // a factor 1 + δ with |δ| < 2^-52 in any rounding mode, and no partial sum underflows or overflows (< 2^289):
    // |t_hat - T| <= γ·T, γ = γ_{K-1} = g/(1 - g), g = (K - 1)·2^-52 (Higham, ASNA 2nd ed., §3.1, (3.5)). Then
    // 1 + γ = 1/(1 - g) and 1 - γ = (1 - 2g)/(1 - g): T in [t_hat·(1 - g), t_hat·(1 - g)/(1 - 2g)].
    const double t = st.t_hat[j * st.m + i];
    if (!(t >= 0 && t < std::numeric_limits<double>::infinity())) return false;
    if (t == 0) {  // a sum of non-negative terms is 0 only when every term is
        lo = hi = 0;
        return true;
    }
    lo = next_down(t * st.t_below);  // st.t_below = 1 - g, st.t_above >= (1 - g)/(1 - 2g): build_t_estimate
    hi = next_up(t * st.t_above);
    return true;
}

}  // namespace exactref::detail

namespace exactref {

std::string matmul_engine() {
    return std::string(openblas_get_config()) + " (kernel: " + openblas_get_corename() + ")";
}

}  // namespace exactref

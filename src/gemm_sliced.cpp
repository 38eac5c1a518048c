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
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>  // std::ldexp
#include <cstdint>
#include <cstdlib>  // std::getenv, std::strtoull (EXACTREF_GEMM_BLOCK)
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "covers_filter.h"  // next_up, next_down (Step S6's outward rounding)
#include "blas_kernel.h"  // blas_kernel(): the repair of the Prescott fallback, for matmul_engine()
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

namespace {

// Step S3 for one row of A or one column of B (`count` entries of format f as raw bits, all under the grid top `top`):
// operand r < slices gets slice r of every entry, operand slices + r (pairs[r] = (p, q)) slice p + slice q, with the
// entry's sign (or without it: `absolute`, for T's levels), operand r at out + r·operand_stride. Zeros and Inf/NaN
// give 0 in every operand. One decoding per entry for all the operands (the pair sums are exact: two integers below
// 2^w of one sign). When all the slices fit one 64-bit word (slices·w <= 63: binary32 2 x 20, binary64 3 x 19 bits)
// the entry's near bits are that word, X = significand·2^(exponent - bottom) truncated below bottom = top -
// slices·w (the far bits, Step S5's), and slice p is bits [(slices - 1 - p)·w, (slices - p)·w) of X: the same integers
// as slice_value.
template <class U>
void slice_entries(const format_info& f, const U* bits, std::size_t count, int top, int w, int slices,
                   const std::vector<std::pair<int, int>>& pairs, bool absolute, double* out,
                   std::size_t operand_stride) noexcept {
    double v[max_slices_per_side];
    const bool one_word = slices * w <= 63;
    const int bottom = top - slices * w;
    const std::uint64_t mask = (std::uint64_t{1} << w) - 1;
    for (std::size_t l = 0; l < count; ++l) {
        const decoded d = decode_bits(f, bits[l]);
        const bool zero = d.is_nan || d.is_inf || d.significand == 0;
        const double sign = !absolute && d.negative ? -1.0 : 1.0;
        if (zero) {
            for (int p = 0; p < slices; ++p) v[p] = 0.0;
        } else if (one_word) {
            // |entry| < 2^top, so X < 2^(slices·w) <= 2^63: the left shift cannot overflow.
            const int shift = d.exponent - bottom;
            const std::uint64_t x = shift >= 0 ? d.significand << shift
                                    : shift > -64 ? d.significand >> -shift
                                                  : 0;
            for (int p = 0; p < slices; ++p)
                v[p] = sign * static_cast<double>((x >> ((slices - 1 - p) * w)) & mask);
        } else {
            const entry_parts e{false, d.negative, d.significand, d.exponent};
            for (int p = 0; p < slices; ++p) v[p] = sign * static_cast<double>(slice_value(e, top, w, p));
        }
        for (int p = 0; p < slices; ++p) out[static_cast<std::size_t>(p) * operand_stride + l] = v[p];
        for (std::size_t r = 0; r < pairs.size(); ++r)
            out[(static_cast<std::size_t>(slices) + r) * operand_stride + l] = v[pairs[r].first] + v[pairs[r].second];
    }
}

// One m x n x k binary64 GEMM into a column-major C with leading dimension ldc >= m (a row panel of a larger output),
// with A given row-major (m x k, as the copy of A and its slice operands are stored): c = a·b.
void gemm_row_major_a(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c,
                      std::size_t ldc) noexcept {
    const auto mi = static_cast<blasint>(m), ni = static_cast<blasint>(n), ki = static_cast<blasint>(k);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, mi, ni, ki, 1.0, a, ki, b, ki, 0.0, c,
                static_cast<blasint>(ldc));
}

// A positive count from the environment variable `name` (for tests), at most `limit`; 0 when unset or empty.
std::size_t count_from_environment(const char* name, std::size_t limit) {
    const char* env = std::getenv(name);
    if (env == nullptr || *env == '\0') return 0;
    char* end = nullptr;
    const unsigned long long count = std::strtoull(env, &end, 10);
    if (*env < '0' || *env > '9' || *end != '\0' || count == 0)
        throw std::invalid_argument(std::string("exactref::matmul: ") + name + " = '" + env +
                                    "' is not a positive number");
    return static_cast<std::size_t>(std::min<unsigned long long>(count, limit));
}

// The tiles of Steps S3-S4 and S6: row panels of at most `rows` rows of A, whose left operands (`lefts` arrays of
// rows x k doubles) are made once per panel, by blocks of at most `cols` output columns, each worker holding its
// block's right operands (`rights` arrays of k x cols) and GEMM outputs (`outputs` arrays of rows x cols).
struct tiles {
    std::size_t rows = 0, cols = 0, workers = 1;
    std::size_t bytes = 0;  // the temporaries: left operands, and every worker's right operands and outputs
};

// The temporaries' budget: the operands' own bytes (A and B), at least tile_floor_bytes. Tiles trade memory for
// work, measured on Emerald Rapids (docs/performance.md, "The GEMM's memory"): at 1024^3 blocks of 128 columns cost no
// more than wider ones (64: +10-13%), but every row panel slices B once more and runs shorter GEMMs (panels of 512
// rows: +7%, of 256: +25%); at 2048^3 float32, 2 panels of 1024 rows with blocks of 128 columns cost 5% more than one
// panel with blocks of 342 (and 1.5x the memory: this budget's choice). So the tiles take one panel of all m rows while
// its left operands leave room for blocks of 128 columns per worker, else 2, 4, ... panels, but none below 1024 rows;
// blocks as wide as the rest of the budget allows, at least 128 columns (the budget is then exceeded), of nearly equal
// widths. A 1024^3 binary32 product (2 x 2 paired slices: 3 + 3 operands, 3 outputs) thus keeps one
// panel (its left operands 24 MiB) with blocks of 128 columns (6 MiB), where blocks of 512 columns took 24 MiB.
// EXACTREF_GEMM_PANEL and EXACTREF_GEMM_BLOCK (environment, for tests) set the rows per panel and the columns per
// block.
constexpr std::size_t tile_floor_bytes = std::size_t{16} << 20;
constexpr std::size_t min_panel_rows = 1024, min_block_cols = 128;
tiles tile_shape(std::size_t m, std::size_t n, std::size_t k, unsigned threads, std::size_t lefts, std::size_t rights,
                 std::size_t outputs, std::size_t budget) {
    const std::size_t panel_env = count_from_environment("EXACTREF_GEMM_PANEL", m);
    const std::size_t block_env = count_from_environment("EXACTREF_GEMM_BLOCK", n);
    const std::size_t workers = std::max(1u, threads);
    const std::size_t per = (n + workers - 1) / workers;  // a worker's share of the columns
    const std::size_t min_cols = std::min(per, min_block_cols);
    tiles t;
    for (std::size_t panels = 1;; panels *= 2) {
        t.rows = panel_env != 0 ? panel_env : (m + panels - 1) / panels;
        const std::size_t left = sizeof(double) * lefts * t.rows * k;
        const std::size_t column = sizeof(double) * (rights * k + outputs * t.rows);
        t.cols = std::min(per, budget > left ? (budget - left) / (workers * column) : 0);
        if (panel_env != 0 || t.cols >= min_cols || t.rows / 2 < min_panel_rows) break;
    }
    if (block_env != 0) {
        t.cols = block_env;
    } else {
        t.cols = std::max(t.cols, min_cols);
        const std::size_t blocks = (per + t.cols - 1) / t.cols;
        t.cols = (per + blocks - 1) / blocks;
    }
    t.workers = std::min(workers, (n + t.cols - 1) / t.cols);
    t.bytes = sizeof(double) * (lefts * t.rows * k + t.workers * t.cols * (rights * k + outputs * t.rows));
    return t;
}

}  // namespace

void build_sliced_levels(product_reference::state& st, unsigned threads) {
    const std::size_t m = st.m, n = st.n, k = st.k;
    const int w = st.w, sa = st.sa, sb = st.sb, levels = st.levels;
    const std::vector<std::pair<int, int>> pairs = pairs_of(st.karatsuba ? std::min(sa, sb) : 0);
    const std::size_t lefts = static_cast<std::size_t>(sa) + pairs.size();
    const std::size_t rights = static_cast<std::size_t>(sb) + pairs.size();
    const std::vector<slice_gemm> gemms = slice_gemms(sa, sb, st.karatsuba);
    const std::size_t stride = static_cast<std::size_t>(levels);
    // Level t of an element is Σ sign·D_g over the GEMMs g that feed it (slice_gemms): each level written once, from
    // the block's GEMM outputs, so the level arrays need neither zeroing nor read-modify-write passes.
    std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> feeds(stride);
    for (std::size_t g = 0; g < gemms.size(); ++g)
        for (const auto& [level, sign] : gemms[g].into) feeds[static_cast<std::size_t>(level)].emplace_back(g, sign);

    // Steps S3-S4 by tiles (tile_shape): per row panel its left operands, then per block of output columns the block's
    // right operands (Step S3 for its columns of B), every slice GEMM D_g = left·right (each entry an exact integer),
    // then the panel's rows of the block's levels. Then the same with |left|·|right| into the T levels (binary64
    // terms): the slices of an entry share its sign, so |slice p + slice q| = |slice p| + |slice q| and the pairing
    // holds for T as well. One worker per block, each running single-threaded GEMMs.
    const tiles tile = tile_shape(m, n, k, threads, lefts, rights, gemms.size(),
                                  std::max(tile_floor_bytes, st.a.bytes() + st.bt.bytes()));
    bulk_vector<double> left(lefts * tile.rows * k);
    const blas_single_thread one_blas_thread;
    st.s_words = s_words_of(st);
    const auto words = static_cast<std::size_t>(st.s_words);
    st.s_limbs.resize(m * n * words);
    st.t_levels.resize(st.t_enclosed ? 0 : m * n * stride);  // Step S6 encloses T instead
    st.plan.peak_bytes = st.a.bytes() + st.bt.bytes() + st.c.bytes() + tile.bytes +
                         sizeof(std::int64_t) * tile.workers * tile.rows * stride +
                         sizeof(std::uint64_t) * st.s_limbs.size() + sizeof(std::int64_t) * st.t_levels.size();
    for (std::size_t i0 = 0; i0 < m; i0 += tile.rows) {
        const std::size_t rows = std::min(tile.rows, m - i0);
        // Step S3, left side: operand r of the panel (rows x k, row-major like the copy of A) at left + r·rows·k.
        st.a.visit([&](const auto* a) {
            parallel_for(rows, threads, 16, [&](std::size_t r0, std::size_t r1) {
                for (std::size_t r = r0; r < r1; ++r)
                    slice_entries(*st.f, a + (i0 + r) * k, k, st.row_top[i0 + r], w, sa, pairs, false,
                                  left.data() + r * k, rows * k);
            });
        });
        for (int pass = 0; pass < (st.t_enclosed ? 1 : 2); ++pass) {
            const bool absolute = pass == 1;
            if (absolute)  // |slice| of every left operand, in place: clear the sign bits
                for (std::size_t e = 0; e < lefts * rows * k; ++e) left[e] = std::fabs(left[e]);
            parallel_for(n, threads, tile.cols, [&](std::size_t j0, std::size_t j1) {
                // One worker may get several blocks (all of them on one thread): its buffers serve each in turn. s's
                // levels of one column of the panel go to `column`, then packed into the column's limbs.
                bulk_vector<double> right(rights * k * tile.cols), d(gemms.size() * rows * tile.cols);
                bulk_vector<std::int64_t> column(absolute ? 0 : rows * stride);
                for (std::size_t b0 = j0; b0 < j1; b0 += tile.cols) {
                    const std::size_t cols = std::min(tile.cols, j1 - b0);
                    st.bt.visit([&](const auto* bt) {
                        for (std::size_t j = b0; j < b0 + cols; ++j)
                            slice_entries(*st.f, bt + j * k, k, st.col_top[j], w, sb, pairs, absolute,
                                          right.data() + (j - b0) * k, k * cols);
                    });
                    for (std::size_t g = 0; g < gemms.size(); ++g)
                        gemm_row_major_a(rows, cols, k,
                                         left.data() + static_cast<std::size_t>(gemms[g].left) * rows * k,
                                         right.data() + static_cast<std::size_t>(gemms[g].right) * k * cols,
                                         d.data() + g * rows * cols, rows);
                    // |D| < 2^53 and a level adds at most 3·16 + 1 of them: below 2^59, exact in int64. A column's
                    // levels (rows·levels int64) stay in cache while its GEMM outputs are added in.
                    for (std::size_t jj = 0; jj < cols; ++jj) {
                        std::int64_t* lev =
                            absolute ? st.t_levels.data() + ((b0 + jj) * m + i0) * stride : column.data();
                        for (std::size_t t = 0; t < stride; ++t) {
                            std::int64_t* lt = lev + t;
                            bool first = true;
                            for (const auto& [g, sign] : feeds[t]) {
                                const double* dg = d.data() + (g * cols + jj) * rows;
                                if (first && sign > 0)
                                    for (std::size_t i = 0; i < rows; ++i)
                                        lt[i * stride] = static_cast<std::int64_t>(dg[i]);
                                else if (first)
                                    for (std::size_t i = 0; i < rows; ++i)
                                        lt[i * stride] = -static_cast<std::int64_t>(dg[i]);
                                else if (sign > 0)
                                    for (std::size_t i = 0; i < rows; ++i)
                                        lt[i * stride] += static_cast<std::int64_t>(dg[i]);
                                else
                                    for (std::size_t i = 0; i < rows; ++i)
                                        lt[i * stride] -= static_cast<std::int64_t>(dg[i]);
                                first = false;
                            }
                            if (first)
                                for (std::size_t i = 0; i < rows; ++i) lt[i * stride] = 0;
                        }
                        if (absolute) continue;
                        std::uint64_t* limbs = st.s_limbs.data() + ((b0 + jj) * m + i0) * words;
                        for (std::size_t i = 0; i < rows; ++i)
                            pack_levels(lev + i * stride, 1, levels, w, st.s_words, limbs + i * words);
                    }
                }
            });
        }
    }
    // Step S6 after Step S4's temporaries are freed, within their budget: at least half of it, and what t_hat leaves.
    bulk_vector<double>().swap(left);
    const std::size_t t_hat_bytes = sizeof(double) * m * n;
    if (st.t_enclosed)
        build_t_estimate(st, threads, std::max(tile.bytes / 2, tile.bytes - std::min(tile.bytes, t_hat_bytes)));
}

namespace {

// |x| as binary64 bits (exact: p <= 24) for a finite entry of format f; 0 for Inf/NaN (their elements never use T's
// enclosure: rows and columns with Inf/NaN entries are built as references).
std::uint64_t magnitude_bits(const format_info& f, std::uint64_t bits) noexcept {
    const decoded e = decode_bits(f, bits);
    if (e.is_nan || e.is_inf || e.significand == 0) return 0;
    // significand·2^exponent with significand < 2^24: normal in binary64 (exponent >= -149 - 23 > -1022 + 52).
    const int width = std::bit_width(e.significand);
    const std::uint64_t fraction = (e.significand << (53 - width)) & ((std::uint64_t{1} << 52) - 1);
    return (static_cast<std::uint64_t>(e.exponent + width - 1 + 1023) << 52) | fraction;
}

// Step S6 for binary64 terms (ozaki.md): |x|·2^-top as binary64 bits for a finite entry of binary64 under its row's
// (column's) grid top (|x| < 2^top, so the scaled value is below 1); 0 for zeros, Inf/NaN (as magnitude_bits) and,
// setting `dropped`, for a non-zero entry whose scaled value lies below 2^-511: then every product of two kept scaled
// entries is 0 or at least 2^-1022 (normal), so the GEMM never meets a subnormal (FTZ/DAZ cannot matter) and rounds
// every product and sum by a factor 1 + δ, |δ| < 2^-52. The kept values are exact (at most 53 significand bits, a
// normal exponent).
std::uint64_t scaled_magnitude_bits(std::uint64_t bits, int top, bool& dropped) noexcept {
    const decoded e = decode_bits(binary64_info, bits);
    if (e.is_nan || e.is_inf || e.significand == 0) return 0;
    const int width = std::bit_width(e.significand);  // <= 53
    const int binade = e.exponent + width - 1 - top;   // floor(log2(|x|·2^-top)) <= -1
    if (binade < -511) {
        dropped = true;
        return 0;
    }
    const std::uint64_t fraction = (e.significand << (53 - width)) & ((std::uint64_t{1} << 52) - 1);
    return (static_cast<std::uint64_t>(binade + 1023) << 52) | fraction;
}

// Step S6 for binary64 terms: the stored t_hat(i, j) from the scaled GEMM's entry t (Σ |â|·|b̂| as the GEMM rounded
// it, in units of 2^(E_i + F_j) = 2^scale): t·2^scale, exact, when t >= 2^-400 (the dropped entries' slack then fits
// t_above) and the result lies in [2^-1000, 2^1000] (t_enclosure's products stay normal and finite); 0 when t = 0 and
// neither row nor column dropped an entry (every product is then 0: T = 0); else NaN, which t_enclosure refuses (the
// element takes the exact path).
double scale_t_hat(double t, int scale, bool dropped) noexcept {
    if (t == 0 && !dropped) return 0;
    if (!(t >= 0x1p-400)) return std::numeric_limits<double>::quiet_NaN();  // also NaN (a guard: t < K always)
    const int binade = static_cast<int>(std::bit_cast<std::uint64_t>(t) >> 52) - 1023;  // t normal and positive
    if (binade + scale < -1000 || binade + scale > 1000) return std::numeric_limits<double>::quiet_NaN();
    const auto shift = static_cast<std::uint64_t>(static_cast<std::int64_t>(scale)) << 52;  // added to the exponent
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(t) + shift);
}

}  // namespace

void build_t_estimate(product_reference::state& st, unsigned threads, std::size_t budget) {
    const std::size_t m = st.m, n = st.n, k = st.k;
    const bool scaled = !t_exact_products(*st.f);  // binary64 terms: Step S6 with row and column scaling
    // By tiles (tile_shape): per row panel |A| of its rows (row-major, as the copy of A), per block of output columns
    // |B| of its columns (column-major k x cols: bt's rows are B's columns), and the GEMM writes the panel's rows of
    // the block's t_hat in place.
    if (budget == 0) budget = std::max(tile_floor_bytes, st.a.bytes() + st.bt.bytes());
    const tiles tile = tile_shape(m, n, k, threads, 1, 1, 0, budget);
    bulk_vector<double> abs_a(tile.rows * k);
    // Binary64 terms: |a|·2^-E_i and |b|·2^-F_j, 0 below 2^-511; rows and columns that dropped a non-zero entry.
    std::vector<std::uint8_t> dropped_a(scaled ? m : 0), dropped_b(scaled ? n : 0);
    // Rows [r0, r1) of `bits` (row-major, k columns) as magnitudes at out (row r at out + (r - r0)·k).
    auto magnitudes = [&](const auto* bits, std::size_t r0, std::size_t r1, const std::vector<int>& top,
                          std::uint8_t* dropped, double* out) {
        for (std::size_t r = r0; r < r1; ++r) {
            double* row = out + (r - r0) * k;
            if (!scaled) {
                for (std::size_t l = 0; l < k; ++l)
                    row[l] = std::bit_cast<double>(magnitude_bits(*st.f, bits[r * k + l]));
                continue;
            }
            bool any = false;
            for (std::size_t l = 0; l < k; ++l)
                row[l] = std::bit_cast<double>(scaled_magnitude_bits(bits[r * k + l], top[r], any));
            dropped[r] = any ? 1 : 0;
        }
    };
    st.t_hat.resize(m * n);  // every element written by the GEMMs (beta = 0)
    const std::size_t peak = st.a.bytes() + st.bt.bytes() + st.c.bytes() + tile.bytes +
                             sizeof(double) * st.t_hat.size() +
                             sizeof(std::uint64_t) * st.s_limbs.size() + sizeof(std::int64_t) * st.t_levels.size();
    st.plan.peak_bytes = std::max(st.plan.peak_bytes, peak);
    // t_enclosure's factors, once per product. 1 - g and 1 - 2g are exact (g is a multiple of 2^-52 below 2^-20, K
    // < 2^32), and next_up of the quotient rounded in any mode is at least the quotient: valid whatever rounding mode
    // the caller runs exact_matmul in. Terms of at most 24 bits: g = (K - 1)·2^-52 (only the additions round);
    // binary64 terms: g = K·2^-52 (the products round too), and one more step up (>= 2^-52 > K·2^-110) covers the
    // dropped entries' slack K·2^-510 <= K·2^-110·t_hat for t_hat >= 2^-400 (ozaki.md, Step S6 for binary64 terms).
    const double g = std::ldexp(static_cast<double>(scaled ? k : k - 1), -52);
    st.t_below = 1 - g;
    st.t_above = next_up((1 - g) / (1 - 2 * g));
    if (scaled) st.t_above = next_up(st.t_above);
    const blas_single_thread one_blas_thread;
    for (std::size_t i0 = 0; i0 < m; i0 += tile.rows) {
        const std::size_t rows = std::min(tile.rows, m - i0);
        st.a.visit([&](const auto* a) {
            parallel_for(rows, threads, std::max<std::size_t>(1, 4096 / k), [&](std::size_t r0, std::size_t r1) {
                magnitudes(a, i0 + r0, i0 + r1, st.row_top, dropped_a.data(), abs_a.data() + r0 * k);
            });
        });
        parallel_for(n, threads, tile.cols, [&](std::size_t j0, std::size_t j1) {
            bulk_vector<double> abs_b(k * tile.cols);
            for (std::size_t b0 = j0; b0 < j1; b0 += tile.cols) {
                const std::size_t cols = std::min(tile.cols, j1 - b0);
                st.bt.visit([&](const auto* bt) {
                    magnitudes(bt, b0, b0 + cols, st.col_top, dropped_b.data(), abs_b.data());
                });
                double* const out = st.t_hat.data() + b0 * m + i0;
                gemm_row_major_a(rows, cols, k, abs_a.data(), abs_b.data(), out, m);
                if (scaled)
                    for (std::size_t j = b0; j < b0 + cols; ++j)
                        for (std::size_t i = i0; i < i0 + rows; ++i)
                            st.t_hat[j * m + i] = scale_t_hat(st.t_hat[j * m + i], st.row_top[i] + st.col_top[j],
                                                              dropped_a[i] != 0 || dropped_b[j] != 0);
            }
        });
    }
}

}  // namespace exactref::detail

namespace exactref {

std::string matmul_engine() {
    const detail::blas_kernel_state& st = detail::blas_kernel();
    std::string out = std::string(openblas_get_config()) + " (kernel: " + openblas_get_corename();
    if (!st.repaired.empty())
        out += "; OpenBLAS chose " + st.chosen + ", its SSE3 fallback for a CPU it does not know, replaced by " +
               st.repaired + "; EXACTREF_BLAS_KERNEL=keep keeps it";
    return out + ")";
}

}  // namespace exactref

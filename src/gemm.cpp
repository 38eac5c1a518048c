// Exact matrix products: planning, the compact product_reference and the per-element references
// (docs/algorithms/ozaki.md; the GEMMs themselves are in gemm_sliced.cpp).
//
// Step S1  Copy A, B (transposed) and C0 as raw bits; per row of A and column of B: the grid top E_i / F_j (the smallest
//          power of two above every finite |entry|), the smallest floor(log2 |entry|), the Inf/NaN entries.
// Step S2  Plan: w = floor((53 - ceil(log2 K)) / 2), so K·2^(2w) <= 2^53, or one bit less with paired slices
//          (K·2^(2w+2) <= 2^53). An entry needs ceil((top - lowest set bit)/w) slices; s_A, s_B and the pairing
//          minimise the estimated time of the slice GEMMs (2·s_A·s_B, or 2·(s(s+1)/2 + s_A·s_B - s²) paired) plus the
//          far entries (bits below the last slice), each added exactly per element later. `automatic` compares with
//          the per-element path.
// Step S3, S4  gemm_sliced.cpp (or gemm_int8.cpp).
// Step S6  Binary32/16/bfloat16 terms, where the planner finds it cheaper: T enclosed by one binary64 GEMM of
//          |A|·|B| (gemm_sliced.cpp) instead of T's slice GEMMs; element(i, j) then takes the per-element dot path
//          (exact s and T in O(K)), covers() the enclosure (gemm_covers.cpp).
// Step S5  element(i, j): the level sums at their exponents E_i + F_j - (t + 2)·w, the far parts (a_far·b and
//          a_near·b_far, exact 106-bit products), the Inf/NaN products, the signed-zero state, C0(i, j), and
//          min_product_exponent; the same reference exactref::dot gives, bit for bit.
#include "exactref/gemm.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdlib>  // std::getenv (EXACTREF_GEMM_ENGINE)
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "blas_kernel.h"  // check_blas_kernel_setting: EXACTREF_BLAS_KERNEL
#include "dot_kernels.h"
#include "exactref/detail/uint128.h"
#include "exactref/dot.h"
#include "exactref/threads.h"
#include "gemm_state.h"

namespace exactref {

namespace detail {

entry_parts split_entry(const format_info& f, std::uint64_t bits) noexcept {
    const decoded d = decode_bits(f, bits);
    entry_parts e;
    e.special = d.is_nan || d.is_inf;
    e.negative = d.negative;
    e.significand = e.special ? 0 : d.significand;
    e.exponent = d.exponent;
    return e;
}

std::uint64_t far_significand(const entry_parts& e, int top, int w, int slices) noexcept {
    const int cut = top - slices * w;  // bits at positions below `cut` are far
    const int shift = cut - e.exponent;
    if (shift <= 0) return 0;
    if (shift >= 64) return e.significand;
    return e.significand & ((std::uint64_t{1} << shift) - 1);
}

void parallel_for(std::size_t count, unsigned threads, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& f) {
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t pieces = (count + grain - 1) / grain;
    const int workers = static_cast<int>(std::min<std::size_t>(threads == 0 ? 1 : threads, pieces));
    if (workers <= 1) {
        if (count > 0) f(0, count);
        return;
    }
    // OpenMP workers (the calling thread is one); the slice GEMMs inside run on one BLAS thread each.
#pragma omp parallel for schedule(dynamic, 1) num_threads(workers)
    for (std::size_t piece = 0; piece < pieces; ++piece) f(piece * grain, std::min(count, (piece + 1) * grain));
}

}  // namespace detail

namespace {

unsigned resolve_threads(unsigned threads) { return detail::resolve_threads(threads); }  // exactref/threads.h

// Adds ±(m1·2^e1)·(m2·2^e2) exactly (m1, m2 < 2^64, product split at 2^53 so both halves fit an int64 lane).
void add_product_parts(superaccumulator& acc, bool negative, std::uint64_t m1, int e1, std::uint64_t m2,
                       int e2) noexcept {
    const detail::uint128 prod = static_cast<detail::uint128>(m1) * m2;
    constexpr detail::uint128 low_mask = (detail::uint128{1} << 53) - 1;
    const auto lo = static_cast<std::int64_t>(static_cast<std::uint64_t>(prod & low_mask));
    const detail::uint128 hi_all = prod >> 53;
    const auto hi = static_cast<std::int64_t>(static_cast<std::uint64_t>(hi_all & low_mask));
    const auto top = static_cast<std::int64_t>(static_cast<std::uint64_t>(hi_all >> 53));
    detail::add_scaled_int64(acc, negative ? -lo : lo, e1 + e2);
    detail::add_scaled_int64(acc, negative ? -hi : hi, e1 + e2 + 53);
    detail::add_scaled_int64(acc, negative ? -top : top, e1 + e2 + 106);
}

// Step S5 for the sliced method, into a freshly constructed reference.
void build_sliced_element(const product_reference::state& st, std::size_t i, std::size_t j, reference& out) {
    const format_info& f = *st.f;
    const std::size_t k = st.k;
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const detail::bit_row a = st.a.row(i, k), b = st.bt.row(j, k);
    const std::size_t levels = static_cast<std::size_t>(st.levels);
    bool nonzero = false;  // some finite product is non-zero

    if (levels > 0) {
        const int top = st.row_top[i] + st.col_top[j];
        const std::int64_t* t = st.t_levels.data() + (j * st.m + i) * levels;
        for (std::size_t lv = 0; lv < levels; ++lv) {
            detail::add_scaled_int64(out.abs_sum, t[lv], top - (static_cast<int>(lv) + 2) * st.w);
            nonzero |= t[lv] != 0;
        }
        // s's limbs (two's complement, units of 2^low): the lower ones unsigned, as two 32-bit halves each.
        const auto words = static_cast<std::size_t>(st.s_words);
        const std::uint64_t* s = st.s_limbs.data() + (j * st.m + i) * words;
        const int low = top - (st.levels + 1) * st.w;
        for (std::size_t q = 0; q + 1 < words; ++q) {
            const int e = low + 64 * static_cast<int>(q);
            detail::add_scaled_int64(out.sum, static_cast<std::int64_t>(s[q] & 0xffffffffu), e);
            detail::add_scaled_int64(out.sum, static_cast<std::int64_t>(s[q] >> 32), e + 32);
        }
        const int top_limb = low + 64 * static_cast<int>(words - 1);
        detail::add_scaled_int64(out.sum, static_cast<std::int64_t>(s[words - 1]), top_limb);  // signed
    }
    // Far parts: a_far·b over the far entries of row i, a_near·b_far over the far entries of column j.
    for (const std::uint32_t l : st.far_a[i]) {
        const detail::entry_parts x = detail::split_entry(f, a[l]);
        const detail::entry_parts y = detail::split_entry(f, b[l]);
        if (y.special || y.significand == 0) continue;
        const std::uint64_t xf = detail::far_significand(x, st.row_top[i], st.w, st.sa);
        add_product_parts(out.sum, x.negative != y.negative, xf, x.exponent, y.significand, y.exponent);
        add_product_parts(out.abs_sum, false, xf, x.exponent, y.significand, y.exponent);
        nonzero |= xf != 0;
    }
    for (const std::uint32_t l : st.far_b[j]) {
        const detail::entry_parts x = detail::split_entry(f, a[l]);
        if (x.special || x.significand == 0) continue;
        const detail::entry_parts y = detail::split_entry(f, b[l]);
        const std::uint64_t xn = x.significand - detail::far_significand(x, st.row_top[i], st.w, st.sa);
        const std::uint64_t yf = detail::far_significand(y, st.col_top[j], st.w, st.sb);
        add_product_parts(out.sum, x.negative != y.negative, xn, x.exponent, yf, y.exponent);
        add_product_parts(out.abs_sum, false, xn, x.exponent, yf, y.exponent);
        nonzero |= xn != 0 && yf != 0;
    }
    // Inf/NaN products, each once.
    std::uint64_t specials = 0;
    for (const std::uint32_t l : st.special_a[i]) {
        out.sum.add_product_bits(f, a[l], b[l]);
        out.abs_sum.add_product_bits(f, a[l] & ~sign, b[l] & ~sign);
        ++specials;
    }
    for (const std::uint32_t l : st.special_b[j]) {
        if (detail::split_entry(f, a[l]).special) continue;  // counted with row i
        out.sum.add_product_bits(f, a[l], b[l]);
        out.abs_sum.add_product_bits(f, a[l] & ~sign, b[l] & ~sign);
        ++specials;
    }
    // Terms and the signed-zero state of the finite products (as the dot path records them).
    const std::uint64_t products = k - specials;
    bool not_negative_zero = nonzero, not_positive_zero = nonzero;
    if (!nonzero && products > 0) {  // every finite product is a signed zero: sign x XOR sign y
        for (std::size_t l = 0; l < k; ++l) {
            if (detail::split_entry(f, a[l]).special || detail::split_entry(f, b[l]).special) continue;
            const bool negative = ((a[l] ^ b[l]) & sign) != 0;
            not_negative_zero |= !negative;
            not_positive_zero |= negative;
        }
    }
    out.sum.note_terms(products, not_negative_zero, not_positive_zero);
    out.abs_sum.note_terms(products, products > 0, nonzero);
}

}  // namespace

int detail::element_min_product_exponent(const product_reference::state& st, std::size_t i, std::size_t j) {
    const format_info& f = *st.f;
    const int ra = st.row_min_exponent[i], cb = st.col_min_exponent[j];
    if (ra == INT_MAX || cb == INT_MAX || ra + cb >= f.emin) return f.emin;
    int smallest = f.emin;
    const detail::bit_row a = st.a.row(i, st.k), b = st.bt.row(j, st.k);
    for (std::size_t l = 0; l < st.k; ++l) {
        const detail::entry_parts x = detail::split_entry(f, a[l]);
        const detail::entry_parts y = detail::split_entry(f, b[l]);
        if (x.special || y.special || x.significand == 0 || y.significand == 0) continue;
        smallest = std::min(smallest, product_exponent_bits(f, a[l], b[l]));
    }
    return smallest;
}

namespace {

// The whole of Step S5 (either method), into a freshly constructed reference.
void build_element(const product_reference::state& st, std::size_t i, std::size_t j, reference& out) {
    const format_info& f = *st.f;
    // Per element, and Step S6's products (their T is not summed exactly: the dot path gives s and T at once, in
    // O(K) as the exact T alone would).
    if (st.plan.method == matmul_method::per_element || st.t_enclosed) {
        detail::dot_accumulator acc(f);
        const std::size_t column = st.batch > 1 ? (i / st.item_rows) * st.n + j : j;  // bt's row (batches stack)
        st.a.visit([&](const auto* a) {  // both copies have the format's width
            using bits = std::remove_cvref_t<decltype(*a)>;
            acc.add(a + i * st.k, st.bt.data<bits>() + column * st.k, st.k);
        });
        if (st.has_c) acc.add_term(st.c[i * st.n + j]);
        acc.finish(out);
        return;
    }
    build_sliced_element(st, i, j, out);
    if (st.has_c) {
        const std::uint64_t c = st.c[i * st.n + j];
        out.sum.add_bits(f, c);
        out.abs_sum.add_bits(f, c & ~(std::uint64_t{1} << (f.storage_bits - 1)));
    }
    const int smallest = detail::element_min_product_exponent(st, i, j);
    out.count = st.k + (st.has_c ? 1 : 0);
    out.has_initial = st.has_c;
    out.term_format = f.id;
    out.is_dot = true;
    out.min_product_exponent = smallest;
    out.product_may_underflow = smallest < f.emin;
}

// ---- Step S1: copies and per-row / per-column facts ---------------------------------------------------------------

// The entries of v as raw bits at out, row-major (rows x cols) or transposed (cols x rows), on `threads` workers
// when there are 2^16 entries or more. The transposed copy goes by tiles of 32 x 32 entries, so that its strided writes
// stay within a few pages.
template <floating_format T>
void copy_bits(const matrix_view<T>& v, bool transpose, typename format_traits<T>::bits_type* out,
               unsigned threads = 1) {
    constexpr std::size_t tile = 32;
    // Rows [i0, i1) of v (row-major copy), or columns [j0, j1) of v, that is rows of the transposed copy.
    auto rows = [&](std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i)
            for (std::size_t j = 0; j < v.cols; ++j) out[i * v.cols + j] = format_traits<T>::to_bits(v(i, j));
    };
    auto columns = [&](std::size_t j0, std::size_t j1) {
        for (std::size_t jt = j0; jt < j1; jt += tile)
            for (std::size_t it = 0; it < v.rows; it += tile) {
                const std::size_t je = std::min(j1, jt + tile), ie = std::min(v.rows, it + tile);
                for (std::size_t i = it; i < ie; ++i)
                    for (std::size_t j = jt; j < je; ++j) out[j * v.rows + i] = format_traits<T>::to_bits(v(i, j));
            }
    };
    const bool parallel = threads > 1 && v.rows * v.cols >= (std::size_t{1} << 16);
    if (!transpose) {
        if (parallel) detail::parallel_for(v.rows, threads, 64, rows);
        else rows(0, v.rows);
    } else {
        if (parallel) detail::parallel_for(v.cols, threads, 2 * tile, columns);
        else columns(0, v.cols);
    }
}

// For each row of a row-major rows x k bit matrix: grid top, smallest floor(log2 |x|), Inf/NaN columns; and with
// `spans` (the sliced method's Step S2) each entry's span: its row's grid top minus its lowest set bit (0 for zeros
// and Inf/NaN), so that the entry needs ceil(span / w) slices of w bits for any w (the planner then tries every width
// and slice count on the spans). One decoding per entry: the lowest set bits wait in `spans` (as a distance below
// the largest exponent any entry can have) until the row's top is known. Rows on `threads` workers (2^16 entries or
// more); the Inf/NaN columns are counted there and listed afterwards (rows that have any, in order).
template <class U>
void scan_rows(const format_info& f, const U* bits, std::size_t rows, std::size_t k, std::vector<int>& top,
               std::vector<int>& min_exponent, detail::index_lists& specials, std::vector<std::uint16_t>* spans,
               unsigned threads) {
    top.assign(rows, INT_MIN);
    min_exponent.assign(rows, INT_MAX);
    specials.offsets.assign(rows + 1, 0);
    specials.index.clear();
    if (spans != nullptr) spans->resize(rows * k);
    // Every finite non-zero entry's lowest set bit lies in [emin - p + 1, emax]: ceiling - lowest + 1 in [1, 2^12).
    const int ceiling = f.emax;
    auto scan = [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            const U* row = bits + r * k;
            std::uint16_t* span = spans != nullptr ? spans->data() + r * k : nullptr;
            int row_top = INT_MIN, row_min = INT_MAX;
            std::size_t special = 0;
            for (std::size_t l = 0; l < k; ++l) {
                const decoded d = decode_bits(f, row[l]);
                if (d.is_nan || d.is_inf) {
                    ++special;
                    if (span != nullptr) span[l] = 0;
                    continue;
                }
                if (d.significand == 0) {
                    if (span != nullptr) span[l] = 0;
                    continue;
                }
                const int width = std::bit_width(d.significand);
                row_top = std::max(row_top, d.exponent + width);
                row_min = std::min(row_min, d.exponent + width - 1);
                if (span != nullptr)
                    span[l] = static_cast<std::uint16_t>(ceiling - (d.exponent + std::countr_zero(d.significand)) + 1);
            }
            specials.offsets[r + 1] = special;  // the row's count, summed below
            top[r] = row_top == INT_MIN ? 0 : row_top;  // no finite non-zero entry: every slice is zero
            min_exponent[r] = row_min;
            if (span == nullptr || row_top == INT_MIN) continue;
            // span = top - lowest = top - (ceiling + 1 - stored) for a finite non-zero entry (stored >= 1); 0 stays 0.
            const int offset = row_top - ceiling - 1;
            for (std::size_t l = 0; l < k; ++l)
                if (span[l] != 0)  // <= emax - emin + p + 1 < 2^12
                    span[l] = static_cast<std::uint16_t>(span[l] + offset);
        }
    };
    if (threads > 1 && rows * k >= (std::size_t{1} << 16)) detail::parallel_for(rows, threads, 16, scan);
    else scan(0, rows);
    for (std::size_t r = 0; r < rows; ++r) {
        const bool any = specials.offsets[r + 1] != 0;
        specials.offsets[r + 1] += specials.offsets[r];
        if (!any) continue;
        const U* row = bits + r * k;
        for (std::size_t l = 0; l < k; ++l) {
            const decoded d = decode_bits(f, row[l]);
            if (d.is_nan || d.is_inf) specials.index.push_back(static_cast<std::uint32_t>(l));
        }
    }
}

// scan_rows over a copy at its format's width.
void scan_rows(const format_info& f, const detail::bit_matrix& bits, std::size_t rows, std::size_t k,
               std::vector<int>& top, std::vector<int>& min_exponent, detail::index_lists& specials,
               std::vector<std::uint16_t>* spans, unsigned threads) {
    bits.visit([&](const auto* data) { scan_rows(f, data, rows, k, top, min_exponent, specials, spans, threads); });
}

// How many entries have each span.
std::vector<std::size_t> span_histogram(const std::vector<std::uint16_t>& spans) {
    const std::uint16_t widest = spans.empty() ? 0 : *std::max_element(spans.begin(), spans.end());
    std::vector<std::size_t> hist(std::size_t{widest} + 1, 0);
    for (const std::uint16_t d : spans) ++hist[d];
    return hist;
}

// wider[d] = how many entries have a span above d (suffix sums of the histogram), so that the planner's far counts
// cost one look-up each.
std::vector<std::size_t> spans_above(const std::vector<std::size_t>& span_hist) {
    std::vector<std::size_t> wider(span_hist.size(), 0);
    for (std::size_t d = span_hist.size(); d-- > 1;) wider[d - 1] = wider[d] + span_hist[d];
    return wider;
}

// Entries needing more than `slices` slices of w bits: the far entries (the per-element part of Step S5).
std::size_t far_count(const std::vector<std::size_t>& wider, int w, int slices) {
    const auto limit = static_cast<std::size_t>(w) * static_cast<std::size_t>(slices);
    return limit < wider.size() ? wider[limit] : 0;
}

detail::index_lists far_entries(const std::vector<std::uint16_t>& spans, std::size_t rows, std::size_t k, int w,
                                int slices) {
    const auto limit = static_cast<std::size_t>(w) * static_cast<std::size_t>(slices);
    detail::index_lists out;
    out.offsets.assign(rows + 1, 0);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t l = 0; l < k; ++l)
            if (spans[r * k + l] > limit) out.index.push_back(static_cast<std::uint32_t>(l));
        out.offsets[r + 1] = out.index.size();
    }
    return out;
}

// ---- Step S2: the plan ----------------------------------------------------------------------------------------------

constexpr int max_slices = detail::max_slices_per_side;  // entries needing more are far (added per element)

// Estimated ns per product of the per-element path (exactref::dot, one thread; bench_dot on the 2-core CI machine:
// 1.9 ns binary32, 3.1 ns binary64), by format.
double per_element_product_ns(const format_info& f) {
    return f.id == dtype::float64 ? 3.1 : 1.9;
}
constexpr double far_product_ns = 40.0;  // one exact 106-bit far product into s and T (two accumulators)
constexpr double level_ns = 1.0;         // per slice product per element: conversion to the level sums (int8)
// The binary64 engine's work around its GEMMs (Steps S3-S4): per entry of a slice operand (slicing it, its memory's
// first touch) and per feed per element (a GEMM output converted and added into one level; Karatsuba's pairs feed
// several). Measured with bench_gemm at 1024^3 float64 N(0, 1) on Emerald Rapids (2026-12-07): 4 x 4 paired slices
// (10 GEMMs, 20 operands, 22 feeds) took 517-544 ms, 3 x 3 unpaired (9 GEMMs, 6 operands, 9 feeds) 388-412 ms; one
// GEMM is about 30 ms, so the 14 operands and 13 feeds more cost about 100 ms.
constexpr double operand_ns = 4.0;
constexpr double feed_ns = 3.0;
constexpr double gemm_call_ns = 2000.0;  // per slice GEMM call: the BLAS call, its buffers, the output block
constexpr double sliced_fixed_ns = 10000.0;  // per sliced build: operand matrices, level arrays, threads

// Slice width: K·2^(2w) <= 2^53, or K·2^(2w+2) <= 2^53 when slices are paired (operands below 2^(w+1)).
int slice_width(std::size_t k, bool paired) {
    const int log2k = k <= 1 ? 0 : std::bit_width(k - 1);  // ceil(log2 K)
    return (53 - log2k - (paired ? 2 : 0)) / 2;
}

// The engines the planner prices: the one forced by matmul_options::engine, else by EXACTREF_GEMM_ENGINE, else
// binary64 and the best int8 level this CPU runs. A forced engine this CPU cannot run is an error, never a fallback.
std::vector<gemm_engine> candidate_engines(gemm_engine requested) {
    detail::check_blas_kernel_setting();  // a bad EXACTREF_BLAS_KERNEL (src/blas_kernel.h)
    if (requested == gemm_engine::automatic) {
        const char* env = std::getenv("EXACTREF_GEMM_ENGINE");
        const std::string value = env == nullptr ? "" : env;
        if (value == "binary64") requested = gemm_engine::binary64;
        else if (value == "int8") requested = detail::best_int8_engine();
        else if (value == "int8-vnni") requested = gemm_engine::int8_vnni;
        else if (value == "int8-plain") requested = gemm_engine::int8_plain;
        else if (!value.empty() && value != "auto")
            throw std::invalid_argument("exactref::matmul: EXACTREF_GEMM_ENGINE = '" + value +
                                        "' is none of binary64, int8, int8-vnni, int8-plain, auto");
    }
    if (requested == gemm_engine::automatic) return {gemm_engine::binary64, detail::best_int8_engine()};
    if (requested != gemm_engine::binary64 && !detail::int8_engine_supported(requested))
        throw std::runtime_error(std::string("exactref::matmul: the engine ") + engine_name(requested) +
                                 " was forced but this CPU or OS cannot run it (AVX-512 F/BW/VNNI with zmm state "
                                 "saved by the OS); use int8-plain or binary64");
    return {requested};
}

// A planner override for tests and benchmarks (the values are the same either way): the environment variable `name`
// unset, empty or "auto" gives 0, its i-th word in `words` (space-separated) gives i + 1, anything else is an error
// that names the words.
int override_from_environment(const char* name, const std::string& words) {
    const char* env = std::getenv(name);
    const std::string value = env == nullptr ? "" : env;
    if (value.empty() || value == "auto") return 0;
    std::size_t at = 0;
    for (int choice = 1; at < words.size(); ++choice) {
        const std::size_t end = std::min(words.find(' ', at), words.size());
        if (words.compare(at, end - at, value) == 0) return choice;
        at = end + 1;
    }
    std::string listed;
    for (const char c : words) listed += c == ' ' ? std::string(", ") : std::string(1, c);
    throw std::invalid_argument("exactref::matmul: " + std::string(name) + " = '" + value + "' is none of " + listed +
                                ", auto");
}

// How T is computed: EXACTREF_GEMM_T = levels (T's slice GEMMs), enclosed (Step S6's one GEMM of |A|·|B|, binary64
// terms with row and column scaling), auto or unset (the planner prices both).
enum class t_source { automatic, levels, enclosed };
t_source t_source_from_environment() {
    return static_cast<t_source>(override_from_environment("EXACTREF_GEMM_T", "levels enclosed"));
}

// Whether the binary64 engine pairs slices: EXACTREF_GEMM_PAIRING = always (whenever both sides have two slices or
// more: the paired configurations only), never (as matmul_options::pair_slices = false), auto or unset (the planner
// prices both); pair_slices = false wins over always.
enum class pairing { automatic, always, never };
pairing pairing_from_environment() {
    return static_cast<pairing>(override_from_environment("EXACTREF_GEMM_PAIRING", "always never"));
}

template <floating_format T>
void check_shapes(const matrix_view<T>& a, const matrix_view<T>& b, const matrix_view<T>* c0) {
    auto shape = [](const auto& v) { return std::to_string(v.rows) + " x " + std::to_string(v.cols); };
    if (a.cols != b.rows)
        throw std::invalid_argument("exactref::matmul: A is " + shape(a) + " and B is " + shape(b) +
                                    ": the columns of A must equal the rows of B");
    if (c0 != nullptr && (c0->rows != a.rows || c0->cols != b.cols))
        throw std::invalid_argument("exactref::matmul: C0 is " + shape(*c0) + " but A·B is " +
                                    std::to_string(a.rows) + " x " + std::to_string(b.cols) +
                                    ": pass an existing output of the product's shape");
    if ((a.data == nullptr && a.rows * a.cols != 0) || (b.data == nullptr && b.rows * b.cols != 0) ||
        (c0 != nullptr && c0->data == nullptr && c0->rows * c0->cols != 0))
        throw std::invalid_argument(std::string("exactref::matmul: ") +
                                    (c0 != nullptr && c0->data == nullptr ? "C0" : a.data == nullptr ? "A" : "B") +
                                    " is a matrix view with elements but a null data pointer");
    if (a.cols > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("exactref::matmul: K = " + std::to_string(a.cols) + " exceeds 2^32 - 1");
}

}  // namespace

// ---- public API -----------------------------------------------------------------------------------------------------

template <floating_format T>
matrix_view<T> row_major(std::span<const T> data, std::size_t rows, std::size_t cols) {
    std::size_t size = 0;
    if (__builtin_mul_overflow(rows, cols, &size) || data.size() != size)
        throw std::invalid_argument("exactref::row_major: " + std::to_string(data.size()) + " elements for a " +
                                    std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix: pass exactly rows * cols elements");
    return {data.data(), rows, cols, static_cast<std::ptrdiff_t>(cols), 1};
}

template <floating_format T>
matrix_view<T> col_major(std::span<const T> data, std::size_t rows, std::size_t cols) {
    std::size_t size = 0;
    if (__builtin_mul_overflow(rows, cols, &size) || data.size() != size)
        throw std::invalid_argument("exactref::col_major: " + std::to_string(data.size()) + " elements for a " +
                                    std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix: pass exactly rows * cols elements");
    return {data.data(), rows, cols, 1, static_cast<std::ptrdiff_t>(rows)};
}

const char* engine_name(gemm_engine engine) noexcept {
    switch (engine) {
        case gemm_engine::binary64: return "binary64";
        case gemm_engine::int8_vnni: return "int8-vnni";
        case gemm_engine::int8_plain: return "int8-plain";
        case gemm_engine::automatic: break;
    }
    return "automatic";
}

std::string matmul_plan::describe() const {
    if (method != matmul_method::sliced) return "per element: one superaccumulator dot product per element";
    return std::string("sliced on ") + engine_name(engine) + ": " + std::to_string(slices_a) + " x " + std::to_string(slices_b) + " slices of " +
           std::to_string(slice_bits) + " bits" + (paired ? ", paired" : "") + " (" + std::to_string(slice_gemms) +
           " slice GEMMs for s, " +
           (t_enclosed ? std::string("1 binary64 GEMM of |A|·|B| enclosing T")
                       : std::to_string(slice_gemms) + " for T") +
           "), " + std::to_string(far_a) + " + " +
           std::to_string(far_b) + " far entries, " + std::to_string(special_a) + " + " + std::to_string(special_b) +
           " Inf/NaN entries";
}

product_reference::product_reference() : state_(std::make_unique<state>()) {}
product_reference::product_reference(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
product_reference::~product_reference() = default;
product_reference::product_reference(product_reference&&) noexcept = default;
product_reference& product_reference::operator=(product_reference&&) noexcept = default;

// A moved-from product_reference has no state: it then reads as the empty 0 x 0 product.
const product_reference::state& product_reference::st() const noexcept {
    static const state empty;
    return state_ != nullptr ? *state_ : empty;
}

std::size_t product_reference::rows() const noexcept { return st().m; }
std::size_t product_reference::cols() const noexcept { return st().n; }
std::size_t product_reference::inner() const noexcept { return st().k; }
std::size_t product_reference::batch() const noexcept { return st().batch; }
dtype product_reference::term_format() const noexcept { return st().f->id; }
bool product_reference::has_initial() const noexcept { return st().has_c; }
const matmul_plan& product_reference::plan() const noexcept { return st().plan; }

void product_reference::element(std::size_t i, std::size_t j, reference& out) const {
    if (i >= st().m || j >= st().n)
        throw std::out_of_range("exactref::product_reference::element(" + std::to_string(i) + ", " +
                                std::to_string(j) + "): the product is " + std::to_string(st().m) + " x " +
                                std::to_string(st().n));
    out = reference{};
    build_element(st(), i, j, out);
}

reference product_reference::element(std::size_t i, std::size_t j) const {
    reference r;
    element(i, j, r);
    return r;
}

reference_array product_reference::to_array(unsigned threads) const {
    const state& st = this->st();
    reference_array out;
    out.rows = st.m;
    out.cols = st.n;
    out.elements.resize(st.m * st.n);
    detail::parallel_for(st.m * st.n, resolve_threads(threads), 256, [&](std::size_t begin, std::size_t end) {
        for (std::size_t e = begin; e < end; ++e) {
            build_element(st, e / st.n, e % st.n, out.elements[e]);
            out.elements[e].cache_enclosures();
        }
    });
    return out;
}

template <floating_format T>
product_reference exact_matmul(matrix_view<T> a, matrix_view<T> b, const matrix_view<T>* c0,
                               const matmul_options& options) {
    check_shapes(a, b, c0);
    if (options.max_slices < 0 || options.max_slices > max_slices)
        throw std::invalid_argument("exactref::matmul: max_slices = " + std::to_string(options.max_slices) +
                                    " is outside 0 .. " + std::to_string(max_slices) + " (0 lets the planner choose)");
    auto st = std::make_unique<product_reference::state>();
    const format_info& f = format_traits<T>::info;
    st->m = a.rows;
    st->n = b.cols;
    st->k = a.cols;
    st->f = &f;
    st->has_c = c0 != nullptr;
    // Step S1
    const unsigned threads = resolve_threads(options.threads);
    st->item_rows = st->m;
    using bits = typename format_traits<T>::bits_type;
    st->a.resize(a.rows * a.cols, f.storage_bits);
    st->bt.resize(b.rows * b.cols, f.storage_bits);
    copy_bits(a, false, st->a.data<bits>(), threads);
    copy_bits(b, true, st->bt.data<bits>(), threads);
    if (c0 != nullptr) {
        st->c.resize(c0->rows * c0->cols, f.storage_bits);
        copy_bits(*c0, false, st->c.data<bits>(), threads);
    }
    const std::size_t m = st->m, n = st->n, k = st->k;
    const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    // The BLAS takes int dimensions: a side beyond INT_MAX (never seen in practice) goes the per-element way.
    const bool blas_sized = std::max({m, n, k}) <= static_cast<std::size_t>(INT_MAX);
    const bool per_element = options.method == matmul_method::per_element || m == 0 || n == 0 || k == 0 || !blas_sized;
    // Step S1, and Step S2's spans in the same pass over the copies.
    std::vector<std::uint16_t> spans_a, spans_b;
    scan_rows(f, st->a, st->m, st->k, st->row_top, st->row_min_exponent, st->special_a,
              per_element ? nullptr : &spans_a, threads);
    scan_rows(f, st->bt, st->n, st->k, st->col_top, st->col_min_exponent, st->special_b,
              per_element ? nullptr : &spans_b, threads);
    st->plan.special_a = st->special_a.total();
    st->plan.special_b = st->special_b.total();
    st->far_a.offsets.assign(st->m + 1, 0);
    st->far_b.offsets.assign(st->n + 1, 0);
    if (per_element) {
        st->plan.method = matmul_method::per_element;
        return product_reference(std::move(st));
    }

    // Step S2: slice width, counts and pairing.
    const std::vector<std::size_t> hist_a = spans_above(span_histogram(spans_a));
    const std::vector<std::size_t> hist_b = spans_above(span_histogram(spans_b));
    double best = std::numeric_limits<double>::infinity();
    int best_a = 1, best_b = 1;
    bool best_paired = false, best_s6 = false;
    gemm_engine best_engine = gemm_engine::binary64;
    const int cap = options.max_slices == 0 ? max_slices : options.max_slices;
    const t_source t_choice = t_source_from_environment();
    const pairing pair_choice = pairing_from_environment();
    for (const gemm_engine engine : candidate_engines(options.engine)) {
        const bool int8 = engine != gemm_engine::binary64;
        // The measured price per multiply-add: OpenBLAS's DGEMM, or the int8 micro-kernel (7-bit slices, unpaired).
        const double fma_ns = int8 ? detail::int8_mac_ns(engine) : detail::blas_fma_ns();
        for (const bool paired : {false, true}) {
            if (paired && (!options.pair_slices || int8 || pair_choice == pairing::never)) continue;
            if (!paired && !int8 && options.pair_slices && pair_choice == pairing::always) continue;
            const int w = int8 ? detail::int8_slice_width() : slice_width(k, paired);
            // More slices than the widest entry needs only add GEMMs: the loops stop one past the count with no far
            // entry.
            for (int sa = 1; sa <= cap; ++sa) {
                if (sa > 1 && far_count(hist_a, w, sa - 1) == 0) break;
                for (int sb = 1; sb <= cap; ++sb) {
                    if (sb > 1 && far_count(hist_b, w, sb - 1) == 0) break;
                    const auto gemms = static_cast<double>(detail::slice_gemm_count(sa, sb, paired));
                    // Around the GEMMs: int8, the widening of each product into the levels; binary64, the slice
                    // operands (s_A + s(s-1)/2 of m x K, s_B + s(s-1)/2 of K x n, s = min(s_A, s_B) when paired)
                    // and the feeds (s_A·s_B + s(s-1)/2 per element: each diagonal GEMM of a pair feeds s levels).
                    const double pairs = paired ? std::min(sa, sb) * (std::min(sa, sb) - 1) / 2.0 : 0.0;
                    const double mn = static_cast<double>(m * n), lefts = (sa + pairs) * static_cast<double>(m * k),
                                 rights = (sb + pairs) * static_cast<double>(k * n);
                    const double around = int8 ? gemms * mn * level_ns
                                               : (sa * sb + pairs) * mn * feed_ns + (lefts + rights) * operand_ns;
                    // T: as many slice GEMMs again (exact levels: the right operands sliced again, the left ones'
                    // signs cleared in place), or Step S6's one binary64 GEMM of |A|·|B| (all four formats;
                    // OpenBLAS's price, and the magnitudes written as operands) when that is cheaper: not for 1 x 1
                    // slices on binary64, whose one T slice GEMM costs about the same and gives T exactly.
                    const double t_around = int8 ? around : (sa * sb + pairs) * mn * feed_ns + rights * operand_ns +
                                                                lefts * level_ns;
                    const double t_levels_cost = gemms * (mnk * fma_ns + gemm_call_ns) + t_around;
                    const double t_hat_cost = mnk * detail::blas_fma_ns() + gemm_call_ns + mn * level_ns +
                                              static_cast<double>((m + n) * k) * operand_ns;
                    const bool s6 = t_choice != t_source::levels &&
                                    (t_choice == t_source::enclosed || t_hat_cost < t_levels_cost);
                    const double t_cost = s6 ? t_hat_cost : t_levels_cost;
                    const double cost = sliced_fixed_ns + gemms * (mnk * fma_ns + gemm_call_ns) + around + t_cost +
                                        (static_cast<double>(far_count(hist_a, w, sa)) * static_cast<double>(n) +
                                         static_cast<double>(far_count(hist_b, w, sb)) * static_cast<double>(m)) *
                                            far_product_ns;
                    if (cost < best) {
                        best = cost;
                        best_a = sa;
                        best_b = sb;
                        best_paired = paired;
                        best_engine = engine;
                        best_s6 = s6;
                    }
                }
            }
        }
    }
    if (options.method == matmul_method::automatic && mnk * per_element_product_ns(f) < best) {
        st->plan.method = matmul_method::per_element;
        return product_reference(std::move(st));
    }
    const bool int8 = best_engine != gemm_engine::binary64;
    const int w = int8 ? detail::int8_slice_width() : slice_width(k, best_paired);
    st->plan.method = matmul_method::sliced;
    st->plan.engine = best_engine;
    st->w = w;
    st->sa = best_a;
    st->sb = best_b;
    st->karatsuba = best_paired && std::min(best_a, best_b) >= 2;
    st->levels = best_a + best_b - 1;
    st->plan.slice_bits = w;
    st->plan.slices_a = best_a;
    st->plan.slices_b = best_b;
    st->plan.paired = st->karatsuba;
    st->plan.slice_gemms = detail::slice_gemm_count(best_a, best_b, st->karatsuba);
    st->far_a = far_entries(spans_a, m, k, w, best_a);
    st->far_b = far_entries(spans_b, n, k, w, best_b);
    std::vector<std::uint16_t>().swap(spans_a);  // not needed any more: their memory goes before Steps S3-S6 take any
    std::vector<std::uint16_t>().swap(spans_b);
    st->plan.far_a = st->far_a.total();
    st->plan.far_b = st->far_b.total();
    st->t_enclosed = best_s6;
    st->plan.t_enclosed = best_s6;
    // Steps S3, S4 (s, and T's levels without Step S6), then Step S6
    if (int8) detail::build_int8_levels(*st, best_engine, threads);
    else detail::build_sliced_levels(*st, threads);
    if (int8 && st->t_enclosed) detail::build_t_estimate(*st, threads);  // build_sliced_levels runs it itself
    return product_reference(std::move(st));
}

template <floating_format T>
std::vector<product_reference> exact_matmul_batched(std::span<const matrix_view<T>> a,
                                                    std::span<const matrix_view<T>> b,
                                                    std::span<const matrix_view<T>> c0,
                                                    const matmul_options& options) {
    if (a.size() != b.size() || (!c0.empty() && c0.size() != a.size()))
        throw std::invalid_argument("exactref::matmul_batched: " + std::to_string(a.size()) + " views of A, " +
                                    std::to_string(b.size()) + " of B and " + std::to_string(c0.size()) +
                                    " of C0: pass one A and one B per product (and one C0 each, or none)");
    std::vector<product_reference> out;
    if (a.empty()) return out;
    for (std::size_t p = 0; p < a.size(); ++p) {
        try {
            check_shapes(a[p], b[p], c0.empty() ? nullptr : &c0[p]);
            if (a[p].rows != a[0].rows || a[p].cols != a[0].cols || b[p].cols != b[0].cols)
                throw std::invalid_argument("exactref::matmul: its shapes differ from those of product 0 (" +
                                            std::to_string(a[0].rows) + " x " + std::to_string(a[0].cols) +
                                            " times " + std::to_string(b[0].rows) + " x " +
                                            std::to_string(b[0].cols) + "): every product of a batch has the same");
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string(e.what()) + " (product " + std::to_string(p) + " of the batch)");
        }
    }
    const std::size_t batch = a.size(), m = a[0].rows, k = a[0].cols, n = b[0].cols;
    if (!detail::batch_shares_reference(batch, m, k, n, format_traits<T>::info, options)) {
        out.reserve(batch);
        for (std::size_t p = 0; p < batch; ++p)
            out.push_back(exact_matmul<T>(a[p], b[p], c0.empty() ? nullptr : &c0[p], options));
        return out;
    }
    struct views {
        std::span<const matrix_view<T>> a, b, c;
    } all{a, b, c0};
    detail::batch_item<T> item = [](const void* context, std::size_t p, matrix_view<T>& va, matrix_view<T>& vb,
                                    matrix_view<T>& vc) {
        const auto& v = *static_cast<const views*>(context);
        va = v.a[p];
        vb = v.b[p];
        if (!v.c.empty()) vc = v.c[p];
    };
    out.push_back(detail::shared_batch_reference<T>(batch, m, k, n, !c0.empty(), item, &all));
    return out;
}

namespace detail {

bool batch_shares_reference(std::size_t batch, std::size_t m, std::size_t k, std::size_t n, const format_info& f,
                            const matmul_options& options) noexcept {
    // Per element when even the sliced build's fixed part (its setup and two GEMM calls) costs more than the dots.
    const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    return batch > 1 && options.method != matmul_method::sliced &&
           (options.method == matmul_method::per_element ||
            mnk * per_element_product_ns(f) < sliced_fixed_ns + 2 * gemm_call_ns);
}

template <floating_format T>
product_reference shared_batch_reference(std::size_t batch, std::size_t m, std::size_t k, std::size_t n, bool has_c,
                                         batch_item<T> item, const void* context) {
    const format_info& f = format_traits<T>::info;
    auto st = std::make_unique<product_reference::state>();
    st->batch = batch;
    st->item_rows = m;
    st->m = batch * m;
    st->n = n;
    st->k = k;
    st->f = &f;
    st->has_c = has_c;
    st->plan.method = matmul_method::per_element;
    using bits = typename format_traits<T>::bits_type;
    st->a.resize(st->m * k, f.storage_bits);
    st->bt.resize(batch * n * k, f.storage_bits);
    if (has_c) st->c.resize(st->m * n, f.storage_bits);
    matrix_view<T> va, vb, vc;
    for (std::size_t p = 0; p < batch; ++p) {
        item(context, p, va, vb, vc);
        copy_bits(va, false, st->a.data<bits>() + p * m * k);
        copy_bits(vb, true, st->bt.data<bits>() + p * n * k);
        if (has_c) copy_bits(vc, false, st->c.data<bits>() + p * m * n);
    }
    const std::uint64_t exponent_field = std::uint64_t{f.special_exponent_field()} << (f.precision - 1);
    auto specials = [&](const detail::bit_matrix& copy) {
        const bits* x = copy.data<bits>();
        std::size_t count = 0;
        for (std::size_t e = 0; e < copy.size(); ++e) count += (x[e] & exponent_field) == exponent_field ? 1 : 0;
        return count;
    };
    st->plan.special_a = specials(st->a);
    st->plan.special_b = specials(st->bt);
    return product_reference(std::move(st));
}

}  // namespace detail

#define EXACTREF_INSTANTIATE_GEMM(T)                                                                              \
    template matrix_view<T> row_major<T>(std::span<const T>, std::size_t, std::size_t);                          \
    template matrix_view<T> col_major<T>(std::span<const T>, std::size_t, std::size_t);                          \
    template product_reference exact_matmul<T>(matrix_view<T>, matrix_view<T>, const matrix_view<T>*,            \
                                               const matmul_options&);                                            \
    template std::vector<product_reference> exact_matmul_batched<T>(                                              \
        std::span<const matrix_view<T>>, std::span<const matrix_view<T>>, std::span<const matrix_view<T>>,      \
        const matmul_options&);                                                                                  \
    template product_reference detail::shared_batch_reference<T>(std::size_t, std::size_t, std::size_t,          \
                                                                 std::size_t, bool, detail::batch_item<T>,        \
                                                                 const void*);
EXACTREF_INSTANTIATE_GEMM(double)
EXACTREF_INSTANTIATE_GEMM(float)
EXACTREF_INSTANTIATE_GEMM(float16)
EXACTREF_INSTANTIATE_GEMM(bfloat16)
#undef EXACTREF_INSTANTIATE_GEMM

}  // namespace exactref

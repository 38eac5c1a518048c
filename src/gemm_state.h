// Internal to src/gemm*.cpp: what product_reference keeps (docs/algorithms/ozaki.md, "Layout").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>  // std::allocator
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "covers_filter.h"  // next_up, next_down (Step S6's outward rounding)
#include "exactref/detail/covers_filter.h"  // s_value_words, pack_levels (s's limbs)
#include "exactref/format.h"
#include "exactref/gemm.h"

namespace exactref {

namespace detail {

/// The most slices per side of a sliced product (matmul_options::max_slices); entries needing more are far.
inline constexpr int max_slices_per_side = 16;

/// Allocator of a product's large arrays (the copies of A and B, the level sums, t̂, the slice operands and GEMM
/// outputs): resize() leaves the elements uninitialised (each array's builder writes every element before any is
/// read: Steps S1, S3, S4, S6), which saves a zeroing pass over ~100 MB for a 1024^3 binary32 build. (Transparent huge
/// pages for them were tried and were slower in a KVM guest: docs/performance.md, "The cost outside the slice GEMMs".)
template <class T>
struct bulk_allocator {
    using value_type = T;
    bulk_allocator() = default;
    template <class U>
    bulk_allocator(const bulk_allocator<U>&) noexcept {}
    T* allocate(std::size_t count) { return std::allocator<T>{}.allocate(count); }
    void deallocate(T* p, std::size_t count) noexcept { std::allocator<T>{}.deallocate(p, count); }
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialised: no zeroing pass
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    friend bool operator==(const bulk_allocator&, const bulk_allocator&) noexcept { return true; }
};
template <class T>
using bulk_vector = std::vector<T, bulk_allocator<T>>;

/// One row of a bit_matrix: entry l's raw bits as a 64-bit word (the low storage_bits), whatever the width.
struct bit_row {
    const void* data = nullptr;
    int width = 64;  // bits an entry: 16, 32 or 64
    std::uint64_t operator[](std::size_t l) const noexcept {
        if (width == 64) return static_cast<const std::uint64_t*>(data)[l];
        if (width == 32) return static_cast<const std::uint32_t*>(data)[l];
        return static_cast<const std::uint16_t*>(data)[l];
    }
};

/// The raw bits of a format's entries at the format's own width (2, 4 or 8 bytes an entry): Step S1's copies of A,
/// B and C0 (as 64-bit words they took 4 times the memory of binary16 operands and twice that of binary32 ones).
/// Exactly one of the three arrays is in use, that of the width resize() was given. Hot loops take the typed array
/// through visit() (one instantiation per width); scattered reads use operator[] or row().
class bit_matrix {
public:
    /// Room for `count` entries of `storage_bits` (16, 32 or 64) bits each, uninitialised (Step S1 writes them all).
    void resize(std::size_t count, int storage_bits) {
        width_ = storage_bits;
        count_ = count;
        b16_.resize(storage_bits == 16 ? count : 0);
        b32_.resize(storage_bits == 32 ? count : 0);
        b64_.resize(storage_bits == 64 ? count : 0);
    }
    std::size_t size() const noexcept { return count_; }
    /// The memory the entries take.
    std::size_t bytes() const noexcept { return count_ * static_cast<std::size_t>(width_ / 8); }
    int width() const noexcept { return width_; }
    std::uint64_t operator[](std::size_t e) const noexcept { return row(0, 0)[e]; }
    /// Entries [r·k, r·k + k): row r of a row-major matrix with k columns.
    bit_row row(std::size_t r, std::size_t k) const noexcept {
        const std::size_t at = r * k;
        if (width_ == 64) return {b64_.data() + at, 64};
        if (width_ == 32) return {b32_.data() + at, 32};
        return {b16_.data() + at, 16};
    }
    /// f(p) with p the typed array (const std::uint16_t*, std::uint32_t* or std::uint64_t*).
    template <class F>
    decltype(auto) visit(F&& f) const {
        if (width_ == 64) return f(static_cast<const std::uint64_t*>(b64_.data()));
        if (width_ == 32) return f(static_cast<const std::uint32_t*>(b32_.data()));
        return f(static_cast<const std::uint16_t*>(b16_.data()));
    }
    /// The typed array to write (U = the format's bits type, std::uint16_t, std::uint32_t or std::uint64_t).
    template <class U>
    U* data() noexcept {
        if constexpr (sizeof(U) == 8) return b64_.data();
        else if constexpr (sizeof(U) == 4) return b32_.data();
        else return b16_.data();
    }
    template <class U>
    const U* data() const noexcept {
        return const_cast<bit_matrix*>(this)->data<U>();
    }

private:
    int width_ = 64;
    std::size_t count_ = 0;
    bulk_vector<std::uint16_t> b16_;
    bulk_vector<std::uint32_t> b32_;
    bulk_vector<std::uint64_t> b64_;
};

/// Lists of column indices per row (compressed rows): row r holds index[offsets[r] .. offsets[r+1]).
struct index_lists {
    std::vector<std::size_t> offsets;
    std::vector<std::uint32_t> index;
    std::span<const std::uint32_t> operator[](std::size_t r) const noexcept {
        return {index.data() + offsets[r], offsets[r + 1] - offsets[r]};
    }
    std::size_t total() const noexcept { return index.size(); }
};

/// A finite value in integer parts: (negative ? -1 : 1)·significand·2^exponent (exponent of the lowest significand
/// bit); special = Inf or NaN.
struct entry_parts {
    bool special = false;
    bool negative = false;
    std::uint64_t significand = 0;
    int exponent = 0;
};
entry_parts split_entry(const format_info& f, std::uint64_t bits) noexcept;


/// The part of an entry below the last of `slices` slices under `top` (its "far" bits), as a significand at the same
/// exponent (the rest is the "near" part, entry - far, with the same sign).
std::uint64_t far_significand(const entry_parts& e, int top, int w, int slices) noexcept;

}  // namespace detail

struct product_reference::state {
    // Shape, format, the inputs as raw bits.
    std::size_t m = 0, n = 0, k = 0;
    // A batch of B products (exact_matmul_batched, per-element method only): m = B·item_rows stacked rows of A and
    // C0; bt holds B·n rows, column j of product b at row b·n + j. Unbatched: batch = 1, item_rows = m.
    std::size_t batch = 1, item_rows = 0;
    const format_info* f = &binary64_info;
    bool has_c = false;
    matmul_plan plan;
    detail::bit_matrix a;   // A, row-major m x k
    detail::bit_matrix bt;  // B transposed, row-major n x k: column j of B is bt[j·k .. j·k + k)
    detail::bit_matrix c;   // C0, row-major m x n (empty without one)

    // For min_product_exponent: min floor(log2 |x|) over the finite non-zero entries of each row of A / column of B
    // (INT_MAX when there is none); floor(log2 |a·b|) >= the sum of the two.
    std::vector<int> row_min_exponent, col_min_exponent;
    // Inf/NaN entries: per row of A the columns l, per column of B the rows l.
    detail::index_lists special_a, special_b;

    // Sliced method (Steps S1-S5 of ozaki.md).
    int w = 0;                       // slice width in bits
    int sa = 0, sb = 0;              // slices per row of A, per column of B
    int levels = 0;                  // sa + sb - 1
    bool karatsuba = false;          // slices 0 .. min(sa, sb)-1 paired (slice_gemms); w then has K·2^(2w+2) <= 2^53
    std::vector<int> row_top;        // E_i: |A(i, l)| < 2^E_i for every finite l
    std::vector<int> col_top;        // F_j: |B(l, j)| < 2^F_j
    // s's near part, element (i, j) at limbs (j·m + i)·s_words .. + s_words: the exact Σ_t s_t·2^(E_i + F_j -
    // (t + 2)·w) of its level sums s_t = Σ_{p+q=t} (A_p·B_q)(i, j), in units of 2^(E_i + F_j - (levels + 1)·w), as one
    // two's-complement integer (detail::pack_levels; s_words = detail::s_value_words(K, levels, w): binary32's three
    // levels in two limbs, binary64's five in three). T's level sums, Σ_{p+q=t} (|A_p|·|B_q|)(i, j) at
    // ((j·m + i)·levels + t) in units of 2^(E_i + F_j - (t + 2)·w) (empty with Step S6: see t_enclosed).
    int s_words = 0;
    detail::bulk_vector<std::uint64_t> s_limbs;
    detail::bulk_vector<std::int64_t> t_levels;
    // Step S6 (ozaki.md): T is not summed exactly. t_hat(i, j) at j·m + i is one binary64 GEMM's |A|·|B| (Inf/NaN
    // entries as 0; binary64 terms: of the scaled |A|, |B|, scaled back, NaN where it cannot enclose T), which
    // encloses T (t_enclosure); element(i, j) computes its exact T from a and bt on demand (the per-element dot path).
    bool t_enclosed = false;
    detail::bulk_vector<double> t_hat;
    // T_lo = t_hat·t_below, T_hi = t_hat·t_above before the outward steps (t_enclosure): t_below = 1 - g exactly,
    // t_above >= (1 - g)/(1 - 2g), g = (K - 1)·2^-52 (binary64 terms: g = K·2^-52, t_above one step more; set by
    // build_t_estimate).
    double t_below = 1, t_above = 1;
    // Entries with bits below the last slice ("far"): per row of A the columns l, per column of B the rows l.
    detail::index_lists far_a, far_b;
};

namespace detail {
/// One slice GEMM of Step S4: left operand `left` (slice p of A, or for p >= s_A the sum of the pair of slices it
/// stands for) times right operand `right`, added to the levels in `into` with coefficient +1 or -1.
struct slice_gemm {
    int left = 0, right = 0;
    std::vector<std::pair<int, int>> into;  // (level, +1 or -1)
};
/// The slice GEMMs for s_A x s_B slices: every pair (p, q) once (karatsuba false, s_A·s_B GEMMs), or with slices
/// 0 .. s-1 of both sides paired, s = min(s_A, s_B): A_p·B_p, and (A_p + A_q)·(B_p + B_q) - A_p·B_p - A_q·B_q for the
/// level p + q of p < q < s, then the unpaired rest: s(s+1)/2 + s_A·s_B - s² GEMMs.
std::vector<slice_gemm> slice_gemms(int sa, int sb, bool karatsuba);
/// slice_gemms(sa, sb, karatsuba).size(), without building them (the planner asks for every sa, sb).
constexpr int slice_gemm_count(int sa, int sb, bool karatsuba) noexcept {
    const int s = karatsuba ? (sa < sb ? sa : sb) : 0;
    return s * (s + 1) / 2 + sa * sb - s * s;
}
/// s_value_words for st's K, levels and w. The planner's widths keep it within s_max_words (ceil(log2 K) + 2w <= 53,
/// at most 31 levels of at most 26 bits: 835 bits); checked so that no other plan can overrun pack_levels' limbs.
inline int s_words_of(const product_reference::state& st) {
    const int words = s_value_words(st.k, st.levels, st.w);
    if (words > s_max_words)
        throw std::logic_error("exactref::matmul: s would need " + std::to_string(words) + " 64-bit words, more than " +
                               std::to_string(s_max_words) + " (K = " + std::to_string(st.k) + ", " +
                               std::to_string(st.levels) + " levels of " + std::to_string(st.w) + " bits)");
    return words;
}
/// Steps S3-S4: fills s_limbs (s_words set here) and t_levels of `st` (w, sa, sb, levels and the tops already set) with
/// the BLAS GEMM; then Step S6 (build_t_estimate) when st.t_enclosed.
void build_sliced_levels(product_reference::state& st, unsigned threads);
/// Whether Step S6's GEMM of |A|·|B| forms the products of format f exactly (p <= 24: at most 48 significand bits,
/// exponents in [-298, 256], so only its additions round). Binary64 terms take Step S6 with row and column scaling
/// instead (their products round; entries far below their row's top are dropped and bounded).
constexpr bool t_exact_products(const format_info& f) noexcept { return f.precision <= 24; }
/// Step S6: t_hat = |A|·|B| by one binary64 GEMM (OpenBLAS, by row panels and column blocks on `threads` workers),
/// Inf/NaN entries as 0; for binary64 terms of |A(i, l)|·2^-E_i and |B(l, j)|·2^-F_j (0 below 2^-511), scaled back to
/// 2^(E_i + F_j) per element (NaN where the enclosure cannot hold: t_enclosure then refuses the element); raises
/// st.plan.peak_bytes to the step's own peak when that is higher. Needs st.t_enclosed. Its temporaries (|A| of a
/// panel, |B| of each worker's block) stay within `budget` bytes where the tiles allow (0: the operands' bytes, at
/// least 16 MiB, as Step S4's).
void build_t_estimate(product_reference::state& st, unsigned threads, std::size_t budget = 0);
/// t_enclosure's arithmetic on t = t_hat(i, j) with st.t_below and st.t_above (Step P6's lanes repeat it).
inline bool t_enclosure_of(double t, double t_below, double t_above, double& lo, double& hi) noexcept {
    if (!(t >= 0 && t < std::numeric_limits<double>::infinity())) return false;
    if (t == 0) {  // a sum of non-negative terms is 0 only when every term is
        lo = hi = 0;
        return true;
    }
    lo = next_down(t * t_below);  // st.t_below = 1 - g, st.t_above >= (1 - g)/(1 - 2g): build_t_estimate
    hi = next_up(t * t_above);
    return true;
}
/// Step S6's enclosure of T(i, j) = Σ_l |A(i, l)·B(l, j)| (finite products; C0 not included): 0 <= lo <= T <= hi,
/// from t_hat(i, j) and |t_hat - T| <= γ_{K-1}·T with unit 2^-52 (any order, rounding mode, FMA; binary64 terms: see
/// below). False when t_hat is not finite (never for p <= 24 data, kept as a guard; binary64 terms: the elements
/// build_t_estimate marked NaN). Needs the default floating-point environment (RN).
inline bool t_enclosure(const product_reference::state& st, std::size_t i, std::size_t j, double& lo,
                        double& hi) noexcept {
    // ozaki.md, Step S6: every |a|·|b| is exact in binary64 and >= 2^-298, so only the K - 1 additions round, each by
    // a factor 1 + δ with |δ| < 2^-52 in any rounding mode, and no partial sum underflows or overflows (< 2^289):
    // |t_hat - T| <= γ·T, γ = γ_{K-1} = g/(1 - g), g = (K - 1)·2^-52 (Higham, ASNA 2nd ed., §3.1, (3.5)). Then
    // 1 + γ = 1/(1 - g) and 1 - γ = (1 - 2g)/(1 - g): T in [t_hat·(1 - g), t_hat·(1 - g)/(1 - 2g)]. Binary64 terms:
    // the scaled products round too (g = K·2^-52, K factors a term, none subnormal: entries below 2^-511 of their
    // top are dropped), and the dropped entries add at most K·2^-510 <= K·2^-110·t_hat to the scaled T, which
    // t_above's extra step (>= 2^-52) covers; the scaling back by 2^(E_i + F_j) is exact (build_t_estimate).
    return t_enclosure_of(st.t_hat[j * st.m + i], st.t_below, st.t_above, lo, hi);
}
/// Measured ns per multiply-add of the slice GEMM engine on one thread (once per process): the planner's price.
double blas_fma_ns() noexcept;
/// The int8 engine (gemm_int8.cpp): whether this CPU and OS run `engine` (int8_plain always; int8_vnni with
/// AVX-512 F/BW/VNNI and zmm state saved by the OS), the best level here, its slice width (7 bits) and its measured
/// ns per multiply-add on one thread (once per process and engine).
bool int8_engine_supported(gemm_engine engine) noexcept;
gemm_engine best_int8_engine() noexcept;
int int8_slice_width() noexcept;
double int8_mac_ns(gemm_engine engine) noexcept;
/// Steps S3-S4 on the int8 engine: the same s_limbs and t_levels as build_sliced_levels for st.w = 7 and unpaired
/// slices. Throws std::runtime_error when `engine` is not supported here.
void build_int8_levels(product_reference::state& st, gemm_engine engine, unsigned threads);
/// min_product_exponent of element (i, j) (reference.h), exact: only elements whose bound says a product could lie
/// below 2^emin look at their K products.
int element_min_product_exponent(const product_reference::state& st, std::size_t i, std::size_t j);
/// Runs f(begin, end) over [0, count) split into pieces on `threads` workers (the calling thread is one of them).
void parallel_for(std::size_t count, unsigned threads, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& f);
}  // namespace detail

}  // namespace exactref

// Exact dot products (docs/algorithms/ozaki.md, "Exact dot"): the block kernels behind exactref::dot.
//
// Step D1  Operands arrive as raw bits in blocks of 1024 pairs. A pair with an Inf/NaN operand, and (binary64) a pair
//          outside the safe exponent range, takes the integer path: superaccumulator::add_product_bits (128-bit
//          significand product at its exact position).
// Step D2  p <= 24 formats: both operands are converted to binary64 exactly (subnormals by integer operations, the rest
//          by a hardware conversion, exact for normal numbers and zeros whatever DAZ and the rounding mode say), and
//          p = a·b is computed in binary64. It is exact: at most 48 significand bits, |p| within [2^-298, 2^256].
// Step D3  binary64 with FMA: p = fl(x·y), e = fma(x, y, -p) = x·y - p exactly, for both operands normal with
//          -918 <= E_x + E_y <= 1021 (p cannot overflow; e is zero or normal, so FTZ cannot flush it; the identity
//          holds in every rounding mode) or one operand zero and the other finite. |x·y| = |p| + e·sign(p).
// Step D4  Fused lane sums (the windowed integer lanes of the superaccumulator's fast path, docs/algorithms/
//          superaccumulator.md, applied to products): pass 1 finds the largest exponent field M of the block's p;
//          pass 2 shifts each significand (split 27 + 26 bits) into int64 lanes in units of 2^(M - 1075 - W), W = 24,
//          for s (signed) and T (absolute) at once, and the e terms likewise under the base M - 52 (|e| < ulp(p) in
//          every rounding mode, so its field is at most that of p minus 52). A term below its window is flagged and
//          added on its own; lane sums then enter the accumulators without counting terms, and the block's terms and
//          signed-zero state are noted once (superaccumulator::note_terms), as add(span) would note them.
// Step D5  min_product_exponent: binary64 exponent field of each exact narrow product; for binary64 only integer-path
//          products can lie below 2^-1022 (safe products are >= 2^-918), and their exponent is computed exactly.
// Step D6  binary64, binary32 and bfloat16 blocks, when the CPU has AVX-512 and MXCSR has FTZ and DAZ off: error-free
//          extraction onto three (binary32, bfloat16: two) fixed grids in binary64 additions (src/dot_extract.cpp),
//          one pass per block under a guessed window top; a block whose checks fail is redone by Steps D1-D5
//          (extraction_blocks below).
//
// Invariant of the lanes: a term is < 2^(27 + W) = 2^51 and a block has 2^10 terms, so |lane| < 2^61.
#include "exactref/dot.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dot_kernels.h"
#include "exactref/detail/uint128.h"
#include "exactref/threads.h"
#include "simd_targets.h"

namespace exactref {

namespace {

constexpr std::size_t block_size = 1024;  // pairs per block: buffers stay in L1/L2
// binary64 pass 2 runs in chunks of this many pairs (see add()); that path is GCC's only (EXACTREF_DOT_X86), hence
// [[maybe_unused]] for clang.
[[maybe_unused]] constexpr std::size_t prefetch_chunk = 64;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_DOT_X86 1
#define EXACTREF_DOT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EXACTREF_DOT_CLONES
#endif

// ---- Step D4: lane sums ---------------------------------------------------------------------------------------------

constexpr int window = 24;
static_assert(27 + window + 10 <= 62, "lane sums of a 1024-term block fit an int64 (invariant above)");
static_assert(block_size <= 1024);

struct lane_sums {
    std::int64_t s_hi = 0, s_lo = 0, t_hi = 0, t_lo = 0;      // p: signed, absolute
    std::int64_t es_hi = 0, es_lo = 0, et_hi = 0, et_lo = 0;  // e (binary64): signed, with the sign of |x·y| - |p|
    std::uint64_t flagged = 0;  // some non-zero term lies below its window
    lane_sums& operator+=(const lane_sums& o) noexcept {
        s_hi += o.s_hi, s_lo += o.s_lo, t_hi += o.t_hi, t_lo += o.t_lo;
        es_hi += o.es_hi, es_lo += o.es_lo, et_hi += o.et_hi, et_lo += o.et_lo;
        flagged |= o.flagged;
        return *this;
    }
};

// One normal-or-zero binary64 term (raw bits) into a signed and a second lane pair, the latter with sign `t_sign`
// (0 or -1). top: the window's base exponent field, >= the term's field and > W, so that a zero (field 0) lies below
// the window and adds nothing (its implicit bit would be wrong); the callers keep it so (f64_scan_block: top > W + 52
// for the error terms' window top - 52).
// Clamp (the single-pass narrow blocks, whose top is a guess checked afterwards): shifts are capped at W, so a term
// above a wrong top gives a wrong lane sum (the block is then redone) but never an overflow.
template <bool Clamp = false>
inline void add_to_lanes(std::uint64_t bits, std::int64_t top, std::int64_t t_sign, std::int64_t& s_hi,
                         std::int64_t& s_lo, std::int64_t& t_hi, std::int64_t& t_lo, std::uint64_t& flagged) noexcept {
    constexpr std::uint64_t frac = (std::uint64_t{1} << 52) - 1;
    const auto field = static_cast<std::int64_t>((bits >> 52) & 0x7FF);
    const std::uint64_t m = (bits & frac) | (std::uint64_t{1} << 52);
    std::int64_t shift = field - (top - window);
    if constexpr (Clamp) shift = shift < window ? shift : window;
    const bool in = shift >= 0;
    const std::int64_t amount = in ? shift : 0;
    std::int64_t hi = static_cast<std::int64_t>(m >> 26) << amount;
    std::int64_t lo = static_cast<std::int64_t>(m & ((std::uint64_t{1} << 26) - 1)) << amount;
    hi = in ? hi : 0;
    lo = in ? lo : 0;
    flagged |= static_cast<std::uint64_t>(!in && field != 0);
    const std::int64_t sign = -static_cast<std::int64_t>(bits >> 63);
    s_hi += (hi ^ sign) - sign;
    s_lo += (lo ^ sign) - sign;
    t_hi += (hi ^ t_sign) - t_sign;
    t_lo += (lo ^ t_sign) - t_sign;
}

// ---- Step D2: exact products of narrow formats ----------------------------------------------------------------------

enum class narrow_kind { f32, f16, bf16 };

// binary64 equal to a finite narrow value: integer operations when the block may hold subnormals, else a hardware
// conversion (binary32, bfloat16) or a shift and exponent offset (binary16), exact for normal numbers and zeros.
template <narrow_kind K, bool Subnormals, class Bits>
inline double widen(Bits b) noexcept {
    if constexpr (Subnormals) {
        if constexpr (K == narrow_kind::f32) return std::bit_cast<double>(detail::widen_to_binary64<24, 8>(b));
        else if constexpr (K == narrow_kind::f16) return std::bit_cast<double>(detail::widen_to_binary64<11, 5>(b));
        else return std::bit_cast<double>(detail::widen_to_binary64<8, 8>(b));
    } else if constexpr (K == narrow_kind::f32) {
        return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
    } else if constexpr (K == narrow_kind::bf16) {
        return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16));
    } else {
        const std::uint64_t magnitude = b & 0x7FFFu;
        const std::uint64_t sign = static_cast<std::uint64_t>(b >> 15) << 63;
        const std::uint64_t normal = (magnitude << 42) + (std::uint64_t{1023 - 15} << 52);
        return std::bit_cast<double>(sign | (magnitude == 0 ? 0 : normal));
    }
}

struct field_range {
    std::uint64_t max_field;
    std::uint64_t min_field;  // smallest field of a non-zero product, 0x7FF when none
};

// Pass 1: the largest and smallest exponent fields of the block's exact products.
template <narrow_kind K, bool Subnormals, class Bits>
inline field_range narrow_fields(const Bits* x, const Bits* y, std::size_t n) noexcept {
    std::int64_t hi = 0, lo = 0x7FF;  // signed: GCC vectorizes these reductions, not the unsigned ones
    for (std::size_t i = 0; i < n; ++i) {
        const double p = widen<K, Subnormals>(x[i]) * widen<K, Subnormals>(y[i]);  // exact (Step D2)
        const auto field = static_cast<std::int64_t>((std::bit_cast<std::uint64_t>(p) >> 52) & 0x7FF);
        const std::int64_t nonzero_field = field == 0 ? 0x7FF : field;
        hi = hi > field ? hi : field;
        lo = lo < nonzero_field ? lo : nonzero_field;
    }
    return {static_cast<std::uint64_t>(hi), static_cast<std::uint64_t>(lo)};
}

// Pass 2: lane sums of p (s) and |p| (T) under the window base `top`.
template <narrow_kind K, bool Subnormals, class Bits>
inline lane_sums narrow_lanes(const Bits* x, const Bits* y, std::size_t n, std::int64_t top) noexcept {
    lane_sums r;
    for (std::size_t i = 0; i < n; ++i) {
        const double p = widen<K, Subnormals>(x[i]) * widen<K, Subnormals>(y[i]);
        const std::uint64_t pb = std::bit_cast<std::uint64_t>(p);
        add_to_lanes(pb, top, 0, r.s_hi, r.s_lo, r.t_hi, r.t_lo, r.flagged);
    }
    return r;
}

// Pass 1 fused with the block test: bit 0 of `kind` = an Inf/NaN operand, bit 1 = a subnormal operand. Integer
// operations on the operands' exponent fields only (no product is formed, so this pass runs at the speed of the
// loads): `fields.max_field` is an upper bound of every product's binary64 field, f_x + f_y - 1023 + 1 from the
// largest operand fields of each side (a product of two significands in [1, 2) lies in [1, 4)), and `low` a lower
// bound of the fields of the non-zero products, f_x + f_y - 1023 (0x7FF when there is none); the exact smallest field
// is computed (fields()) only when `low` lies below the format's emin (Step D5 needs it only there). Valid only for
// kind == 0.
struct narrow_scan {
    unsigned kind;
    field_range fields;  // max_field: an upper bound (above); min_field: unused
    std::int64_t low;
};
// The reductions of pass 1 over a block's operand fields (narrow_scan above), one pair at a time.
template <narrow_kind K, class Bits>
struct operand_fields {
    static constexpr int shift = K == narrow_kind::f32 ? 23 : K == narrow_kind::f16 ? 10 : 7;
    static constexpr std::int64_t offset = 1023 - (K == narrow_kind::f16 ? 15 : 127);  // binary64 - operand field
    static constexpr std::int32_t none = 0x7FFF;                                       // above any f_x + f_y
    Bits special = 0, subnormal = 0;
    std::int32_t hx = 0, hy = 0, lo = none;  // signed: GCC vectorizes these reductions, not the unsigned ones

    void observe(Bits x, Bits y, Bits field_mask, Bits frac_mask) noexcept {
        special |= static_cast<Bits>(((x & field_mask) == field_mask) | ((y & field_mask) == field_mask));
        subnormal |= static_cast<Bits>((((x & field_mask) == 0) & ((x & frac_mask) != 0)) |
                                       (((y & field_mask) == 0) & ((y & frac_mask) != 0)));
        const auto fx = static_cast<std::int32_t>((x & field_mask) >> shift);
        const auto fy = static_cast<std::int32_t>((y & field_mask) >> shift);
        hx = hx > fx ? hx : fx;
        hy = hy > fy ? hy : fy;
        const std::int32_t sum = (fx == 0) | (fy == 0) ? none : fx + fy;  // a zero operand: a zero product
        lo = lo < sum ? lo : sum;
    }
    narrow_scan result() const noexcept {
        const std::int64_t top = hx + hy + 2 * offset - 1023 + 1;
        return {(special != 0 ? 1u : 0u) | (subnormal != 0 ? 2u : 0u),
                {static_cast<std::uint64_t>(top < 0 ? 0 : top), 0x7FF},
                lo == none ? std::int64_t{0x7FF} : lo + 2 * offset - 1023};
    }
};

template <narrow_kind K, class Bits>
inline narrow_scan narrow_scan_block(const Bits* x, const Bits* y, std::size_t n, Bits field_mask,
                                     Bits frac_mask) noexcept {
    operand_fields<K, Bits> scan;
    for (std::size_t i = 0; i < n; ++i) scan.observe(x[i], y[i], field_mask, frac_mask);
    return scan.result();
}

// Passes 1 and 2 in one: the scan of narrow_scan_block and the lane sums of narrow_lanes under a guessed window base
// `top` (the previous block's bound). The lanes are valid when the block is clean (kind == 0) and the scan's bound
// of its products' fields is at most `top`; otherwise the caller discards them and takes the two passes.
struct narrow_fused {
    narrow_scan scan;
    lane_sums lanes;
};
template <narrow_kind K, class Bits>
inline narrow_fused narrow_fused_block(const Bits* x, const Bits* y, std::size_t n, Bits field_mask, Bits frac_mask,
                                       std::int64_t top) noexcept {
    operand_fields<K, Bits> scan;
    lane_sums r;
    for (std::size_t i = 0; i < n; ++i) {
        scan.observe(x[i], y[i], field_mask, frac_mask);
        const double p = widen<K, false>(x[i]) * widen<K, false>(y[i]);
        add_to_lanes<true>(std::bit_cast<std::uint64_t>(p), top, 0, r.s_hi, r.s_lo, r.t_hi, r.t_lo, r.flagged);
    }
    return {scan.result(), r};
}

#define EXACTREF_NARROW_KERNELS(name, K, Bits)                                                                      \
    EXACTREF_DOT_CLONES narrow_scan scan_##name(const Bits* x, const Bits* y, std::size_t n, Bits field_mask,      \
                                                Bits frac_mask) {                                                \
        return narrow_scan_block<K>(x, y, n, field_mask, frac_mask);                                             \
    }                                                                                                            \
    EXACTREF_DOT_CLONES narrow_fused fused_##name(const Bits* x, const Bits* y, std::size_t n, Bits field_mask,   \
                                                  Bits frac_mask, std::int64_t top) {                            \
        return narrow_fused_block<K>(x, y, n, field_mask, frac_mask, top);                                       \
    }                                                                                                            \
    EXACTREF_DOT_CLONES field_range fields_##name(const Bits* x, const Bits* y, std::size_t n, bool sub) {        \
        return sub ? narrow_fields<K, true>(x, y, n) : narrow_fields<K, false>(x, y, n);                        \
    }                                                                                                            \
    EXACTREF_DOT_CLONES lane_sums lanes_##name(const Bits* x, const Bits* y, std::size_t n, std::int64_t top,     \
                                               bool sub) {                                                       \
        return sub ? narrow_lanes<K, true>(x, y, n, top) : narrow_lanes<K, false>(x, y, n, top);                \
    }
EXACTREF_NARROW_KERNELS(f32, narrow_kind::f32, std::uint32_t)
EXACTREF_NARROW_KERNELS(f16, narrow_kind::f16, std::uint16_t)
EXACTREF_NARROW_KERNELS(bf16, narrow_kind::bf16, std::uint16_t)
#undef EXACTREF_NARROW_KERNELS

// ---- Step D3: binary64 TwoProduct with FMA -------------------------------------------------------------------------

// A pair whose product p + e is exact with hardware arithmetic (see Step D3), as 0 or 1 without branches so that the
// block test vectorizes: both operands normal with -918 <= E_x + E_y <= 1021, or one operand zero and the other finite.
inline std::uint64_t f64_pair_safe(std::uint64_t x, std::uint64_t y) noexcept {
    const std::uint64_t fx = (x >> 52) & 0x7FF;
    const std::uint64_t fy = (y >> 52) & 0x7FF;
    const std::uint64_t normal = static_cast<std::uint64_t>(fx - 1 < 2046) & static_cast<std::uint64_t>(fy - 1 < 2046) &
                                 static_cast<std::uint64_t>(fx + fy - (2046 - 918) <= 1021 + 918);
    const std::uint64_t zero = (static_cast<std::uint64_t>((x << 1) == 0) & static_cast<std::uint64_t>(fy != 0x7FF)) |
                               (static_cast<std::uint64_t>((y << 1) == 0) & static_cast<std::uint64_t>(fx != 0x7FF));
    return normal | zero;
}

// Pass 1 for binary64, fused with the block test: whether every pair is safe, and a window base: the largest
// f_x + f_y - 1022 (exponent fields), at least the field of every p = fl(x·y) since |x·y| < 2^(E_x + E_y + 2); kept
// above W + 52 so that zero products (field 0, window base top) and zero error terms e (field 0, window base
// top - 52) always lie below their windows. (It was kept above W only: a block of zero-times-finite pairs with the
// other operand below 2^76 put e = 0 inside its window, and its implicit bit added 2^-1023 per pair.) Products with a
// field below top - W then take the slow path; with this floor that is only for fields below 53 (|x·y| < 2^-970).
// Meaningful only when every pair is safe.
struct f64_scan {
    std::uint64_t safe;
    std::int64_t top;
};
[[maybe_unused]] EXACTREF_DOT_CLONES f64_scan f64_scan_block(const double* x, const double* y, std::size_t n) {
    std::uint64_t ok = 1;
    std::int64_t hi = window + 53;  // signed: GCC vectorizes this reduction, not the unsigned one
    for (std::size_t i = 0; i < n; ++i) {
        const auto xb = std::bit_cast<std::uint64_t>(x[i]), yb = std::bit_cast<std::uint64_t>(y[i]);
        ok &= f64_pair_safe(xb, yb);
        const auto sum = static_cast<std::int64_t>(((xb >> 52) & 0x7FF) + ((yb >> 52) & 0x7FF)) - 1022;
        hi = hi > sum ? hi : sum;
    }
    return {ok, hi};
}

#ifdef EXACTREF_DOT_X86
// Pass 2 for binary64: lanes of p, |p|, e and e·sign(p). Needs a hardware FMA (the callers check the CPU).
inline lane_sums f64_lanes(const double* x, const double* y, std::size_t n, std::int64_t top) noexcept {
    lane_sums r;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = x[i];
        const double b = y[i];
        const double p = a * b;
        const double e = __builtin_fma(a, b, -p);  // exact (Step D3)
        const std::uint64_t pb = std::bit_cast<std::uint64_t>(p);
        const std::uint64_t eb = std::bit_cast<std::uint64_t>(e);
        add_to_lanes(pb, top, 0, r.s_hi, r.s_lo, r.t_hi, r.t_lo, r.flagged);
        add_to_lanes(eb, top - 52, -static_cast<std::int64_t>((eb ^ pb) >> 63), r.es_hi, r.es_lo, r.et_hi, r.et_lo,
                     r.flagged);
    }
    return r;
}
inline void f64_two_products(const double* x, const double* y, std::size_t n, std::uint64_t* p,
                             std::uint64_t* e) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const double a = x[i];
        const double b = y[i];
        const double hi = a * b;
        p[i] = std::bit_cast<std::uint64_t>(hi);
        e[i] = std::bit_cast<std::uint64_t>(__builtin_fma(a, b, -hi));
    }
}
EXACTREF_TARGET_V4 lane_sums f64_lanes_v4(const double* x, const double* y,
                                                                 std::size_t n, std::int64_t top) {
    return f64_lanes(x, y, n, top);
}
EXACTREF_TARGET_V3 lane_sums f64_lanes_v3(const double* x, const double* y,
                                                                 std::size_t n, std::int64_t top) {
    return f64_lanes(x, y, n, top);
}
EXACTREF_TARGET_V3 void f64_two_products_v3(const double* x, const double* y,
                                                                   std::size_t n, std::uint64_t* p, std::uint64_t* e) {
    f64_two_products(x, y, n, p, e);
}
enum class fma_level { none, v3, v4 };
fma_level detect_fma() noexcept {  // EXACTREF_SIMD caps it (simd_targets.h): base takes Step D1 for every pair
    switch (detail::host_simd_level()) {
        case detail::simd_level::avx512: return fma_level::v4;
        case detail::simd_level::avx2: return fma_level::v3;
        case detail::simd_level::base: break;
    }
    return fma_level::none;
}
const fma_level host_fma = detect_fma();
#endif

// Adds one normal-or-zero binary64 term (raw bits, with an extra sign flip for T) that fell below its window.
void add_term_bits(superaccumulator& s, superaccumulator& t, std::uint64_t bits, bool t_negative) noexcept {
    const auto field = static_cast<int>((bits >> 52) & 0x7FF);
    if (field == 0) return;  // zero (never subnormal here)
    const auto m = static_cast<std::int64_t>((bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52));
    const bool negative = (bits >> 63) != 0;
    detail::add_scaled_int64(s, negative ? -m : m, field - 1075);
    detail::add_scaled_int64(t, t_negative ? -m : m, field - 1075);
}

// A block's terms and signed-zero state as add(span) would note them: a non-zero product sets both flags; when every
// product is zero, `zero_signs` gives the sign of each (zero_signs(i): product i is -0).
template <class ZeroSign>
void note_block_terms(superaccumulator& s, superaccumulator& t, bool nonzero, std::size_t terms,
                      ZeroSign zero_signs) noexcept {
    bool not_negative_zero = nonzero, not_positive_zero = nonzero;
    if (!nonzero) {
        for (std::size_t i = 0; i < terms; ++i) {
            const bool negative = zero_signs(i);
            not_negative_zero |= !negative;
            not_positive_zero |= negative;
        }
    }
    s.note_terms(terms, not_negative_zero, not_positive_zero);
    t.note_terms(terms, terms > 0, nonzero);
}

// Lane sums into the accumulators (units of 2^(top - 1075 - W), high lanes 2^26 above), then the block's terms and
// signed-zero state (note_block_terms; a product is non-zero when some T lane is non-zero or a term was flagged).
template <class ZeroSign>
void flush_lanes(superaccumulator& s, superaccumulator& t, const lane_sums& r, std::int64_t top, bool with_e,
                 std::size_t terms, ZeroSign zero_signs) noexcept {
    const int unit = static_cast<int>(top) - 1075 - window;
    s.add_lane_sum(r.s_hi, unit + 26);
    s.add_lane_sum(r.s_lo, unit);
    t.add_lane_sum(r.t_hi, unit + 26);
    t.add_lane_sum(r.t_lo, unit);
    if (with_e) {
        s.add_lane_sum(r.es_hi, unit - 52 + 26);
        s.add_lane_sum(r.es_lo, unit - 52);
        t.add_lane_sum(r.et_hi, unit - 52 + 26);
        t.add_lane_sum(r.et_lo, unit - 52);
    }
    note_block_terms(s, t, r.t_hi != 0 || r.t_lo != 0 || r.flagged != 0, terms, zero_signs);  // T: non-negative terms
}

// Raw bits of a value, without type punning through pointers.
template <class T>
auto bits_of(T x) noexcept {
    return format_traits<T>::to_bits(x);
}

}  // namespace

// ---- shared helpers ------------------------------------------------------------------------------------------------

namespace detail {

dot_accumulator::dot_accumulator(const format_info& f) noexcept : f_(&f), min_exponent_(INT_MAX) {}

void dot_accumulator::add_slow(std::uint64_t x, std::uint64_t y) noexcept {
    const std::uint64_t abs_mask = ~(std::uint64_t{1} << (f_->storage_bits - 1));
    ref_.sum.add_product_bits(*f_, x, y);
    ref_.abs_sum.add_product_bits(*f_, x & abs_mask, y & abs_mask);
    const decoded a = decode_bits(*f_, x);
    const decoded b = decode_bits(*f_, y);
    if (!a.is_nan && !a.is_inf && !b.is_nan && !b.is_inf && a.significand != 0 && b.significand != 0)
        min_exponent_ = std::min(min_exponent_, product_exponent_bits(*f_, x, y));
}

#ifdef EXACTREF_DOT_X86
// Steps D1, D3, D4 for one binary64 block of len <= block_size pairs (the CPU has FMA). `ahead` pairs of the next
// block (at x + block_size, y + block_size) are prefetched while pass 2 runs. Returns a guess of Step D6's window top
// M for the next block: every |p| < 2^M for the finite pairs of this one (a guess only: Step D6 checks its own).
int dot_accumulator::add_f64_block(const double* x, const double* y, std::size_t len, std::size_t ahead) noexcept {
    std::array<double, block_size> xs, ys;
    std::array<std::uint64_t, block_size> ps, es;
    auto lanes = host_fma == fma_level::v4 ? f64_lanes_v4 : f64_lanes_v3;
    const double* xb = x;
    const double* yb = y;
    std::size_t m = len;
    f64_scan scan = f64_scan_block(xb, yb, len);  // Step D4, pass 1 (and the test of Step D1)
    const int guess = static_cast<int>(scan.top) - 1022;  // |p| < 2^(E_x + E_y + 2) = 2^(f_x + f_y - 2044) for finite pairs
    if (scan.safe == 0) {  // Step D1: compact the safe pairs, the rest one by one
        m = 0;
        for (std::size_t i = 0; i < len; ++i) {
            const auto xi = std::bit_cast<std::uint64_t>(xb[i]), yi = std::bit_cast<std::uint64_t>(yb[i]);
            if (f64_pair_safe(xi, yi)) {
                xs[m] = xb[i];
                ys[m] = yb[i];
                ++m;
            } else {
                add_slow(xi, yi);
            }
        }
        if (m == 0) return guess;
        xb = xs.data();
        yb = ys.data();
        scan = f64_scan_block(xb, yb, m);
    }
    const std::int64_t top = scan.top;
    // Pass 2, in chunks, each preceded by prefetches of the matching part of the next block: pass 2 is compute-bound
    // and pass 1 memory-bound, so the next block's loads overlap this block's arithmetic.
    lane_sums r;
    for (std::size_t c = 0; c < m; c += prefetch_chunk) {
        const std::size_t len_c = std::min(prefetch_chunk, m - c);
        for (std::size_t i = c; i < std::min(c + prefetch_chunk, ahead); i += 64 / sizeof(double)) {
            __builtin_prefetch(x + block_size + i, 0, 3);
            __builtin_prefetch(y + block_size + i, 0, 3);
        }
        r += lanes(xb + c, yb + c, len_c, top);
    }
    flush_lanes(ref_.sum, ref_.abs_sum, r, top, true, m,
                [&](std::size_t i) { return std::signbit(xb[i]) != std::signbit(yb[i]); });
    if (r.flagged != 0) {  // terms below their window, one by one
        f64_two_products_v3(xb, yb, m, ps.data(), es.data());
        for (std::size_t i = 0; i < m; ++i) {
            const auto fp = static_cast<std::int64_t>((ps[i] >> 52) & 0x7FF);
            const auto fe = static_cast<std::int64_t>((es[i] >> 52) & 0x7FF);
            if (top - fp > window) add_term_bits(ref_.sum, ref_.abs_sum, ps[i], false);
            if (top - 52 - fe > window) add_term_bits(ref_.sum, ref_.abs_sum, es[i], ((es[i] ^ ps[i]) >> 63) != 0);
        }
    }
    return guess;
}
#endif

#ifdef EXACTREF_DOT_EXTRACTION
namespace {
using extraction = f64_extraction_params;
const bool host_extraction = f64_extraction_supported();

// The next block's guess for M: one binade above the largest |p| of this block (|p| <= largest < 2^(E + 1)), for data
// whose scale drifts slowly; INT_MIN when there is none to go by (every product zero: keep the old guess instead).
int next_top(double largest) noexcept {
    const auto field = static_cast<int>((std::bit_cast<std::uint64_t>(largest) >> 52) & 0x7FF);
    return field == 0 ? INT_MIN : field - 1023 + 2;
}

// A kept Step D6 block into the accumulators: the level sums in units 2^(k_l - 52), then the block's terms (as
// flush_lanes notes them). Returns r.kept; a block not kept adds nothing.
template <class Params, class ZeroSign>
bool add_extraction(superaccumulator& s, superaccumulator& t, const f64_extraction& r, int top, std::size_t terms,
                    ZeroSign zero_signs) noexcept {
    if (!r.kept) return false;
    bool nonzero = false;
    for (int l = 0; l < 3; ++l) {
        const int unit = top + Params::level_offset[l] - 52;
        s.add_lane_sum(r.s[l], unit);
        t.add_lane_sum(r.t[l], unit);
        nonzero |= r.t[l] != 0;  // T > 0 exactly when some product is non-zero, and then some level of it is
    }
    note_block_terms(s, t, nonzero, terms, zero_signs);
    return true;
}

// Step D6's block loop (ozaki.md, "The guess"): `attempt(start, len, top, largest)` runs Step D6 on a block and adds it
// when kept; `fallback(start, len)` does the block by the other steps and returns a guess for the next one (INT_MIN:
// none). A refused block whose largest |p| calls for another top (its products outgrew the guess, or a loose guess
// put small products below the spread) is tried once more under its own largest |p|; after c refusals in a row the
// next 2^c - 1 blocks (c <= 6) go straight to the fallback.
template <class Attempt, class Fallback>
void extraction_blocks(std::size_t n, int min_top, int max_top, Attempt attempt, Fallback fallback) {
    const auto in_range = [&](int top) { return top >= min_top && top <= max_top; };
    int top = INT_MIN;      // the guess for this block, INT_MIN when none
    unsigned skip = 0;      // blocks left to go straight to the fallback
    unsigned refusals = 0;  // consecutive refused blocks
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        if (skip == 0 && in_range(top)) {
            double largest = 0;
            bool kept = attempt(start, len, top, largest);
            const int largest_top = next_top(largest);  // INT_MIN when every product was zero
            const int own = largest_top == INT_MIN ? INT_MIN : largest_top - 1;
            if (!kept && std::isfinite(largest) && own != top && in_range(own)) kept = attempt(start, len, own, largest);
            if (kept) {
                refusals = 0;
                const int next = next_top(largest);
                if (next != INT_MIN) top = next;
                continue;
            }
            refusals = std::min(refusals + 1, 6u);
            skip = (1u << refusals) - 1;
        } else if (skip > 0) {
            --skip;
        }
        top = fallback(start, len);
    }
}

// Step D6 on the binary32 kernel (Lemma 5: binary32 and bfloat16 operands, raw bits): `kernel` is f32_extract_block
// or bf16_extract_block, `pairs(x, y, len)` Steps D1, D2, D4, D5 for a refused block, `scan` their pass 1 (the guess
// for the next block: |x·y| < 2^(max_field - 1022), for finite operands only).
template <class Bits, class Pairs, class Scan>
void binary32_kernel_blocks(superaccumulator& s, superaccumulator& t, const Bits* x, const Bits* y, std::size_t n,
                            f64_extraction (*kernel)(const Bits*, const Bits*, std::size_t, int), Pairs pairs,
                            Scan scan, Bits field_mask, Bits frac_mask) {
    constexpr auto sign = static_cast<Bits>(Bits{1} << (8 * sizeof(Bits) - 1));
    extraction_blocks(
        n, f32_extraction_params::min_top, f32_extraction_params::max_top,
        [&](std::size_t start, std::size_t len, int top, double& largest) {
            const f64_extraction r = kernel(x + start, y + start, len, top);
            largest = r.largest;
            return add_extraction<f32_extraction_params>(
                s, t, r, top, len, [&](std::size_t i) { return ((x[start + i] ^ y[start + i]) & sign) != 0; });
        },
        [&](std::size_t start, std::size_t len) {
            pairs(x + start, y + start, len);
            const narrow_scan sc = scan(x + start, y + start, len, field_mask, frac_mask);
            return (sc.kind & 1u) == 0 ? static_cast<int>(sc.fields.max_field) - 1022 : INT_MIN;
        });
}
}  // namespace
#endif

void dot_accumulator::add(const double* x, const double* y, std::size_t n) noexcept {
    count_ += n;
#ifdef EXACTREF_DOT_X86
    if (host_fma != fma_level::none) {
        const auto block = [&](std::size_t start, std::size_t len) {
            return add_f64_block(x + start, y + start, len, std::min(block_size, n - std::min(n, start + block_size)));
        };
#ifdef EXACTREF_DOT_EXTRACTION
        if (host_extraction && f64_extraction_environment()) {  // Step D6, Steps D1-D4 for the blocks it refuses
            extraction_blocks(
                n, extraction::min_top, extraction::max_top,
                [&](std::size_t start, std::size_t len, int top, double& largest) {
                    const double* xb = x + start;
                    const double* yb = y + start;
                    const f64_extraction r = f64_extract_block(xb, yb, len, top);
                    largest = r.largest;
                    return add_extraction<extraction>(ref_.sum, ref_.abs_sum, r, top, len, [&](std::size_t i) {
                        return std::signbit(xb[i]) != std::signbit(yb[i]);
                    });
                },
                block);
            return;
        }
#endif
        for (std::size_t start = 0; start < n; start += block_size) block(start, std::min(block_size, n - start));
        return;
    }
#endif
    for (std::size_t i = 0; i < n; ++i) add_slow(std::bit_cast<std::uint64_t>(x[i]), std::bit_cast<std::uint64_t>(y[i]));
}

void dot_accumulator::add(const std::uint64_t* x, const std::uint64_t* y, std::size_t n) noexcept {
    std::array<double, block_size> xs, ys;
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        for (std::size_t i = 0; i < len; ++i) {
            xs[i] = std::bit_cast<double>(x[start + i]);
            ys[i] = std::bit_cast<double>(y[start + i]);
        }
        add(xs.data(), ys.data(), len);
    }
}

namespace {
// Step D1 for p <= 24: moves pairs with an Inf/NaN operand to the integer path, compacting the rest into xs, ys.
template <class Bits>
std::size_t compact_specials(const Bits*& xb, const Bits*& yb, std::size_t len, Bits field_mask, Bits* xs, Bits* ys,
                             detail::dot_accumulator& acc,
                             void (detail::dot_accumulator::*slow)(std::uint64_t, std::uint64_t)) {
    std::size_t m = 0;
    for (std::size_t i = 0; i < len; ++i) {
        if ((xb[i] & field_mask) == field_mask || (yb[i] & field_mask) == field_mask) {
            (acc.*slow)(xb[i], yb[i]);
        } else {
            xs[m] = xb[i];
            ys[m] = yb[i];
            ++m;
        }
    }
    xb = xs;
    yb = ys;
    return m;
}

// The block's field range from pass 1 when it can stand in for the exact one (no Inf/NaN or subnormal operand, and
// no product possibly below 2^emin, where Step D5 needs the exact smallest field), else nullptr: fields() then runs.
const field_range* known_fields(const narrow_scan& scan, int emin) noexcept {
    return scan.kind == 0 && scan.low - 1023 >= emin ? &scan.fields : nullptr;
}

// The lane sums of a block under window base `top` into the accumulators, then its terms below the window one by one.
template <narrow_kind K, class Bits>
void finish_narrow_block(superaccumulator& s, superaccumulator& t, const Bits* xb, const Bits* yb, std::size_t m,
                         bool sub, std::int64_t top, const lane_sums& r) {
    constexpr Bits sign = static_cast<Bits>(Bits{1} << (8 * sizeof(Bits) - 1));
    flush_lanes(s, t, r, top, false, m, [&](std::size_t i) { return ((xb[i] ^ yb[i]) & sign) != 0; });
    if (r.flagged != 0) {
        for (std::size_t i = 0; i < m; ++i) {
            const std::uint64_t pb = std::bit_cast<std::uint64_t>(
                sub ? widen<K, true>(xb[i]) * widen<K, true>(yb[i]) : widen<K, false>(xb[i]) * widen<K, false>(yb[i]));
            if (top - static_cast<std::int64_t>((pb >> 52) & 0x7FF) > window) add_term_bits(s, t, pb, false);
        }
    }
}

// Steps D2, D4 for one kind of narrow format.
template <narrow_kind K, class Bits>
void add_narrow_block(superaccumulator& s, superaccumulator& t, const Bits* xb, const Bits* yb, std::size_t m,
                      bool sub, const field_range* known, int& min_field,
                      field_range (*fields)(const Bits*, const Bits*, std::size_t, bool),
                      lane_sums (*lanes)(const Bits*, const Bits*, std::size_t, std::int64_t, bool)) {
    const field_range fr = known != nullptr ? *known : fields(xb, yb, m, sub);
    min_field = std::min(min_field, static_cast<int>(fr.min_field));  // Step D5
    const std::int64_t top = std::max<std::int64_t>(static_cast<std::int64_t>(fr.max_field), window + 1);
    const lane_sums r = lanes(xb, yb, m, top, sub);
    finish_narrow_block<K>(s, t, xb, yb, m, sub, top, r);
}

// Steps D1-D5 for narrow pairs, block by block. A block is done in one pass (fused_*) with the previous block's bound
// plus one binade as its window base, which holds for data whose scale drifts slowly; it takes the two passes (scan,
// then lanes) when that guess lies below the block's bound, or when the block holds an Inf/NaN or subnormal operand.
// A block with a product that may lie below 2^emin (known_fields) also computes its exact smallest field (Step D5).
template <narrow_kind K, class Bits, class Scan, class Fused, class Fields, class Lanes>
void add_narrow_pairs(superaccumulator& s, superaccumulator& t, const Bits* x, const Bits* y, std::size_t n, int emin,
                      int& min_field, Bits field_mask, Bits frac_mask, Scan scan_fn, Fused fused_fn, Fields fields_fn,
                      Lanes lanes_fn, detail::dot_accumulator& acc,
                      void (detail::dot_accumulator::*slow)(std::uint64_t, std::uint64_t)) {
    std::array<Bits, block_size> xs, ys;
    std::int64_t guess = -1;  // none yet
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        const Bits* xb = x + start;
        const Bits* yb = y + start;
        narrow_scan scan;
        if (guess >= 0) {
            const narrow_fused f = fused_fn(xb, yb, len, field_mask, frac_mask, guess);
            const auto bound = static_cast<std::int64_t>(f.scan.fields.max_field);
            if (f.scan.kind == 0 && bound <= guess) {  // the lanes hold
                // Step D5: the exact smallest field only where a product may lie below 2^emin
                if (known_fields(f.scan, emin) == nullptr)
                    min_field = std::min(min_field, static_cast<int>(fields_fn(xb, yb, len, false).min_field));
                finish_narrow_block<K>(s, t, xb, yb, len, false, guess, f.lanes);
                guess = std::max<std::int64_t>(bound, window + 1) + 1;
                continue;
            }
            scan = f.scan;
        } else {
            scan = scan_fn(xb, yb, len, field_mask, frac_mask);  // Step D1 and pass 1
        }
        guess = scan.kind == 0
                    ? std::max<std::int64_t>(static_cast<std::int64_t>(scan.fields.max_field), window + 1) + 1
                    : -1;
        std::size_t m = len;
        if (scan.kind & 1u) m = compact_specials<Bits>(xb, yb, len, field_mask, xs.data(), ys.data(), acc, slow);
        if (m == 0) continue;
        add_narrow_block<K>(s, t, xb, yb, m, (scan.kind & 2u) != 0, known_fields(scan, emin), min_field, fields_fn,
                            lanes_fn);
    }
}
}  // namespace

void dot_accumulator::add(const std::uint32_t* x, const std::uint32_t* y, std::size_t n) noexcept {
    count_ += n;
    constexpr std::uint32_t field_mask = 0x7F80'0000u, frac_mask = 0x007F'FFFFu;
    const auto pairs = [&](const std::uint32_t* xb, const std::uint32_t* yb, std::size_t len) {
        add_narrow_pairs<narrow_kind::f32>(ref_.sum, ref_.abs_sum, xb, yb, len, f_->emin, min_field_, field_mask,
                                           frac_mask, scan_f32, fused_f32, fields_f32, lanes_f32, *this,
                                           &dot_accumulator::add_slow);
    };
#ifdef EXACTREF_DOT_EXTRACTION
    if (host_extraction && f64_extraction_environment()) {  // Step D6 (Lemma 5), Steps D1-D5 for the blocks it refuses
        binary32_kernel_blocks(ref_.sum, ref_.abs_sum, x, y, n, f32_extract_block, pairs, scan_f32, field_mask,
                               frac_mask);
        return;
    }
#endif
    pairs(x, y, n);
}

void dot_accumulator::add(const std::uint16_t* x, const std::uint16_t* y, std::size_t n) noexcept {
    count_ += n;
    if (f_->id == dtype::float16)
        add_narrow_pairs<narrow_kind::f16>(ref_.sum, ref_.abs_sum, x, y, n, f_->emin, min_field_,
                                           std::uint16_t{0x7C00u}, std::uint16_t{0x03FFu}, scan_f16, fused_f16,
                                           fields_f16, lanes_f16, *this, &dot_accumulator::add_slow);
    else
        add_bf16(x, y, n);
}

void dot_accumulator::add_bf16(const std::uint16_t* x, const std::uint16_t* y, std::size_t n) noexcept {
    constexpr std::uint16_t field_mask = 0x7F80u, frac_mask = 0x007Fu;
    const auto pairs = [&](const std::uint16_t* xb, const std::uint16_t* yb, std::size_t len) {
        add_narrow_pairs<narrow_kind::bf16>(ref_.sum, ref_.abs_sum, xb, yb, len, f_->emin, min_field_, field_mask,
                                            frac_mask, scan_bf16, fused_bf16, fields_bf16, lanes_bf16, *this,
                                            &dot_accumulator::add_slow);
    };
#ifdef EXACTREF_DOT_EXTRACTION
    if (host_extraction && f64_extraction_environment()) {  // Step D6 on the binary32 kernel (Lemma 5)
        binary32_kernel_blocks(ref_.sum, ref_.abs_sum, x, y, n, bf16_extract_block, pairs, scan_bf16, field_mask,
                               frac_mask);
        return;
    }
#endif
    pairs(x, y, n);
}

void dot_accumulator::add_term(std::uint64_t bits) noexcept {
    ++count_;
    ref_.has_initial = true;
    ref_.sum.add_bits(*f_, bits);
    ref_.abs_sum.add_bits(*f_, bits & ~(std::uint64_t{1} << (f_->storage_bits - 1)));
}

void dot_accumulator::merge(const dot_accumulator& other) noexcept {
    ref_.sum.merge(other.ref_.sum);
    ref_.abs_sum.merge(other.ref_.abs_sum);
    ref_.has_initial = ref_.has_initial || other.ref_.has_initial;
    count_ += other.count_;
    min_field_ = std::min(min_field_, other.min_field_);
    min_exponent_ = std::min(min_exponent_, other.min_exponent_);
}

void dot_accumulator::finish(reference& out) noexcept {
    // Step D5
    int smallest = min_exponent_;
    if (min_field_ != 0x7FF) smallest = std::min(smallest, min_field_ - 1023);
    const int clamped = std::min(smallest, f_->emin);
    ref_.count = count_;
    ref_.term_format = f_->id;
    ref_.is_dot = true;
    ref_.min_product_exponent = clamped;
    ref_.product_may_underflow = clamped < f_->emin;
    out = std::move(ref_);
}

}  // namespace detail

int product_exponent_bits(const format_info& f, std::uint64_t x_bits, std::uint64_t y_bits) noexcept {
    const decoded a = decode_bits(f, x_bits);
    const decoded b = decode_bits(f, y_bits);
    const detail::uint128 m = static_cast<detail::uint128>(a.significand) * b.significand;
    const auto high = static_cast<std::uint64_t>(m >> 64);
    const int width = high != 0 ? 64 + std::bit_width(high) : std::bit_width(static_cast<std::uint64_t>(m));
    return width - 1 + a.exponent + b.exponent;
}

// ---- the public entry points ---------------------------------------------------------------------------------------

namespace {

template <class T>
using bits_t = typename format_traits<T>::bits_type;

// Feeds n pairs of (strided) operands to the accumulator (Step D1): contiguous operands in place (binary64 as values,
// the narrow formats as their raw bits), strided ones gathered block by block as raw bits.
template <floating_format T>
void accumulate(detail::dot_accumulator& acc, const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy,
                std::size_t n) {
    if (incx == 1 && incy == 1) {
        if constexpr (std::is_same_v<T, double>) acc.add(x, y, n);
        else acc.add(reinterpret_cast<const bits_t<T>*>(x), reinterpret_cast<const bits_t<T>*>(y), n);  // T is its bits
        return;
    }
    std::array<bits_t<T>, block_size> xb, yb;
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        for (std::size_t i = 0; i < len; ++i) {
            const auto at = static_cast<std::ptrdiff_t>(start + i);
            xb[i] = bits_of(x[at * incx]);
            yb[i] = bits_of(y[at * incy]);
        }
        acc.add(xb.data(), yb.data(), len);
    }
}

// The parallel dot: contiguous chunks of the index range (aligned to the kernels' blocks), one accumulator per chunk,
// merged exactly in chunk order; the initial value last. Same bits for every number of chunks.
template <floating_format T>
reference dot_impl(const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy, std::size_t n,
                   std::optional<T> initial, unsigned threads) {
    detail::dot_accumulator acc(format_traits<T>::info);
    const std::size_t chunks = detail::chunk_count(n, threads == 1 ? 1 : detail::resolve_threads(threads));
    if (chunks <= 1) {
        accumulate(acc, x, incx, y, incy, n);
    } else {
        const std::size_t length = detail::chunk_length(n, chunks, block_size);
        const std::size_t used = (n + length - 1) / length;
        std::vector<detail::dot_accumulator> parts(used, detail::dot_accumulator(format_traits<T>::info));
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used))
        for (std::size_t k = 0; k < used; ++k) {
            const auto begin = static_cast<std::ptrdiff_t>(k * length);
            accumulate(parts[k], x + begin * incx, incx, y + begin * incy, incy,
                       std::min(length, n - static_cast<std::size_t>(begin)));
        }
        for (const detail::dot_accumulator& p : parts) acc.merge(p);
    }
    if (initial) acc.add_term(bits_of(*initial));
    reference r;
    acc.finish(r);
    r.cache_enclosures();
    return r;
}

template <floating_format T>
void check_lengths(std::size_t nx, std::size_t ny) {
    if (nx != ny)
        throw std::invalid_argument("exactref::dot: x has " + std::to_string(nx) + " elements and y has " +
                                    std::to_string(ny) + ": pass two vectors of the same length");
}

}  // namespace

template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y) {
    check_lengths<T>(x.size(), y.size());
    return dot_impl<T>(x.data(), 1, y.data(), 1, x.size(), std::nullopt, 1);
}

template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y, const dot_options& options) {
    check_lengths<T>(x.size(), y.size());
    return dot_impl<T>(x.data(), 1, y.data(), 1, x.size(), std::nullopt, options.threads);
}

template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y, T initial) {
    check_lengths<T>(x.size(), y.size());
    return dot_impl<T>(x.data(), 1, y.data(), 1, x.size(), initial, 1);
}

template <floating_format T>
reference dot_strided(const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy, std::size_t n,
                      std::optional<T> initial) {
    return dot_impl<T>(x, incx, y, incy, n, initial, 1);
}

template <floating_format T>
reference dot_strided(const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy, std::size_t n,
                      std::optional<T> initial, const dot_options& options) {
    return dot_impl<T>(x, incx, y, incy, n, initial, options.threads);
}

#define EXACTREF_INSTANTIATE_DOT(T)                                                                       \
    template reference dot<T>(std::span<const T>, std::span<const T>);                                    \
    template reference dot<T>(std::span<const T>, std::span<const T>, T);                                 \
    template reference dot<T>(std::span<const T>, std::span<const T>, const dot_options&);                \
    template reference dot_strided<T>(const T*, std::ptrdiff_t, const T*, std::ptrdiff_t, std::size_t,    \
                                      std::optional<T>, const dot_options&);                              \
    template reference dot_strided<T>(const T*, std::ptrdiff_t, const T*, std::ptrdiff_t, std::size_t,    \
                                      std::optional<T>);
EXACTREF_INSTANTIATE_DOT(double)
EXACTREF_INSTANTIATE_DOT(float)
EXACTREF_INSTANTIATE_DOT(float16)
EXACTREF_INSTANTIATE_DOT(bfloat16)
#undef EXACTREF_INSTANTIATE_DOT

}  // namespace exactref

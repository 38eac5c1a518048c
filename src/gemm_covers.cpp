// covers() over an exact matrix product without a reference per element (docs/algorithms/covers-filter.md, "Exact
// matrix products", Steps P1-P6).
//
// Step P1  Per element (i, j) of a sliced product: s = S·2^(E_i + F_j - (levels + 1)·w) (+ C0(i, j)), S the integer of
//          its limbs (s_limbs: the level sums packed at Step S4), and T = Σ_t t_levels[t]·2^(E_i + F_j - (t + 2)·w)
//          (+ |C0(i, j)|), summed exactly as integers in a small window of 64-bit digits (exact_window) — the same
//          exact values element(i, j) puts into its superaccumulators; or, with Step S6 (ozaki.md; any format), T
//          enclosed from t_hat (detail::t_enclosure).
// Step P2  RD and RU of those exact values in binary64 (what superaccumulator::enclosure() gives: detail::encode, or
//          its closed form for normal doubles), RN/RD/RU in the result format for exact and faithful, and the fields
//          the flat bound depends on (n = K or K + 1, min_product_exponent): the element's reference, less its
//          accumulators. Elements with Inf/NaN operands, bits below the last slice ("far"), values whose window would
//          not fit, and every element of a per-element product are not enclosed here: covers() builds their reference.
// Step P3  The filter and the exact path of covers() over arrays (covers.cpp, detail::element_source): the same
//          decisions as covers() over to_array(), without building it.
// Step P4  The fast path of bound standards (element_source::enclose): the levels and C0 summed exactly as in
//          P1-P2, the far products not summed but bounded (|far part| <= F from the counts of far entries and the
//          row's and column's tops), so s and W are enclosed with ±F and +F; what Steps F2-F3 leave undecided
//          takes P1-P3.
// Step P5  The producer's order (band_cursor: bands of 64 rows, column-major inside) and the usual element's
//          enclosure written out per column run (enclose_run); covers.cpp decides the flat standards in vector lanes.
// Step P6  The usual element's enclosure in 8 AVX-512 lanes: binary32/16/bfloat16 terms (enclose_narrow_run_v4: the
//          128-bit sum, leading bits, RD/RU, Step S6's T) and binary64 terms (enclose_wide_run_v4: the 192-bit sum,
//          T from its levels or Step S6's t_hat, the far bound), in 64-bit integer and binary64 lanes: the same
//          numbers bit for bit.
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>    // std::ldexp
#include <cstring>  // std::memcpy: results read from raw storage
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/accumulator.h"  // detail::encode
#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/detail/fp_environment.h"
#include "exactref/detail/uint128.h"
#include "exactref/gemm.h"
#include "covers_filter.h"  // next_up, next_down (Step S6: W = T + |C0| rounded outward)
#include "gemm_state.h"
#include "simd_targets.h"

#if defined(EXACTREF_EMULATE_AVX512)
// tests/avx512_emulated_covers.cpp compiles this file again on a portable model of the intrinsics (tests/
// avx512_emulation.h), so that Step P6's AVX-512 kernels run, lane by lane, on a CPU without AVX-512 too.
#define EXACTREF_NARROW_RUN_LANES 1
#undef EXACTREF_TARGET_V4
#define EXACTREF_TARGET_V4
#include "avx512_emulation.h"
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_NARROW_RUN_LANES 1
// GCC 12's avx512fintrin.h warns that its own _mm512_undefined_* values "may be used uninitialized" when inlined
// (GCC bug 105593, fixed in GCC 13): a false positive of the header, silenced for it alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>  // Step P6's AVX-512 kernel
#pragma GCC diagnostic pop
#endif

namespace exactref {

namespace {

// Step P1: Σ v_k·2^(base + shift_k) exactly, shift_k >= 0, as signed 128-bit digits of 64 bits each (carries are
// settled once at the end). Each add puts less than 2^64 into one digit and 2^64 into the next, so a digit holds far
// more adds than an element makes (at most 31 levels, C0 and two halves of each of at most 64 far products: < 2^8,
// the carry margin of digits_for) without overflow.
class exact_window {
public:
    static constexpr int max_digits = 16;

    // A window of `digits` digits starting at 2^base (every shift_k + 64 + 8 <= 64·digits: see fits()).
    void reset(int base, int digits) noexcept {
        base_ = base;
        digits_ = digits;
        for (int q = 0; q < digits; ++q) digit_[q] = 0;
    }
    // Digits for values whose terms lie below 2^(base + top_shift) (|v| < 2^64, a carry margin of 8 bits).
    static int digits_for(int top_shift) noexcept { return (top_shift + 64 + 8) / 64 + 1; }
    int base() const noexcept { return base_; }

    void add(std::int64_t v, int shift) noexcept {
        const int q = shift >> 6;
        const detail::int128 x = static_cast<detail::int128>(v) << (shift & 63);  // |x| < 2^126
        digit_[q] += static_cast<detail::int128>(static_cast<std::uint64_t>(x));  // x mod 2^64
        digit_[q + 1] += x >> 64;                                            // floor(x / 2^64)
    }
    // s's limbs (a two's-complement integer of `words` limbs, the lowest first) at 2^(base + shift): the lower limbs
    // unsigned, the top one signed (every shift + 64·(words - 1) + 64 + 8 <= 64·digits).
    void add_limbs(const std::uint64_t* limbs, int words, int shift) noexcept {
        for (int q = 0; q + 1 < words; ++q) add_unsigned(limbs[q], false, shift + 64 * q);
        add(static_cast<std::int64_t>(limbs[words - 1]), shift + 64 * (words - 1));
    }
    void add_unsigned(std::uint64_t v, bool negative, int shift) noexcept {  // ±v·2^shift, v < 2^64
        const int q = shift >> 6;
        const detail::uint128 x = static_cast<detail::uint128>(v) << (shift & 63);
        const auto lo = static_cast<detail::int128>(static_cast<std::uint64_t>(x));
        const auto hi = static_cast<detail::int128>(static_cast<std::uint64_t>(x >> 64));
        digit_[q] += negative ? -lo : lo;
        digit_[q + 1] += negative ? -hi : hi;
    }

    // The value's sign and leading bits: |value| = (m + sticky·ε)·2^e, 0 <= ε < 1, m with its top bit set unless
    // the whole magnitude fits in m (then sticky is false). zero when the value is 0.
    struct leading {
        bool zero = true, negative = false, sticky = false;
        std::uint64_t m = 0;
        int e = 0;
    };
    leading settle() noexcept {
        std::uint64_t word[max_digits];
        for (int q = 0; q + 1 < digits_; ++q) {  // carries up: digit q into [0, 2^64)
            const detail::int128 carry = digit_[q] >> 64;
            word[q] = static_cast<std::uint64_t>(digit_[q]);
            digit_[q + 1] += carry;
        }
        word[digits_ - 1] = static_cast<std::uint64_t>(digit_[digits_ - 1]);  // the top digit is small: its sign
        leading out;
        out.negative = digit_[digits_ - 1] < 0;
        if (out.negative) {  // two's complement of the whole word string
            bool carry = true;
            for (int q = 0; q < digits_; ++q) {
                word[q] = ~word[q] + (carry ? 1 : 0);
                carry = carry && word[q] == 0;
            }
        }
        int h = digits_ - 1;
        while (h >= 0 && word[h] == 0) --h;
        if (h < 0) return out;
        out.zero = false;
        if (h == 0) {
            out.m = word[0];
            out.e = base_;
            return out;
        }
        const int lz = std::countl_zero(word[h]);
        out.m = lz == 0 ? word[h] : (word[h] << lz) | (word[h - 1] >> (64 - lz));
        out.e = base_ + 64 * h - lz;
        out.sticky = (word[h - 1] << lz) != 0;
        for (int q = h - 2; q >= 0 && !out.sticky; --q) out.sticky = word[q] != 0;
        return out;
    }

private:
    detail::int128 digit_[max_digits];
    int base_ = 0, digits_ = 0;
};

// The widest window the 128-bit case of Step P1 takes (see product_elements::enclose).
constexpr int narrow_top_shift = 58;

// s's limbs as one 128-bit integer (words <= 2; one limb sign-extended).
detail::int128 limbs_value128(const std::uint64_t* limbs, int words) noexcept {
    if (words == 1) return static_cast<std::int64_t>(limbs[0]);
    return static_cast<detail::int128>((static_cast<detail::uint128>(limbs[1]) << 64) | limbs[0]);
}

// The window of Step P1 for an element whose levels' top lies at top_shift from the window's base and whose s limbs
// start at offset: the largest shift any add makes (the top limb's, or a level's, a C0's, a far product's).
int window_top_shift(int top_shift, int offset, int words) noexcept {
    return std::max(top_shift, offset + 64 * (words - 1));
}

// Step P1's value v·2^base as sign and leading bits (exact_window::settle's form) from one 128-bit integer, always
// normalized (m's top bit set, which settle's form allows): one path for every magnitude, no branch on whether the
// value reaches 2^64.
exact_window::leading leading_of(detail::int128 v, int base) noexcept {
    exact_window::leading out;
    if (v == 0) return out;
    out.zero = false;
    out.negative = v < 0;
    const detail::uint128 magnitude = out.negative ? -static_cast<detail::uint128>(v) : static_cast<detail::uint128>(v);
    const auto high = static_cast<std::uint64_t>(magnitude >> 64), low = static_cast<std::uint64_t>(magnitude);
    const int lz = high != 0 ? std::countl_zero(high) : 64 + std::countl_zero(low);  // < 128: magnitude != 0
    const detail::uint128 aligned = magnitude << lz;  // top bit at 127
    out.m = static_cast<std::uint64_t>(aligned >> 64);
    out.e = base + 64 - lz;
    out.sticky = static_cast<std::uint64_t>(aligned) != 0;
    return out;
}

// Step P4's exact sum of a wide element (binary64 terms: 5 levels of 21 bits and more, no far products): Σ v_k·2^sh_k,
// |v_k| < 2^63, 0 <= sh_k <= 122, at most 33 terms, as one two's-complement integer of three 64-bit limbs (every
// partial sum below 2^(122 + 63 + 6) = 2^191: no overflow), carries propagated at each add.
class exact_sum192 {
public:
    static constexpr int max_shift = 122;
    void add(std::int64_t v, int shift) noexcept {
        const int q = shift >> 6;
        const detail::int128 x = static_cast<detail::int128>(v) << (shift & 63);  // |x| < 2^126
        const auto lo = static_cast<std::uint64_t>(x), hi = static_cast<std::uint64_t>(x >> 64);
        const std::uint64_t ext = x < 0 ? ~std::uint64_t{0} : 0;  // x's sign extension above its two limbs
        const detail::uint128 a = static_cast<detail::uint128>(limb_[q]) + lo;
        limb_[q] = static_cast<std::uint64_t>(a);
        const detail::uint128 b = static_cast<detail::uint128>(limb_[q + 1]) + hi + static_cast<std::uint64_t>(a >> 64);
        limb_[q + 1] = static_cast<std::uint64_t>(b);
        limb_[q + 2] += ext + static_cast<std::uint64_t>(b >> 64);  // limb 3 (q = 1) is beyond the value: ignored
    }
    void add_unsigned(std::uint64_t v, bool negative, int shift) noexcept {  // ±v·2^shift, v < 2^53 (C0)
        add(negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v), shift);
    }
    // s's limbs (two's complement, 1 <= words <= 3) at 2^shift, the value's magnitude times 2^shift below 2^191:
    // sign-extended to three limbs, shifted and added modulo 2^192.
    void add_limbs(const std::uint64_t* limbs, int words, int shift) noexcept {
        const std::uint64_t fill = static_cast<std::int64_t>(limbs[words - 1]) < 0 ? ~std::uint64_t{0} : 0;
        std::uint64_t x[3];
        for (int q = 0; q < 3; ++q) x[q] = q < words ? limbs[q] : fill;
        const int whole = shift >> 6, r = shift & 63;
        std::uint64_t carry = 0;
        for (int d = 0; d < 3; ++d) {
            const std::uint64_t hi = d - whole >= 0 ? x[d - whole] : 0, lo = d - whole - 1 >= 0 ? x[d - whole - 1] : 0;
            const std::uint64_t y = r == 0 ? hi : (hi << r) | (lo >> (64 - r));
            const detail::uint128 sum = static_cast<detail::uint128>(limb_[d]) + y + carry;
            limb_[d] = static_cast<std::uint64_t>(sum);
            carry = static_cast<std::uint64_t>(sum >> 64);
        }
    }
    // The value·2^base as sign and leading bits (exact_window::settle's form).
    exact_window::leading settle(int base) const noexcept {
        exact_window::leading out;
        std::uint64_t w0 = limb_[0], w1 = limb_[1], w2 = limb_[2];
        out.negative = (w2 >> 63) != 0;
        if (out.negative) {  // two's complement of the three limbs
            w0 = ~w0;
            w1 = ~w1;
            w2 = ~w2;
            const detail::uint128 a = static_cast<detail::uint128>(w0) + 1;
            w0 = static_cast<std::uint64_t>(a);
            const detail::uint128 b = static_cast<detail::uint128>(w1) + static_cast<std::uint64_t>(a >> 64);
            w1 = static_cast<std::uint64_t>(b);
            w2 += static_cast<std::uint64_t>(b >> 64);
        }
        const std::uint64_t word[3] = {w0, w1, w2};
        int h = 2;
        while (h >= 0 && word[h] == 0) --h;
        if (h < 0) return out;
        out.zero = false;
        if (h == 0) {
            out.m = w0;
            out.e = base;
            return out;
        }
        const int lz = std::countl_zero(word[h]);
        out.m = lz == 0 ? word[h] : (word[h] << lz) | (word[h - 1] >> (64 - lz));
        out.e = base + 64 * h - lz;
        out.sticky = (word[h - 1] << lz) != 0 || (h == 2 && w0 != 0);
        return out;
    }

private:
    std::uint64_t limb_[4] = {0, 0, 0, 0};
};

// Step P2: RD and RU in binary64 of (-1)^negative·(m + sticky·ε)·2^e, as superaccumulator::enclosure() gives them
// (detail::encode, integer operations only). For a normal double (the usual case) in closed form: with m's top bit
// set, the value lies in the binade of 2^(e + 63); M = m >> 11 are its 53 significant bits, inexact when the 11 bits
// below or the sticky part are not zero, and the magnitude's RD is M·2^(e + 11), its RU the next encoding up (which
// carries into the next binade, or to +inf above max, as the encoding's order does).
[[gnu::always_inline]] inline void enclose_binary64(const exact_window::leading& v, double& lo, double& hi) noexcept {
    if (v.zero) {
        lo = hi = 0.0;
        return;
    }
    const int biased = v.e + 63 + 1023;  // the binade's biased exponent when m's top bit is set
    if ((v.m >> 63) != 0 && biased >= 1 && biased <= 2046) {
        const std::uint64_t magnitude = (static_cast<std::uint64_t>(biased) << 52) | ((v.m >> 11) & ((std::uint64_t{1} << 52) - 1));
        const bool inexact = v.sticky || (v.m & 0x7ff) != 0;
        const std::uint64_t down = magnitude, up = magnitude + (inexact ? 1 : 0);  // of the magnitude
        constexpr std::uint64_t sign = std::uint64_t{1} << 63;
        lo = std::bit_cast<double>(v.negative ? sign | up : down);
        hi = std::bit_cast<double>(v.negative ? sign | down : up);
        return;
    }
    lo = std::bit_cast<double>(detail::encode(binary64_info, v.negative, v.m, v.e, v.sticky, rounding::downward));
    hi = std::bit_cast<double>(detail::encode(binary64_info, v.negative, v.m, v.e, v.sticky, rounding::upward));
}

// ---- Step P6: the usual element's enclosures of a run, element by element and in 8 AVX-512 lanes ----------------

// Element k of a run (detail::narrow_run_input): whether the usual element's enclosure takes it (a plain row without
// far entries whose products cannot lie below 2^emin: the key's min_product_exponent).
bool row_takes(std::uint8_t flag, int ra, int cb, int emin) noexcept {
    return flag != 0 && (ra == INT_MAX || cb == INT_MAX || ra + cb >= emin);
}
bool narrow_run_takes(const detail::narrow_run_input& in, std::size_t k) noexcept {
    return row_takes(in.row_simple[k], in.row_min_exponent[k], in.col_min_exponent, in.emin);
}

// Element k's enclosures (Steps P1-P2's narrow case and Step S6's T), the element-by-element code.
void narrow_run_element(const detail::narrow_run_input& in, std::size_t k, const detail::narrow_run_output& out) {
    out.s_lo[k] = out.s_hi[k] = out.w_lo[k] = out.w_hi[k] = 0;
    out.usable[k] = 0;
    out.done[k] = narrow_run_takes(in, k) ? 1 : 0;
    if (out.done[k] == 0) return;
    const detail::int128 sum = limbs_value128(in.limbs + k * static_cast<std::size_t>(in.words), in.words);
    enclose_binary64(leading_of(sum, in.row_top[k] + in.low_offset), out.s_lo[k], out.s_hi[k]);
    out.usable[k] = detail::t_enclosure_of(in.t_hat[k], in.t_below, in.t_above, out.w_lo[k], out.w_hi[k]) ? 1 : 0;
}

// Step P4's far bound (product_elements::far_bound, whose comment has the proof): F = far_a·2^(top - s_A·w) +
// far_b·2^(top - s_B·w) rounded to nearest and moved one step up; false when a power of two would leave the range.
bool far_bound_of(int top, int sa_w, int sb_w, std::size_t far_a, std::size_t far_b, double& far) noexcept {
    const int ea = top - sa_w, eb = top - sb_w;
    if (std::min(ea, eb) < -1022 + 32 || std::max(ea, eb) > 1023 - 64) return false;
    // 2^ea and 2^eb are normal (the check above), so their encodings are the exponent fields alone.
    const auto pow2 = [](int e) { return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52); };
    far = detail::next_up(static_cast<double>(far_a) * pow2(ea) + static_cast<double>(far_b) * pow2(eb));
    return true;
}

// Neighbours of a finite double of either sign (Step P4 widens s's ends, which may be negative): a value d
// that is RN(x) has next_down(d) < x and next_up(d) > x (RN picks the nearest, so x lies within half of the gap
// to either neighbour). Both zeros step to ±min_subnormal (next_up and next_down take +0.0 for them).
double signed_next_up(double x) noexcept { return x < 0 ? -detail::next_down(-x) : detail::next_up(x == 0 ? 0.0 : x); }
double signed_next_down(double x) noexcept {
    return x > 0 ? detail::next_down(x) : -detail::next_up(x == 0 ? 0.0 : -x);
}

// Step P4's W for binary64 terms (product_elements::enclose_levels, whose comment has the proof): T's levels
// t[0 .. levels - 1] at 2^(low + (levels - 1 - t)·w) and c_abs summed in binary64 from the lowest level up, the sum
// moved outward by 2^-45 relative and one step. False when a level's scale would leave the normal range.
bool enclose_levels_of(const std::int64_t* t, int levels, int w, int low, double c_abs, double& w_lo,
                       double& w_hi) noexcept {
    if (low < -1022 || low + (levels - 1) * w + 63 + 6 > 1023) return false;
    double sum = c_abs;
    for (int lv = levels - 1; lv >= 0; --lv) {
        const int e = low + (levels - 1 - lv) * w;  // a normal exponent: the check above
        const double scale = std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
        sum += static_cast<double>(t[lv]) * scale;
    }
    w_lo = detail::next_down(sum * (1 - 0x1p-45));
    w_hi = detail::next_up(sum * (1 + 0x1p-45));
    return true;
}

// Element k of a wide run (detail::wide_run_input): enclose_fast's binary64-term element without C0, element by
// element: s's exact 192-bit value (exact_sum192), its RD and RU, T's enclosure, the far bound F on both.
void wide_run_element(const detail::wide_run_input& in, std::size_t k, const detail::narrow_run_output& out) {
    out.s_lo[k] = out.s_hi[k] = out.w_lo[k] = out.w_hi[k] = 0;
    out.usable[k] = 0;
    out.done[k] = 0;
    if (!row_takes(in.row_plain[k], in.row_min_exponent[k], in.col_min_exponent, in.emin)) return;
    const int levels = in.count_levels, w = in.w, low = in.row_top[k] + in.low_offset;
    double far = 0;
    const std::size_t far_a = in.row_far[k], far_b = in.col_far;
    if (far_a + far_b > 0 &&
        !far_bound_of(low + (levels + 1) * w, in.slices_a * w, in.slices_b * w, far_a, far_b, far))
        return;
    out.done[k] = 1;
    double s_lo = 0, s_hi = 0, w_lo = 0, w_hi = 0;
    if (in.t_hat != nullptr) {  // Step S6's T (it holds the far products too)
        if (!detail::t_enclosure_of(in.t_hat[k], in.t_below, in.t_above, w_lo, w_hi)) return;  // usable 0
    } else if (!enclose_levels_of(in.t_levels + k * static_cast<std::size_t>(levels), levels, w, low, 0.0, w_lo,
                                  w_hi)) {
        return;  // usable 0
    }
    exact_sum192 sum;
    sum.add_limbs(in.s_limbs + k * static_cast<std::size_t>(in.s_words), in.s_words, 0);
    enclose_binary64(sum.settle(low), s_lo, s_hi);
    if (far > 0) {
        if (in.t_hat == nullptr) w_hi = detail::next_up(w_hi + far);
        s_lo = signed_next_down(s_lo - far);
        s_hi = signed_next_up(s_hi + far);
    }
    out.s_lo[k] = s_lo;
    out.s_hi[k] = s_hi;
    out.w_lo[k] = w_lo;
    out.w_hi[k] = w_hi;
    out.usable[k] = 1;
}

#ifdef EXACTREF_NARROW_RUN_LANES
// enclose_binary64's closed form in 8 lanes: RD and RU (encodings) of (-1)^negative·(top + sticky·ε)·2^e, top's bit
// 63 set, biased = e + 63 + 1023; normal marks the lanes where the closed form holds (biased in 1 .. 2046; the others
// take encode, element by element). Lanes outside `set` (zero sums, lanes not taken) are 0 and 0.
struct lanes_enclosure {
    __m512i lo, hi;
    __mmask8 normal;
};
[[gnu::always_inline]] EXACTREF_TARGET_V4 inline lanes_enclosure lanes_enclose_binary64(__mmask8 negative, __m512i top,
                                                                                      __mmask8 sticky, __m512i biased,
                                                                                      __mmask8 set) {
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i significand = _mm512_set1_epi64((std::int64_t{1} << 52) - 1), below11 = _mm512_set1_epi64(0x7ff);
    const __m512i sign = _mm512_set1_epi64(std::numeric_limits<std::int64_t>::min());
    lanes_enclosure out;
    out.normal = _mm512_cmpge_epi64_mask(biased, one) & _mm512_cmple_epi64_mask(biased, _mm512_set1_epi64(2046));
    const __m512i magnitude = _mm512_or_si512(_mm512_slli_epi64(biased, 52),
                                              _mm512_and_si512(_mm512_srli_epi64(top, 11), significand));
    const __mmask8 inexact = sticky | _mm512_test_epi64_mask(top, below11);
    const __m512i up = _mm512_mask_add_epi64(magnitude, inexact, magnitude, one);
    out.lo = _mm512_maskz_mov_epi64(set, _mm512_mask_blend_epi64(negative, magnitude, _mm512_or_si512(sign, up)));
    out.hi = _mm512_maskz_mov_epi64(set, _mm512_mask_blend_epi64(negative, up, _mm512_or_si512(sign, magnitude)));
    return out;
}

// The lanes of elements k .. k + 7 that exist (a run's tail is shorter).
[[gnu::always_inline]] inline __mmask8 lanes_live(std::size_t count, std::size_t k) {
    const std::size_t left = count - k;
    return left >= 8 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << left) - 1);
}

// narrow_run_takes' test in 8 lanes: the row's flag set and its products' exponents allowed (row minimum INT_MAX,
// column minimum INT_MAX or their sum >= emin, in 64-bit lanes), for the live lanes.
[[gnu::always_inline]] EXACTREF_TARGET_V4 inline __mmask8 lanes_row_takes(__mmask8 live, const std::uint8_t* flag,
                                                                       const int* row_min_exponent,
                                                                       int col_min_exponent, int emin) {
    const __m512i set = _mm512_cvtepu8_epi64(_mm_maskz_loadu_epi8(live, flag));
    const __mmask8 flagged = live & _mm512_test_epi64_mask(set, set);
    if (col_min_exponent == INT_MAX) return flagged;
    const __m512i ra = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(live, row_min_exponent));
    return flagged & (_mm512_cmpeq_epi64_mask(ra, _mm512_set1_epi64(INT_MAX)) |
                      _mm512_cmpge_epi64_mask(_mm512_add_epi64(ra, _mm512_set1_epi64(col_min_exponent)),
                                              _mm512_set1_epi64(emin)));
}

// The next run's levels of 8 elements (levels cache lines from `at`), a few lines per vector of work: a whole run's
// lines issued at once (up to 80 for binary64 terms) waited on the fill buffers (2026-12-06, perf annotate).
[[gnu::always_inline]] inline void lanes_prefetch(const void* at, int lines) {
    for (int q = 0; q < lines; ++q) __builtin_prefetch(static_cast<const char*>(at) + 64 * q);
}

// detail::next_up per lane for x >= +0.0: the next encoding, inf stays inf.
[[gnu::always_inline]] EXACTREF_TARGET_V4 inline __m512i lanes_next_up_nonnegative(__m512d x) {
    const __m512i bits = _mm512_castpd_si512(x);
    const __mmask8 finite = _mm512_cmpneq_epi64_mask(bits, _mm512_set1_epi64(0x7ff0000000000000));
    return _mm512_mask_add_epi64(bits, finite, bits, _mm512_set1_epi64(1));
}

// t_enclosure_of in 8 lanes, for the lanes in `takes` (t_hat read there only): usable where t is finite and >= 0;
// lo = next_down(RN(t·t_below)) and hi = next_up(RN(t·t_above)) on the encodings for t > 0 (lo 0 when the product is
// not positive), both 0 for t = 0 and in the lanes not usable.
struct lanes_t_enclosure {
    __mmask8 usable;
    __m512i lo, hi;
};
[[gnu::always_inline]] EXACTREF_TARGET_V4 inline lanes_t_enclosure lanes_enclose_t(const double* t_hat, __mmask8 takes,
                                                                                  __m512d t_below, __m512d t_above) {
    const __m512d zero = _mm512_setzero_pd(), inf = _mm512_set1_pd(std::numeric_limits<double>::infinity());
    const __m512d t = _mm512_maskz_loadu_pd(takes, t_hat);
    lanes_t_enclosure out;
    out.usable = takes & _mm512_cmp_pd_mask(t, zero, _CMP_GE_OQ) & _mm512_cmp_pd_mask(t, inf, _CMP_LT_OQ);
    const __mmask8 positive = out.usable & _mm512_cmp_pd_mask(t, zero, _CMP_GT_OQ);
    const __m512d below = _mm512_mul_pd(t, t_below), above = _mm512_mul_pd(t, t_above);
    const __mmask8 below_positive = _mm512_cmp_pd_mask(below, zero, _CMP_GT_OQ);
    out.lo = _mm512_maskz_sub_epi64(positive & below_positive, _mm512_castpd_si512(below), _mm512_set1_epi64(1));
    out.hi = _mm512_maskz_mov_epi64(positive, lanes_next_up_nonnegative(above));
    return out;
}

// Step P6 (docs/algorithms/covers-filter.md): narrow_run_element in 8 lanes, the same numbers. Per lane: s's limbs
// loaded (two limbs: the 8 lanes' 16 in two loads, split into even and odd; one limb: its sign fill as the high
// word), the scalar int128 value; its magnitude
// (negated as ~high:~low + 1 for a negative sum); leading_of's count of leading zeros (the high word's, else 64 plus
// the low word's) and its top 64 bits and sticky bit with variable shifts, whose counts of 64 and more give 0 (so
// (high << lz) | (low >> (64 - lz)) | (low << (lz - 64)) is the aligned top word for every lz in 0 .. 127);
// enclose_binary64's closed form on them. A lane whose value is not a normal double (its biased exponent outside
// 1 .. 2046: encode's cases) is recomputed by narrow_run_element. T's lanes are t_enclosure_of's operations:
// the products t·t_below and t·t_above rounded to nearest as the scalar multiplications, next_down and next_up on
// the encodings (0 for t = 0, next_up(inf) = inf).
EXACTREF_TARGET_V4 void enclose_narrow_run_v4(const detail::narrow_run_input& in, std::size_t count,
                                              const detail::narrow_run_output& out) {
    const int words = in.words;
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1), all_ones = _mm512_set1_epi64(-1);
    const __m512i sixty_four = _mm512_set1_epi64(64);
    const __m512i even_limbs = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd_limbs = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i low_offset = _mm512_set1_epi64(in.low_offset + 1150);  // biased = low + 64 - lz + 63 + 1023
    const __m512d t_below = _mm512_set1_pd(in.t_below), t_above = _mm512_set1_pd(in.t_above);
    for (std::size_t k = 0; k < count; k += 8) {
        const __mmask8 live = lanes_live(count, k);
        const __mmask8 takes =
            lanes_row_takes(live, in.row_simple + k, in.row_min_exponent + k, in.col_min_exponent, in.emin);
        if (in.prefetch != nullptr) lanes_prefetch(in.prefetch + k * static_cast<std::size_t>(words), words);
        // s as (high, low) two's-complement words: one limb and its sign fill, or two limbs (the 16 limbs of the 8
        // lanes in two loads, their even and odd limbs picked out).
        const std::uint64_t* base = in.limbs + k * static_cast<std::size_t>(words);
        __m512i lo, hi;
        if (words == 1) {
            lo = _mm512_maskz_loadu_epi64(live, base);
            hi = _mm512_srai_epi64(lo, 63);
        } else {
            const unsigned limbs = 2u * static_cast<unsigned>(std::popcount(static_cast<unsigned>(live)));
            const auto first = static_cast<__mmask8>(limbs >= 8 ? 0xffu : (1u << limbs) - 1);
            const auto second = static_cast<__mmask8>(limbs <= 8 ? 0u : (1u << (limbs - 8)) - 1);
            const __m512i v0 = _mm512_maskz_loadu_epi64(first, base), v1 = _mm512_maskz_loadu_epi64(second, base + 8);
            lo = _mm512_permutex2var_epi64(v0, even_limbs, v1);
            hi = _mm512_permutex2var_epi64(v0, odd_limbs, v1);
        }
        // leading_of: sign, magnitude, leading zeros, the top 64 bits and the sticky bit.
        const __mmask8 negative = _mm512_cmplt_epi64_mask(hi, zero);
        const __mmask8 low_zero = _mm512_cmpeq_epi64_mask(lo, zero);
        const __m512i mag_lo = _mm512_mask_sub_epi64(lo, negative, zero, lo);
        __m512i mag_hi = _mm512_mask_xor_epi64(hi, negative, hi, all_ones);
        mag_hi = _mm512_mask_add_epi64(mag_hi, negative & low_zero, mag_hi, one);
        const __mmask8 high_nonzero = _mm512_test_epi64_mask(mag_hi, mag_hi);
        const __mmask8 is_zero = ~high_nonzero & _mm512_cmpeq_epi64_mask(mag_lo, zero);
        const __m512i lz = _mm512_mask_blend_epi64(high_nonzero, _mm512_add_epi64(sixty_four, _mm512_lzcnt_epi64(mag_lo)),
                                                   _mm512_lzcnt_epi64(mag_hi));
        const __m512i top = _mm512_or_si512(
            _mm512_or_si512(_mm512_sllv_epi64(mag_hi, lz), _mm512_srlv_epi64(mag_lo, _mm512_sub_epi64(sixty_four, lz))),
            _mm512_sllv_epi64(mag_lo, _mm512_sub_epi64(lz, sixty_four)));
        const __mmask8 sticky = _mm512_test_epi64_mask(_mm512_sllv_epi64(mag_lo, lz), _mm512_sllv_epi64(mag_lo, lz));
        // enclose_binary64's closed form.
        const __m512i row_top = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(live, in.row_top + k));
        const __m512i biased = _mm512_sub_epi64(_mm512_add_epi64(row_top, low_offset), lz);
        const lanes_enclosure s_enc = lanes_enclose_binary64(negative, top, sticky, biased, takes & ~is_zero);
        const __mmask8 normal = s_enc.normal;
        const __m512i s_lo = s_enc.lo, s_hi = s_enc.hi;
        const lanes_t_enclosure t = lanes_enclose_t(in.t_hat + k, takes, t_below, t_above);  // t_enclosure_of
        _mm512_mask_storeu_epi64(out.s_lo + k, live, s_lo);
        _mm512_mask_storeu_epi64(out.s_hi + k, live, s_hi);
        _mm512_mask_storeu_epi64(out.w_lo + k, live, t.lo);
        _mm512_mask_storeu_epi64(out.w_hi + k, live, t.hi);
        _mm512_mask_cvtepi64_storeu_epi8(out.usable + k, live, _mm512_maskz_mov_epi64(t.usable, one));
        _mm512_mask_cvtepi64_storeu_epi8(out.done + k, live, _mm512_maskz_mov_epi64(takes, one));
        // encode's cases (a sum beyond the normal doubles): element by element.
        for (unsigned redo = takes & ~is_zero & ~normal; redo != 0; redo &= redo - 1)
            narrow_run_element(in, k + static_cast<std::size_t>(std::countr_zero(redo)), out);
    }
}
// Step P6's wide run: wide_run_element in 8 lanes, the same numbers. s's 192-bit two's-complement value as
// exact_sum192::add_limbs makes it at shift 0: the limbs gathered (stride s_words), the missing ones the top limb's
// sign fill. settle's magnitude and
// leading bits: the three limbs negated as ~limbs + 1 with the carries; the top non-zero limb h, its leading zeros lz,
// top = (limb_h << lz) | (limb_{h-1} >> (64 - lz)), sticky from the bits below; e = base + 64h - lz. settle leaves a
// sum below 2^64 unnormalized (h = 0: m = limb 0, e = base), which takes encode; here it is normalized (m = limb 0
// << lz, e = base - lz): the same value, and both give its RD and RU. T: enclose_levels_of per lane, each level
// converted to binary64 by vcvtqq2pd (round to nearest, as the scalar conversion), scaled by 2^e_t built from its
// exponent bits (the range test first), added from the lowest level up, then the outward steps.
EXACTREF_TARGET_V4 void enclose_wide_run_v4(const detail::wide_run_input& in, std::size_t count,
                                            const detail::narrow_run_output& out) {
    const int levels = in.count_levels, words = in.s_words;
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1), all_ones = _mm512_set1_epi64(-1);
    const __m512i sixty_four = _mm512_set1_epi64(64);
    const __m512i stride = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(levels));
    const __m512i s_stride = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(words));
    const __m512i low_min = _mm512_set1_epi64(-1022), low_max = _mm512_set1_epi64(1023 - (levels - 1) * in.w - 69);
    const __m512d shrink = _mm512_set1_pd(1 - 0x1p-45), grow = _mm512_set1_pd(1 + 0x1p-45);
    const __m512d zero_d = _mm512_setzero_pd();
    const __m512d t_below = _mm512_set1_pd(in.t_below), t_above = _mm512_set1_pd(in.t_above);
    const __m512i far_b = _mm512_set1_epi64(in.col_far);
    // ea + 1023 and eb + 1023 (the biased exponents of 2^ea, 2^eb), from low; their range -990 .. 959 biased.
    const __m512i ea_offset = _mm512_set1_epi64((levels + 1) * in.w - in.slices_a * in.w + 1023);
    const __m512i eb_offset = _mm512_set1_epi64((levels + 1) * in.w - in.slices_b * in.w + 1023);
    const __m512i far_min = _mm512_set1_epi64(-1022 + 32 + 1023), far_max = _mm512_set1_epi64(1023 - 64 + 1023);
    const __m512i sign = _mm512_set1_epi64(std::numeric_limits<std::int64_t>::min());
    const __m512i magnitude_mask = _mm512_set1_epi64(std::numeric_limits<std::int64_t>::max());
    for (std::size_t k = 0; k < count; k += 8) {
        const __mmask8 live = lanes_live(count, k);
        const __m512i low =
            _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(live, in.row_top + k)),
                             _mm512_set1_epi64(in.low_offset));
        // far_bound_of: F's powers of two 2^ea, 2^eb (top = low + (levels + 1)·w) in range where there are far
        // entries (else the lane is not taken), F = RN(n_A·2^ea + n_B·2^eb) moved one step up.
        const __m512i far_a = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(live, in.row_far + k));
        const __mmask8 any_far = _mm512_test_epi64_mask(_mm512_add_epi64(far_a, far_b), all_ones);
        const __m512i ea = _mm512_add_epi64(low, ea_offset), eb = _mm512_add_epi64(low, eb_offset);
        const __mmask8 far_range = _mm512_cmpge_epi64_mask(ea, far_min) & _mm512_cmpge_epi64_mask(eb, far_min) &
                                   _mm512_cmple_epi64_mask(ea, far_max) & _mm512_cmple_epi64_mask(eb, far_max);
        const __mmask8 takes =
            lanes_row_takes(live, in.row_plain + k, in.row_min_exponent + k, in.col_min_exponent, in.emin) &
            (~any_far | far_range);
        const __mmask8 widen = takes & any_far;
        if (in.prefetch_s != nullptr) lanes_prefetch(in.prefetch_s + k * static_cast<std::size_t>(words), words);
        if (in.prefetch_t != nullptr) lanes_prefetch(in.prefetch_t + k * static_cast<std::size_t>(levels), levels);
        const __m512d pow_a = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_maskz_mov_epi64(widen, ea), 52));
        const __m512d pow_b = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_maskz_mov_epi64(widen, eb), 52));
        const __m512d far_sum = _mm512_add_pd(_mm512_mul_pd(_mm512_cvtepu64_pd(far_a), pow_a),
                                              _mm512_mul_pd(_mm512_cvtepu64_pd(far_b), pow_b));
        const __m512d far = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(far_sum), one));  // > 0, finite
        // exact_sum192::add_limbs at shift 0: the limbs, the missing ones the sign fill.
        const std::uint64_t* s_base = in.s_limbs + k * static_cast<std::size_t>(words);
        const __m512i w0 = _mm512_mask_i64gather_epi64(zero, live, s_stride, s_base, 8);
        const __m512i w1 = words >= 2 ? _mm512_mask_i64gather_epi64(zero, live, s_stride, s_base + 1, 8)
                                      : _mm512_srai_epi64(w0, 63);
        const __m512i w2 = words >= 3 ? _mm512_mask_i64gather_epi64(zero, live, s_stride, s_base + 2, 8)
                                      : _mm512_srai_epi64(w1, 63);
        // settle: the magnitude of a negative sum (~limbs + 1, the carry running up while limbs are 0).
        const __mmask8 negative = _mm512_cmplt_epi64_mask(w2, zero);
        const __mmask8 w0_zero = _mm512_cmpeq_epi64_mask(w0, zero), w1_zero = _mm512_cmpeq_epi64_mask(w1, zero);
        const __m512i m0 = _mm512_mask_sub_epi64(w0, negative, zero, w0);
        __m512i m1 = _mm512_mask_xor_epi64(w1, negative, w1, all_ones);
        m1 = _mm512_mask_add_epi64(m1, negative & w0_zero, m1, one);
        __m512i m2 = _mm512_mask_xor_epi64(w2, negative, w2, all_ones);
        m2 = _mm512_mask_add_epi64(m2, negative & w0_zero & w1_zero, m2, one);
        const __mmask8 nz2 = _mm512_test_epi64_mask(m2, m2), nz1 = _mm512_test_epi64_mask(m1, m1);
        const __mmask8 is_zero = ~nz2 & ~nz1 & _mm512_cmpeq_epi64_mask(m0, zero);
        const __m512i top_limb = _mm512_mask_blend_epi64(nz2, _mm512_mask_blend_epi64(nz1, m0, m1), m2);
        const __m512i next_limb = _mm512_mask_blend_epi64(nz2, _mm512_maskz_mov_epi64(nz1, m0), m1);
        const __mmask8 rest = nz2 & _mm512_test_epi64_mask(m0, m0);
        const __m512i h64 = _mm512_mask_blend_epi64(nz2, _mm512_maskz_mov_epi64(nz1, sixty_four),
                                                    _mm512_set1_epi64(128));
        const __m512i lz = _mm512_lzcnt_epi64(top_limb);
        const __m512i top = _mm512_or_si512(_mm512_sllv_epi64(top_limb, lz),
                                            _mm512_srlv_epi64(next_limb, _mm512_sub_epi64(sixty_four, lz)));
        const __m512i below = _mm512_sllv_epi64(next_limb, lz);
        const __mmask8 sticky = _mm512_test_epi64_mask(below, below) | rest;
        // e = low + 64h - lz; biased = e + 63 + 1023.
        const __m512i biased = _mm512_add_epi64(_mm512_sub_epi64(_mm512_add_epi64(low, h64), lz), _mm512_set1_epi64(1086));
        const lanes_enclosure s_enc = lanes_enclose_binary64(negative, top, sticky, biased, takes & ~is_zero);
        __mmask8 range_ok;  // T enclosed (else the lane is all 0 and not usable)
        __m512i w_lo, w_hi;
        if (in.t_hat != nullptr) {  // t_enclosure_of (Step S6's T, far products included)
            const lanes_t_enclosure t = lanes_enclose_t(in.t_hat + k, takes, t_below, t_above);
            range_ok = t.usable;
            w_lo = t.lo;
            w_hi = t.hi;
        } else {
            // enclose_levels_of: T's levels from the lowest up, when every scale is normal.
            range_ok = takes & _mm512_cmpge_epi64_mask(low, low_min) & _mm512_cmple_epi64_mask(low, low_max);
            __m512d sum = zero_d;
            const std::int64_t* t_base = in.t_levels + k * static_cast<std::size_t>(levels);
            for (int lv = levels - 1; lv >= 0; --lv) {
                const __m512i e = _mm512_add_epi64(low, _mm512_set1_epi64((levels - 1 - lv) * in.w + 1023));
                const __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_maskz_mov_epi64(range_ok, e), 52));
                const __m512i t = _mm512_mask_i64gather_epi64(zero, range_ok, stride, t_base + lv, 8);
                sum = _mm512_add_pd(sum, _mm512_mul_pd(_mm512_cvtepi64_pd(t), scale));
            }
            const __m512d lo_d = _mm512_mul_pd(sum, shrink), hi_d = _mm512_mul_pd(sum, grow);
            const __mmask8 lo_positive = range_ok & _mm512_cmp_pd_mask(lo_d, zero_d, _CMP_GT_OQ);
            w_lo = _mm512_maskz_sub_epi64(lo_positive, _mm512_castpd_si512(lo_d), one);
            w_hi = lanes_next_up_nonnegative(hi_d);
        }
        __m512i s_lo = s_enc.lo, s_hi = s_enc.hi;
        if (widen != 0) {  // the far part: w_hi = next_up(RN(w_hi + F)) (T's levels only: Step S6's T holds it),
                           // s = [signed_next_down(RN(s_lo - F)), signed_next_up(RN(s_hi + F))] in the lanes with far
                           // entries
            if (in.t_hat == nullptr) {
                const __m512i w_far = lanes_next_up_nonnegative(_mm512_add_pd(_mm512_castsi512_pd(w_hi), far));
                w_hi = _mm512_mask_mov_epi64(w_hi, widen, w_far);
            }
            // signed_next_down(y): y > 0: bits - 1; else -(|y| + one step): sign | (|y| bits + 1).
            const __m512d y_lo = _mm512_sub_pd(_mm512_castsi512_pd(s_lo), far);
            const __mmask8 y_lo_positive = _mm512_cmp_pd_mask(y_lo, zero_d, _CMP_GT_OQ);
            const __m512i y_lo_bits = _mm512_castpd_si512(y_lo);
            const __m512i down = _mm512_mask_blend_epi64(
                y_lo_positive, _mm512_or_si512(sign, _mm512_add_epi64(_mm512_and_si512(y_lo_bits, magnitude_mask), one)),
                _mm512_sub_epi64(y_lo_bits, one));
            // signed_next_up(y): y < 0: -(|y| - one step): sign | (|y| bits - 1); else |y| bits + 1.
            const __m512d y_hi = _mm512_add_pd(_mm512_castsi512_pd(s_hi), far);
            const __mmask8 y_hi_negative = _mm512_cmp_pd_mask(y_hi, zero_d, _CMP_LT_OQ);
            const __m512i y_hi_magnitude = _mm512_and_si512(_mm512_castpd_si512(y_hi), magnitude_mask);
            const __m512i up = _mm512_mask_blend_epi64(y_hi_negative, _mm512_add_epi64(y_hi_magnitude, one),
                                                       _mm512_or_si512(sign, _mm512_sub_epi64(y_hi_magnitude, one)));
            s_lo = _mm512_mask_mov_epi64(s_lo, widen, down);
            s_hi = _mm512_mask_mov_epi64(s_hi, widen, up);
        }
        // A lane whose levels' scales leave the normal range: all 0, not usable (enclose_levels_of's refusal).
        _mm512_mask_storeu_epi64(out.s_lo + k, live, _mm512_maskz_mov_epi64(range_ok, s_lo));
        _mm512_mask_storeu_epi64(out.s_hi + k, live, _mm512_maskz_mov_epi64(range_ok, s_hi));
        _mm512_mask_storeu_epi64(out.w_lo + k, live, w_lo);
        _mm512_mask_storeu_epi64(out.w_hi + k, live, _mm512_maskz_mov_epi64(range_ok, w_hi));
        _mm512_mask_cvtepi64_storeu_epi8(out.usable + k, live, _mm512_maskz_mov_epi64(range_ok, one));
        _mm512_mask_cvtepi64_storeu_epi8(out.done + k, live, _mm512_maskz_mov_epi64(takes, one));
        for (unsigned redo = range_ok & ~is_zero & ~s_enc.normal; redo != 0; redo &= redo - 1)
            wide_run_element(in, k + static_cast<std::size_t>(std::countr_zero(redo)), out);
    }
}
#endif

// Whether the runs take the AVX-512 kernels at the given lanes.
bool run_lanes_v4(int lanes) noexcept {
#if defined(EXACTREF_EMULATE_AVX512)
    return lanes >= 8;  // the emulated kernels run on any CPU
#elif defined(EXACTREF_NARROW_RUN_LANES)
    return lanes >= 8 && detail::host_simd_lanes() >= 8;
#else
    (void)lanes;
    return false;
#endif
}

// The runs at the given lanes (detail::enclose_narrow_run, detail::enclose_wide_run).
void enclose_narrow_run_at(int lanes, const detail::narrow_run_input& in, std::size_t count,
                           const detail::narrow_run_output& out) {
#ifdef EXACTREF_NARROW_RUN_LANES
    if (run_lanes_v4(lanes)) return enclose_narrow_run_v4(in, count, out);
#endif
    for (std::size_t k = 0; k < count; ++k) narrow_run_element(in, k, out);
}
void enclose_wide_run_at(int lanes, const detail::wide_run_input& in, std::size_t count,
                         const detail::narrow_run_output& out) {
#ifdef EXACTREF_NARROW_RUN_LANES
    if (run_lanes_v4(lanes)) return enclose_wide_run_v4(in, count, out);
#endif
    for (std::size_t k = 0; k < count; ++k) wide_run_element(in, k, out);
}

// The producer's order of a product's elements (element_source positions): rows in bands of band_rows (the last
// band shorter), band b's positions from b·band_rows·n on, column-major inside it: element (i, j) of the band of
// rows [r0, r0 + h) at r0·n + j·h + (i - r0). Every element has exactly one position. A block of 4096 positions is
// 64 columns of a full band, so its level sums (column-major) come in runs of 64 elements and its results and C0
// (row-major) in runs of 64 columns.
struct band_cursor {
    static constexpr std::size_t band_rows = 64;
    std::size_t m, n, i, j, first, end;  // element (i, j) in the band of rows [first, end)
    band_cursor(std::size_t position, std::size_t rows, std::size_t cols) : m(rows), n(cols) {
        i = j = first = end = 0;
        if (m == 0 || n == 0) return;
        first = position / (band_rows * n) * band_rows;
        end = std::min(first + band_rows, m);
        const std::size_t within = position - first * n, h = end - first;
        j = within / h;
        i = first + within % h;
    }
    void advance() noexcept {
        if (++i < end) return;
        i = first;
        if (++j < n) return;
        j = 0;
        first = end;
        i = first;
        end = std::min(first + band_rows, m);
    }
};

// The elements of a product_reference for covers() (detail::element_source): flat index i·n + j (row-major).
class product_elements final : public detail::element_source {
public:
    explicit product_elements(const product_reference& p)
        : p_(p), st_(p.internal_state()), lanes_(detail::covers_block_lanes()), kernel_lanes_(run_lanes_v4(lanes_)) {
        if (st_.plan.method != matmul_method::sliced || st_.levels <= 0) return;
        sliced_ = true;
        // Rows and columns without Inf/NaN entries: their elements are the level sums, the far parts and C0.
        plain_row_.resize(st_.m);
        plain_col_.resize(st_.n);
        for (std::size_t i = 0; i < st_.m; ++i) plain_row_[i] = st_.special_a[i].empty();
        for (std::size_t j = 0; j < st_.n; ++j) plain_col_[j] = st_.special_b[j].empty();
        row_simple_.resize(st_.m);
        for (std::size_t i = 0; i < st_.m; ++i) row_simple_[i] = plain_row_[i] && st_.far_a[i].empty();
        // Step P6's wide runs: far entries per plain row (a count beyond 2^31 leaves the row to enclose_fast).
        row_far_.resize(st_.m);
        row_wide_.resize(st_.m);
        for (std::size_t i = 0; i < st_.m; ++i) {
            const std::size_t far = st_.far_a[i].size();
            row_wide_[i] = plain_row_[i] && far < (std::size_t{1} << 31);
            row_far_[i] = static_cast<std::uint32_t>(row_wide_[i] ? far : 0);
        }
    }

    std::size_t size() const noexcept override { return st_.m * st_.n; }

    void materialize(std::size_t i, reference& out) const override { p_.element(i / st_.n, i % st_.n, out); }

    // Positions in bands of band_rows rows (band_cursor), column-major inside a band: the level sums (column-major)
    // are read in runs of a band's height, the results and C0 (row-major) in runs of a block's columns.
    void facts(std::size_t position, std::span<detail::element_facts> out, std::span<std::size_t> index,
               const format_info* rounded) const override {
        band_cursor at(position, st_.m, st_.n);
        for (std::size_t k = 0; k < out.size(); ++k, at.advance()) {
            index[k] = at.i * st_.n + at.j;
            if (sliced_) enclose(at.i, at.j, out[k], rounded);
            else out[k].usable = false;
        }
    }

    // Step P4's key: every element enclose() encloses has n = K (+1 with C0) and no product below 2^emin.
    bool key(detail::element_facts& e) const override {
        if (!sliced_) return false;
        e.is_dot = true;
        e.has_initial = st_.has_c;
        e.term_format = st_.f->id;
        e.count = st_.k + (st_.has_c ? 1 : 0);
        e.min_product_exponent = st_.f->emin;
        e.product_may_underflow = false;
        return true;
    }

    void enclose(std::size_t position, std::size_t count, const enclosure_block& out) const override {
        band_cursor at(position, st_.m, st_.n);
        for (std::size_t k = 0; k < count;) {  // runs of rows of one column
            const std::size_t run = std::min(count - k, at.end - at.i);
            enclose_run(at.i, at.j, run, k, out);
            k += run;
            at.i += run - 1;
            at.advance();
        }
    }

private:
    // Step P1's exact sums of one element from 2^base: s's limbs and T's levels (t, unless null), both from shift
    // offset, and C0 (c, unless null), in one 128-bit integer each when narrow (levels' top shift <= 58, so s_words
    // <= 2 and every partial sum lies below 2^(top_shift + 69) <= 2^127: |S| < 2^(top_shift - offset + 55) for s's
    // limbs (detail::s_value_words' bound), |level| < 2^63 for at most 31 of T's, |C0| < 2^53 at its shift), else in
    // windows of digits_for(window_top_shift(top_shift, offset, s_words)) digits (<= max_digits: the caller checks),
    // into which add_far(ws, wt) adds the far products. vs and vt are the sums' leading bits (vt only with t).
    template <class AddFar>
    void sum_near(const std::uint64_t* s, const std::int64_t* t, int offset, const detail::entry_parts* c, int base,
                  int top_shift, bool narrow, AddFar&& add_far, exact_window::leading& vs,
                  exact_window::leading& vt) const {
        const int levels = st_.levels;
        if (narrow) {
            detail::int128 sum = limbs_value128(s, st_.s_words) << offset, abs_sum = 0;
            if (t != nullptr)
                for (int lv = 0; lv < levels; ++lv)
                    abs_sum += static_cast<detail::int128>(t[lv]) << (offset + (levels - 1 - lv) * st_.w);
            if (c != nullptr) {
                const auto part = static_cast<detail::int128>(c->significand) << (c->exponent - base);
                sum += c->negative ? -part : part;
                abs_sum += part;
            }
            vs = leading_of(sum, base);
            if (t != nullptr) vt = leading_of(abs_sum, base);
            return;
        }
        const int digits = exact_window::digits_for(window_top_shift(top_shift, offset, st_.s_words));
        exact_window ws, wt;
        ws.reset(base, digits);
        wt.reset(base, digits);
        ws.add_limbs(s, st_.s_words, offset);
        if (t != nullptr)
            for (int lv = 0; lv < levels; ++lv) wt.add(t[lv], offset + (levels - 1 - lv) * st_.w);
        if (c != nullptr) {
            ws.add_unsigned(c->significand, c->negative, c->exponent - base);
            wt.add_unsigned(c->significand, false, c->exponent - base);
        }
        add_far(ws, wt);
        vs = ws.settle();
        if (t != nullptr) vt = wt.settle();
    }

    // Step P4 for rows i0 .. i0 + run - 1 of column j into slots k0 .. k0 + run - 1. The usual element (a plain
    // row and column without far entries, no C0, Step S6's T, a narrow window) is enclose_fast's narrow case
    // written out with the column's fields read once: the same exact sum, RD/RU and T enclosure, so the same
    // numbers; any other element takes enclose_fast.
    void enclose_run(std::size_t i0, std::size_t j, std::size_t run, std::size_t k0, const enclosure_block& out) const {
        const int levels = st_.levels, w = st_.w;
        // A column of plain entries without far entries or C0: the usual element of Step S6's T in a narrow window
        // (binary32, binary16, bfloat16 terms), or of T's levels in a window of 59 .. 122 bits (binary64 terms).
        const bool column_plain = sliced_ && !st_.has_c && plain_col_[j];
        const int top_shift = (levels - 1) * w;
        const int words = st_.s_words;
        const bool column_simple = column_plain && st_.far_b[j].empty() && st_.t_enclosed &&
                                   top_shift <= narrow_top_shift && words <= 2;
        const bool column_wide = column_plain && st_.far_b[j].size() < (std::size_t{1} << 31) &&
                                 top_shift > narrow_top_shift && top_shift <= exact_sum192::max_shift && words <= 3;
        const std::size_t at = (j * st_.m + i0) * static_cast<std::size_t>(levels);  // T's levels
        const std::size_t at_s = (j * st_.m + i0) * static_cast<std::size_t>(words);  // s's limbs
        // The next column's run of this band (short runs are too short for the prefetchers): the lanes prefetch it
        // as they go, else here.
        const std::size_t next = at + st_.m * static_cast<std::size_t>(levels);
        const std::size_t next_s = at_s + st_.m * static_cast<std::size_t>(words);
        const bool prefetch_next = j + 1 < st_.n;
        if (prefetch_next && !(kernel_lanes_ && (column_simple || column_wide))) {
            for (std::size_t q = 0; q < run * words * 8; q += 64)
                __builtin_prefetch(reinterpret_cast<const char*>(st_.s_limbs.data() + next_s) + q);
            if (!st_.t_enclosed)
                for (std::size_t q = 0; q < run * levels * 8; q += 64)
                    __builtin_prefetch(reinterpret_cast<const char*>(st_.t_levels.data() + next) + q);
        }
        for (std::size_t r = 0; r < run; ++r) out.index[k0 + r] = (i0 + r) * st_.n + j;
        std::uint8_t done[band_cursor::band_rows] = {};  // run <= band_rows: a run lies in one band
        if (column_simple) {
            detail::narrow_run_input in;
            in.limbs = st_.s_limbs.data() + at_s;
            in.words = words;
            in.row_top = st_.row_top.data() + i0;
            in.low_offset = st_.col_top[j] - (levels + 1) * w;
            in.row_simple = row_simple_.data() + i0;
            in.row_min_exponent = st_.row_min_exponent.data() + i0;
            in.col_min_exponent = st_.col_min_exponent[j];
            in.emin = st_.f->emin;
            in.t_hat = st_.t_hat.data() + j * st_.m + i0;
            in.t_below = st_.t_below;
            in.t_above = st_.t_above;
            if (prefetch_next) in.prefetch = st_.s_limbs.data() + next_s;
            enclose_narrow_run_at(lanes_, in, run,
                                  {out.s_lo + k0, out.s_hi + k0, out.w_lo + k0, out.w_hi + k0, out.usable + k0, done});
        } else if (column_wide) {
            detail::wide_run_input in;
            in.s_limbs = st_.s_limbs.data() + at_s;
            in.s_words = words;
            if (st_.t_enclosed) {  // Step S6's T (binary64 terms)
                in.t_hat = st_.t_hat.data() + j * st_.m + i0;
                in.t_below = st_.t_below;
                in.t_above = st_.t_above;
            } else {
                in.t_levels = st_.t_levels.data() + at;
            }
            in.count_levels = levels;
            in.w = w;
            in.row_top = st_.row_top.data() + i0;
            in.low_offset = st_.col_top[j] - (levels + 1) * w;
            in.row_plain = row_wide_.data() + i0;
            in.row_far = row_far_.data() + i0;
            in.col_far = static_cast<std::uint32_t>(st_.far_b[j].size());
            in.slices_a = st_.sa;
            in.slices_b = st_.sb;
            in.row_min_exponent = st_.row_min_exponent.data() + i0;
            in.col_min_exponent = st_.col_min_exponent[j];
            in.emin = st_.f->emin;
            if (prefetch_next) {
                in.prefetch_s = st_.s_limbs.data() + next_s;
                if (!st_.t_enclosed) in.prefetch_t = st_.t_levels.data() + next;
            }
            enclose_wide_run_at(lanes_, in, run,
                                {out.s_lo + k0, out.s_hi + k0, out.w_lo + k0, out.w_hi + k0, out.usable + k0, done});
        }
        for (std::size_t r = 0; r < run; ++r) {
            if (done[r] != 0) continue;
            const std::size_t k = k0 + r;
            out.usable[k] = enclose_fast(i0 + r, j, out.s_lo[k], out.s_hi[k], out.w_lo[k], out.w_hi[k]) ? 1 : 0;
        }
    }

    // Step P4 for element (i, j): s in [s_lo, s_hi], W in [w_lo, w_hi] without summing the far products. The near
    // part (levels and C0) is summed exactly in one 128-bit integer and enclosed by its RD and RU (Steps P1-P2's
    // usual case); the far part lies in [-F, F] for s and [0, F] for T, F the bound of far_bound(). False sends the
    // element to facts() (Inf/NaN operands, a product that may lie below 2^emin: another key, a wide window).
    bool enclose_fast(std::size_t i, std::size_t j, double& s_lo, double& s_hi, double& w_lo, double& w_hi) const {
        const format_info& f = *st_.f;
        if (!plain_row_[i] || !plain_col_[j]) return false;
        const int ra = st_.row_min_exponent[i], cb = st_.col_min_exponent[j];
        if (!(ra == INT_MAX || cb == INT_MAX || ra + cb >= f.emin)) return false;  // the key's min_product_exponent
        const int levels = st_.levels;
        const int top = st_.row_top[i] + st_.col_top[j];
        const int low = top - (levels + 1) * st_.w;
        int base = low, top_shift = (levels - 1) * st_.w;
        detail::entry_parts c;
        if (st_.has_c) c = detail::split_entry(f, st_.c[i * st_.n + j]);
        if (c.special) return false;
        const bool with_c = st_.has_c && c.significand != 0;
        if (with_c) {
            base = std::min(base, c.exponent);
            top_shift = std::max(low + top_shift, c.exponent) - base;
        }
        const int offset = low - base;
        if (exact_window::digits_for(window_top_shift(top_shift, offset, st_.s_words)) > exact_window::max_digits)
            return false;
        double far = 0;
        const std::size_t far_a = st_.far_a[i].size(), far_b = st_.far_b[j].size();
        if (far_a + far_b > 0 && !far_bound(top, far_a, far_b, far)) return false;
        const std::size_t element = j * st_.m + i;
        const std::uint64_t* s = st_.s_limbs.data() + element * static_cast<std::size_t>(st_.s_words);
        const std::int64_t* t = st_.t_enclosed ? nullptr : st_.t_levels.data() + element * levels;
        exact_window::leading vs, vt;
        if (top_shift > narrow_top_shift && top_shift <= exact_sum192::max_shift && st_.s_words <= 3) {
            exact_sum192 sum;  // binary64 terms: 5 levels of about 21 bits in 3 limbs (|S·2^offset| < 2^177)
            sum.add_limbs(s, st_.s_words, offset);
            if (with_c) sum.add_unsigned(c.significand, c.negative, c.exponent - base);
            vs = sum.settle(base);
        } else {
            sum_near(s, nullptr, offset, with_c ? &c : nullptr, base, top_shift,
                     top_shift <= narrow_top_shift && st_.s_words <= 2, [](exact_window&, exact_window&) {}, vs, vt);
        }
        enclose_binary64(vs, s_lo, s_hi);
        const double c_abs = with_c ? std::ldexp(static_cast<double>(c.significand), c.exponent) : 0.0;
        if (t != nullptr) {
            if (!enclose_levels(t, low, c_abs, w_lo, w_hi)) return false;
            if (far > 0) w_hi = detail::next_up(w_hi + far);  // T's far part in [0, F]: W_hi + F rounded up
        } else {
            // Step S6's enclosure of T (it holds the far products too), then |C0| as in enclose().
            double t_lo = 0, t_hi = 0;
            if (!detail::t_enclosure(st_, i, j, t_lo, t_hi)) return false;
            w_lo = with_c ? detail::next_down(t_lo + c_abs) : t_lo;
            w_hi = with_c ? detail::next_up(t_hi + c_abs) : t_hi;
        }
        if (far > 0) {  // s's far part in [-F, F]
            s_lo = signed_next_down(s_lo - far);
            s_hi = signed_next_up(s_hi + far);
        }
        return true;
    }

    // Step P4's T: W = Σ_t t_t·2^(low + (levels - 1 - t)·w) + |C0| (every term >= 0) in binary64, not exactly:
    // x_t = RN(t_t)·2^e_t (|t_t·2^e_t - x_t| <= u·x_t, u = 2^-53; the scaling is exact in the normal range the
    // check below keeps) and c_abs (exact) summed left to right, ŵ = RN of each partial sum. With X = Σ x_t + c_abs,
    // |W - X| <= u·X and |ŵ - X| <= γ_{n-1}·X (Higham §4.2, n <= 32 non-negative terms), so
    // W/ŵ lies in [(1 - u)/(1 + γ_31), (1 + u)/(1 - γ_31)], inside [1 - 2^-45, 1 + 2^-45] (33u(1 + 32u) < 2^-47);
    // each end is one RN, moved one step outward (next_down(RN(x)) <= x <= next_up(RN(x)) for x >= 0). False when a
    // level's scale would leave the normal range or the sum could reach 2^1023 (the exact window then runs). Every
    // product here and in far_bound is exact (a power-of-two scaling), so a contracted multiply-add rounds the same.
    // C0 near the largest double may make ŵ infinite: then W is unusable and the element takes facts().
    bool enclose_levels(const std::int64_t* t, int low, double c_abs, double& w_lo, double& w_hi) const noexcept {
        return enclose_levels_of(t, st_.levels, st_.w, low, c_abs, w_lo, w_hi);
    }

    // Step P4's far bound: each far product of row i's far entries is a_far·b with |a_far| < 2^(E_i - s_A·w) (the
    // bits below the last slice under E_i) and |b| < 2^F_j; each of column j's is a_near·b_far with |a_near| <= |a|
    // < 2^E_i and |b_far| < 2^(F_j - s_B·w). So |far part of s| <= F = far_a·2^(top - s_A·w) + far_b·2^(top - s_B·w)
    // (top = E_i + F_j), and T's far part, the sum of their magnitudes, lies in [0, F]. Both terms are exact doubles
    // (integers below 2^32 times normal powers of two); their sum rounded up is F. False when a power of two would
    // leave the normal range (the element then takes the exact window).
    bool far_bound(int top, std::size_t far_a, std::size_t far_b, double& far) const noexcept {
        return far_bound_of(top, st_.sa * st_.w, st_.sb * st_.w, far_a, far_b, far);
    }

    // Steps P1 and P2 for element (i, j) of a sliced product.
    void enclose(std::size_t i, std::size_t j, detail::element_facts& e, const format_info* rounded) const {
        const format_info& f = *st_.f;
        e.usable = false;
        if (!plain_row_[i] || !plain_col_[j]) return;
        const int levels = st_.levels;
        const int top = st_.row_top[i] + st_.col_top[j];
        const int low = top - (levels + 1) * st_.w;  // the exponent of the last level's unit
        int base = low, top_shift = (levels - 1) * st_.w;
        detail::entry_parts c;
        if (st_.has_c) {
            c = detail::split_entry(f, st_.c[i * st_.n + j]);
            if (c.special) return;
            if (c.significand != 0) {
                base = std::min(base, c.exponent);
                top_shift = std::max(low + top_shift, c.exponent) - base;
            }
        }
        // The far parts (element(i, j)'s Step S5): a_far·b over row i's far entries, a_near·b_far over column j's,
        // exact products below 2^106 (two significands of at most 53 bits).
        const std::size_t far_count = st_.far_a[i].size() + st_.far_b[j].size();
        if (far_count > max_far_terms) return;
        far_term far[max_far_terms];
        std::size_t terms = 0;
        if (far_count > 0) {
            const detail::bit_row a = st_.a.row(i, st_.k), b = st_.bt.row(j, st_.k);
            auto keep = [&](std::uint64_t x, int ex, std::uint64_t y, int ey, bool negative) {
                if (x == 0 || y == 0) return;
                far[terms++] = {static_cast<detail::uint128>(x) * y, ex + ey, negative};
                base = std::min(base, ex + ey);
            };
            for (const std::uint32_t l : st_.far_a[i]) {
                const detail::entry_parts x = detail::split_entry(f, a[l]), y = detail::split_entry(f, b[l]);
                keep(detail::far_significand(x, st_.row_top[i], st_.w, st_.sa), x.exponent, y.significand,
                     y.exponent, x.negative != y.negative);
            }
            for (const std::uint32_t l : st_.far_b[j]) {
                const detail::entry_parts x = detail::split_entry(f, a[l]), y = detail::split_entry(f, b[l]);
                keep(x.significand - detail::far_significand(x, st_.row_top[i], st_.w, st_.sa), x.exponent,
                     detail::far_significand(y, st_.col_top[j], st_.w, st_.sb), y.exponent, x.negative != y.negative);
            }
            // Shifts from the new base: the levels' and C0's top, and each far product as two 64-bit halves.
            int highest = low + (levels - 1) * st_.w;
            if (st_.has_c && c.significand != 0) highest = std::max(highest, c.exponent);
            for (std::size_t q = 0; q < terms; ++q) highest = std::max(highest, far[q].e + 64);
            top_shift = highest - base;
        }
        const std::size_t element = j * st_.m + i;
        const std::uint64_t* s = st_.s_limbs.data() + element * static_cast<std::size_t>(st_.s_words);
        const std::int64_t* t = st_.t_enclosed ? nullptr : st_.t_levels.data() + element * levels;
        // Step S6 (narrow terms): T enclosed from t_hat, |C0| added with outward rounding below.
        double t_lo = 0, t_hi = 0;
        if (st_.t_enclosed && !detail::t_enclosure(st_, i, j, t_lo, t_hi)) return;
        const int offset = low - base;
        const bool with_c = st_.has_c && c.significand != 0;
        exact_window::leading vs, vt;
        const bool narrow = terms == 0 && top_shift <= narrow_top_shift && st_.s_words <= 2;
        if (!narrow &&
            exact_window::digits_for(window_top_shift(top_shift, offset, st_.s_words)) > exact_window::max_digits)
            return;
        sum_near(s, t, offset, with_c ? &c : nullptr, base, top_shift, narrow,
                 [&](exact_window& ws, exact_window& wt) {
                     for (std::size_t q = 0; q < terms; ++q) {  // each far product as two 64-bit halves
                         const auto lo = static_cast<std::uint64_t>(far[q].m);
                         const auto hi = static_cast<std::uint64_t>(far[q].m >> 64);
                         const int shift = far[q].e - base;
                         ws.add_unsigned(lo, far[q].negative, shift);
                         ws.add_unsigned(hi, far[q].negative, shift + 64);
                         wt.add_unsigned(lo, false, shift);
                         wt.add_unsigned(hi, false, shift + 64);
                     }
                 },
                 vs, vt);
        if (rounded != nullptr) {
            if (vs.zero) return;  // the sign of an exact zero needs the signed-zero state: the reference decides
            e.rn_bits = detail::encode(*rounded, vs.negative, vs.m, vs.e, vs.sticky, rounding::to_nearest_even);
            e.rd_bits = detail::encode(*rounded, vs.negative, vs.m, vs.e, vs.sticky, rounding::downward);
            e.ru_bits = detail::encode(*rounded, vs.negative, vs.m, vs.e, vs.sticky, rounding::upward);
        } else {
            enclose_binary64(vs, e.s_lo, e.s_hi);
            if (t == nullptr) {
                // W = T + |C0(i, j)| (|C0| exact in binary64: p <= 24), one RN per end widened outward (Step F1).
                const double c_abs = with_c ? std::ldexp(static_cast<double>(c.significand), c.exponent) : 0.0;
                e.w_lo = with_c ? detail::next_down(t_lo + c_abs) : t_lo;
                e.w_hi = with_c ? detail::next_up(t_hi + c_abs) : t_hi;
            } else {
                enclose_binary64(vt, e.w_lo, e.w_hi);
            }
        }
        e.is_dot = true;
        e.has_initial = st_.has_c;
        e.term_format = f.id;
        e.count = st_.k + (st_.has_c ? 1 : 0);
        const int ra = st_.row_min_exponent[i], cb = st_.col_min_exponent[j];
        e.min_product_exponent = ra == INT_MAX || cb == INT_MAX || ra + cb >= f.emin
                                     ? f.emin
                                     : detail::element_min_product_exponent(st_, i, j);
        e.product_may_underflow = e.min_product_exponent < f.emin;
        e.usable = true;
    }

    // At most this many far products per element are summed here (each costs about a level); elements with more are
    // built as references.
    static constexpr std::size_t max_far_terms = 64;
    struct far_term {
        detail::uint128 m;  // |product| < 2^106
        int e;              // its exponent
        bool negative;
    };

    const product_reference& p_;
    const product_reference::state& st_;
    bool sliced_ = false;
    std::vector<std::uint8_t> plain_row_, plain_col_;
    std::vector<std::uint8_t> row_simple_;  // a plain row without far entries (enclose_run)
    std::vector<std::uint8_t> row_wide_;    // a plain row with fewer than 2^31 far entries (wide runs)
    std::vector<std::uint32_t> row_far_;    // its far entries
    int lanes_ = 0;                         // Step P6's lanes (detail::covers_block_lanes when made)
    bool kernel_lanes_ = false;             // the AVX-512 kernels run (lanes_ 8 on a CPU that has them)
};

}  // namespace

template <floating_format T>
array_verdict covers(std::span<const T> results, const product_reference& product, const standard& model) {
    const product_elements source(product);
    return detail::covers_elements<T>(results, source, model);
}

namespace detail {

void covers_flags(const format_info& format, std::span<const std::byte> results, const product_reference& product,
                  const standard& model, std::span<std::uint8_t> covered) {
    const product_elements source(product);
    covers_flags(format, results, source, model, covered);
}

void product_element_facts(const product_reference& product, std::span<element_facts> out,
                           const format_info* rounded) {
    const product_elements source(product);
    if (out.size() != source.size())
        throw std::invalid_argument("product_element_facts: " + std::to_string(out.size()) + " facts for " +
                                    std::to_string(source.size()) + " elements");
    std::vector<element_facts> facts(out.size());
    std::vector<std::size_t> index(out.size());
    const default_fp_environment environment;  // Step S6's enclosure rounds to nearest, as covers() holds it
    source.facts(0, facts, index, rounded);
    for (std::size_t k = 0; k < index.size(); ++k) out[index[k]] = facts[k];
}

void enclose_narrow_run(const narrow_run_input& in, std::size_t count, const narrow_run_output& out, int lanes) {
    enclose_narrow_run_at(lanes, in, count, out);
}
void enclose_wide_run(const wide_run_input& in, std::size_t count, const narrow_run_output& out, int lanes) {
    enclose_wide_run_at(lanes, in, count, out);
}

std::vector<element_enclosure> product_element_enclosures(const product_reference& product) {
    const product_elements source(product);
    const std::size_t size = source.size();
    std::vector<element_enclosure> out(size);
    element_facts key;
    if (!source.key(key) || size == 0) return out;
    std::vector<double> s_lo(size), s_hi(size), w_lo(size), w_hi(size);
    std::vector<std::uint8_t> usable(size);
    std::vector<std::size_t> index(size);
    const default_fp_environment environment;  // Step P4 rounds to nearest, as covers() holds it
    source.enclose(0, size, {s_lo.data(), s_hi.data(), w_lo.data(), w_hi.data(), usable.data(), index.data()});
    for (std::size_t k = 0; k < size; ++k) out[index[k]] = {usable[k] != 0, s_lo[k], s_hi[k], w_lo[k], w_hi[k]};
    return out;
}

}  // namespace detail

#define EXACTREF_INSTANTIATE_PRODUCT_COVERS(T) \
    template array_verdict covers<T>(std::span<const T>, const product_reference&, const standard&);
EXACTREF_INSTANTIATE_PRODUCT_COVERS(double)
EXACTREF_INSTANTIATE_PRODUCT_COVERS(float)
EXACTREF_INSTANTIATE_PRODUCT_COVERS(float16)
EXACTREF_INSTANTIATE_PRODUCT_COVERS(bfloat16)
#undef EXACTREF_INSTANTIATE_PRODUCT_COVERS

}  // namespace exactref

// The superaccumulator's scalar paths: one term, products, merge, carry pass, correct rounding, printing.
// Specification and invariants: docs/algorithms/superaccumulator.md (steps referred to as "Step n" below).
#include "exactref/accumulator.h"
#include "exactref/detail/decimal.h"
#include "exactref/detail/uint128.h"

#include <gmp.h>  // mpz for the exact decimal string only

#include <algorithm>
#include <bit>
#include <cassert>
#include <memory>

namespace exactref {

namespace detail {

std::string place_decimal_point(const std::string& digits, std::size_t fraction_digits, bool negative) {
    std::string out = digits;
    if (fraction_digits > 0) {
        const std::string padded =
            digits.size() <= fraction_digits ? std::string(fraction_digits - digits.size() + 1, '0') + digits : digits;
        std::string fraction = padded.substr(padded.size() - fraction_digits);
        while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
        out = padded.substr(0, padded.size() - fraction_digits);
        if (!fraction.empty()) out += "." + fraction;
    }
    return negative ? "-" + out : out;
}

std::uint64_t encode(const format_info& f, bool negative, std::uint64_t m, int e, bool sticky, rounding mode) noexcept {
    const int p = f.precision;
    const int frac_bits = p - 1;
    const std::uint64_t sign_bit = std::uint64_t{negative} << (f.storage_bits - 1);
    const std::uint64_t hidden = std::uint64_t{1} << frac_bits;
    const std::uint64_t max_field = f.special_exponent_field();
    if (m == 0 && !sticky) return sign_bit;

    // Step R1: the ulp exponent q of the result: p bits below the leading bit, but never below the subnormal lsb.
    int q;
    if (m == 0) {
        q = f.subnormal_lsb_exponent();  // only the sticky part: below every bit that m could hold
    } else {
        const int leading = e + 63 - std::countl_zero(m);  // value in [2^leading, 2^(leading+1))
        q = std::max(leading, f.emin) - p + 1;
    }
    // Step R2: M = floor(|x| / 2^q), the round bit just below, and the sticky bit for everything lower.
    std::uint64_t M = 0;
    bool round_bit = false;
    const int shift = q - e;  // bits of m below the result's lsb
    if (m == 0) {
        // only a sticky part, below half of the smallest subnormal: M = 0, round bit 0
    } else if (shift <= 0) {
        // m fits in the result exactly. A sticky part would lie in (0, 2^e) and its round bit would be unknown, so
        // callers pass sticky only with at least p + 1 significant bits in m (then shift > 0).
        assert(!sticky);
        M = m << (-shift);
    } else if (shift <= 64) {
        M = shift == 64 ? 0 : (m >> shift);
        round_bit = ((m >> (shift - 1)) & 1u) != 0;
        const std::uint64_t below = shift - 1 == 0 ? 0 : (m & ((std::uint64_t{1} << (shift - 1)) - 1));
        sticky = sticky || below != 0;
    } else {
        sticky = sticky || m != 0;  // everything is far below half an ulp
    }
    // Step R3: the rounding decision (IEEE 754-2019 §4.3.1 and §4.3.2).
    const bool inexact = round_bit || sticky;
    bool up = false;
    switch (mode) {
        case rounding::to_nearest_even: up = round_bit && (sticky || (M & 1u) != 0); break;
        case rounding::toward_zero: up = false; break;
        case rounding::upward: up = inexact && !negative; break;
        case rounding::downward: up = inexact && negative; break;
    }
    if (up) {
        ++M;
        if (M == (hidden << 1)) {  // carried into a new binade
            M = hidden;
            ++q;
        }
    }
    // Step R4: overflow (§7.4) and encoding.
    const int bias = f.emax;
    if (M >= hidden) {
        const int exponent = q + frac_bits;
        if (exponent > f.emax) {
            const bool to_inf = mode == rounding::to_nearest_even || (mode == rounding::upward && !negative) ||
                                (mode == rounding::downward && negative);
            if (to_inf) return sign_bit | (max_field << frac_bits);
            return sign_bit | ((max_field - 1) << frac_bits) | (hidden - 1);  // largest finite
        }
        return sign_bit | (static_cast<std::uint64_t>(exponent + bias) << frac_bits) | (M - hidden);
    }
    return sign_bit | M;  // subnormal or zero (q is the subnormal lsb here)
}

}  // namespace detail

namespace {
constexpr std::uint64_t low32 = 0xFFFF'FFFFu;

std::uint64_t quiet_nan_bits(const format_info& f) {
    const int frac_bits = f.precision - 1;
    return (std::uint64_t{f.special_exponent_field()} << frac_bits) | (std::uint64_t{1} << (frac_bits - 1));
}
std::uint64_t inf_bits(const format_info& f, bool negative) {
    return (std::uint64_t{negative} << (f.storage_bits - 1)) |
           (std::uint64_t{f.special_exponent_field()} << (f.precision - 1));
}

// Magnitude of a canonical chunk array as 32-bit words, and its sign.
struct magnitude_words {
    bool negative = false;
    std::array<std::uint32_t, superaccumulator::chunk_count> words{};
};

magnitude_words magnitude_of(const std::array<std::int64_t, superaccumulator::chunk_count>& c) {
    magnitude_words out;
    out.negative = c.back() < 0;
    if (!out.negative) {
        for (std::size_t k = 0; k < c.size(); ++k) out.words[k] = static_cast<std::uint32_t>(c[k]);
        return out;
    }
    // Two's complement negation across the words: -V = ~V + 1.
    std::uint64_t carry = 1;
    for (std::size_t k = 0; k < c.size(); ++k) {
        const std::uint64_t w = (~static_cast<std::uint64_t>(c[k]) & low32) + carry;
        out.words[k] = static_cast<std::uint32_t>(w);
        carry = w >> 32;
    }
    return out;
}
}  // namespace

void superaccumulator::add_at(std::uint64_t m, int pos, bool negative) noexcept {
    assert(pos >= 0);
    const int k = pos >> 5;
    const int sh = pos & 31;
    const detail::uint128 t = static_cast<detail::uint128>(m) << sh;
    const auto d0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(t) & low32);
    const auto d1 = static_cast<std::int64_t>(static_cast<std::uint64_t>(t >> 32) & low32);
    const auto d2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(t >> 64));
    // Parts above the top chunk are zero for every value inside the covered range (the header's static_asserts).
    assert(k + 1 < chunk_count || d1 == 0);
    assert(k + 2 < chunk_count || d2 == 0);
    const std::int64_t sign = negative ? -1 : 1;
    enclosure_cached_ = false;
    chunks_[k] += sign * d0;
    if (d1 != 0) chunks_[k + 1] += sign * d1;
    if (d2 != 0) chunks_[k + 2] += sign * d2;
    count_pending(1);
}

void superaccumulator::add_scaled(bool negative, std::uint64_t m, int e) noexcept {
    if (m == 0) return;
    add_at(m, e - lsb_exponent, negative);
}

void superaccumulator::add_lane_sum(std::int64_t value, int exponent) noexcept {
    if (value == 0) return;
    const bool negative = value < 0;
    const std::uint64_t m = negative ? (~static_cast<std::uint64_t>(value) + 1) : static_cast<std::uint64_t>(value);
    add_at(m, exponent - lsb_exponent, negative);
}

void superaccumulator::note_special(bool is_nan, bool negative) noexcept {
    ++terms_;
    non_negative_zero_seen_ = true;
    non_positive_zero_seen_ = true;
    if (is_nan) nan_seen_ = true;
    else if (negative) ++neg_inf_;
    else ++pos_inf_;
}

void superaccumulator::add_bits(const format_info& f, std::uint64_t bits) noexcept {
    const decoded d = decode_bits(f, bits);
    if (d.is_nan || d.is_inf) {
        note_special(d.is_nan, d.negative);
        return;
    }
    ++terms_;
    if (d.significand == 0) {
        (d.negative ? non_positive_zero_seen_ : non_negative_zero_seen_) = true;
        return;
    }
    non_negative_zero_seen_ = true;
    non_positive_zero_seen_ = true;
    add_at(d.significand, d.exponent - lsb_exponent, d.negative);
}

void superaccumulator::add_product_bits(const format_info& f, std::uint64_t x_bits, std::uint64_t y_bits) noexcept {
    const decoded x = decode_bits(f, x_bits);
    const decoded y = decode_bits(f, y_bits);
    const bool negative = x.negative != y.negative;
    if (x.is_nan || y.is_nan || (x.is_inf && y.significand == 0 && !y.is_inf) ||
        (y.is_inf && x.significand == 0 && !x.is_inf)) {
        note_special(true, negative);
        return;
    }
    if (x.is_inf || y.is_inf) {
        note_special(false, negative);
        return;
    }
    ++terms_;
    if (x.significand == 0 || y.significand == 0) {
        (negative ? non_positive_zero_seen_ : non_negative_zero_seen_) = true;
        return;
    }
    non_negative_zero_seen_ = true;
    non_positive_zero_seen_ = true;
    const detail::uint128 m = static_cast<detail::uint128>(x.significand) * y.significand;
    const int pos = x.exponent + y.exponent - lsb_exponent;
    add_at(static_cast<std::uint64_t>(m), pos, negative);
    const auto high = static_cast<std::uint64_t>(m >> 64);
    if (high != 0) add_at(high, pos + 64, negative);
}

void superaccumulator::normalize() noexcept {
    // Step N1: carry pass, floor division by 2^32 keeps every chunk but the top in [0, 2^32).
    for (int k = 0; k + 1 < chunk_count; ++k) {
        const std::int64_t carry = chunks_[k] >> 32;  // arithmetic shift: floor(chunk / 2^32)
        chunks_[k] -= carry * (std::int64_t{1} << 32);
        chunks_[k + 1] += carry;
    }
    pending_ = 0;
}

void superaccumulator::merge(const superaccumulator& other) noexcept {
    normalize();
    superaccumulator o = other;
    o.normalize();
    for (int k = 0; k < chunk_count; ++k) chunks_[k] += o.chunks_[k];
    enclosure_cached_ = false;
    count_pending(2);
    terms_ += o.terms_;
    pos_inf_ += o.pos_inf_;
    neg_inf_ += o.neg_inf_;
    nan_seen_ |= o.nan_seen_;
    non_negative_zero_seen_ |= o.non_negative_zero_seen_;
    non_positive_zero_seen_ |= o.non_positive_zero_seen_;
}

void superaccumulator::negate() noexcept {
    for (auto& c : chunks_) c = -c;
    const double lo = enclosure_lo_;
    enclosure_lo_ = -enclosure_hi_;  // the enclosure of -v: exact negations, still valid when it was
    enclosure_hi_ = -lo;
    std::swap(pos_inf_, neg_inf_);
    std::swap(non_negative_zero_seen_, non_positive_zero_seen_);
}

int superaccumulator::sign() const noexcept {
    superaccumulator c = *this;
    c.normalize();
    if (c.chunks_.back() < 0) return -1;
    for (auto x : c.chunks_)
        if (x != 0) return 1;
    return 0;
}

namespace {
// The finite part of a canonical chunk array as its 64 leading bits m at exponent e and a sticky bit for every bit
// below them (Step R0 of round_bits); zero when the value is 0.
struct leading_bits {
    bool zero = true;
    bool negative = false;
    std::uint64_t m = 0;
    int e = 0;
    bool sticky = false;
};
leading_bits leading_bits_of(const std::array<std::int64_t, superaccumulator::chunk_count>& chunks) {
    const magnitude_words mag = magnitude_of(chunks);
    leading_bits out;
    out.negative = mag.negative;
    int top = superaccumulator::chunk_count - 1;
    while (top >= 0 && mag.words[top] == 0) --top;
    if (top < 0) return out;
    out.zero = false;
    const int leading_bit = top * 32 + 31 - std::countl_zero(mag.words[top]);  // bit index from lsb_exponent
    const int low_bit = std::max(0, leading_bit - 63);
    std::uint64_t m = 0;
    for (int b = leading_bit; b >= low_bit;) {
        // gather whole words where possible
        const int w = b >> 5;
        const int lo_in_word = std::max(low_bit, w * 32) - w * 32;
        const int hi_in_word = b - w * 32;
        const int width = hi_in_word - lo_in_word + 1;
        const std::uint64_t part = (std::uint64_t{mag.words[w]} >> lo_in_word) & ((std::uint64_t{1} << width) - 1);
        m = (width == 64 ? 0 : (m << width)) | part;
        b -= width;
    }
    bool sticky = false;
    for (int w = 0; w * 32 < low_bit && !sticky; ++w) {
        const int bits_here = std::min(32, low_bit - w * 32);
        const std::uint64_t mask = bits_here == 32 ? low32 : ((std::uint64_t{1} << bits_here) - 1);
        sticky = (mag.words[w] & mask) != 0;
    }
    out.m = m;
    out.e = superaccumulator::lsb_exponent + low_bit;
    out.sticky = sticky;
    return out;
}
}  // namespace

std::uint64_t superaccumulator::round_bits(const format_info& f, rounding mode) const noexcept {
    // Special values first (file comment of accumulator.h).
    if (nan_seen_ || (pos_inf_ > 0 && neg_inf_ > 0)) return quiet_nan_bits(f);
    if (pos_inf_ > 0) return inf_bits(f, false);
    if (neg_inf_ > 0) return inf_bits(f, true);

    superaccumulator c = *this;
    c.normalize();
    const leading_bits l = leading_bits_of(c.chunks_);
    if (l.zero) {
        // Exact zero: IEEE 754-2019 §6.3.
        // The empty sum is +0.0 in every mode (accumulator.h); under RD any other exact zero is -0.0 unless every
        // term was +0.0.
        const bool negative_zero =
            mode == rounding::downward ? (terms_ > 0 && !all_positive_zero()) : all_negative_zero();
        return std::uint64_t{negative_zero} << (f.storage_bits - 1);
    }
    return detail::encode(f, l.negative, l.m, l.e, l.sticky, mode);
}

superaccumulator::binary64_enclosure superaccumulator::compute_enclosure() const noexcept {
    superaccumulator c = *this;
    c.normalize();
    const leading_bits l = leading_bits_of(c.chunks_);
    if (l.zero) return {0.0, 0.0};
    // encode() works on integers only: the bounds do not depend on the rounding mode or FTZ/DAZ.
    const auto lo = detail::encode(binary64_info, l.negative, l.m, l.e, l.sticky, rounding::downward);
    const auto hi = detail::encode(binary64_info, l.negative, l.m, l.e, l.sticky, rounding::upward);
    return {std::bit_cast<double>(lo), std::bit_cast<double>(hi)};
}

dyadic superaccumulator::to_dyadic() const {
    superaccumulator c = *this;
    c.normalize();
    const magnitude_words mag = magnitude_of(c.chunks_);
    dyadic out;
    int top = chunk_count - 1;
    while (top >= 0 && mag.words[top] == 0) --top;
    if (top < 0) return out;
    int bottom = 0;
    while (mag.words[bottom] == 0) ++bottom;
    out.negative = mag.negative;
    out.magnitude.assign(mag.words.begin() + bottom, mag.words.begin() + top + 1);
    out.exponent = lsb_exponent + 32 * bottom;
    return out;
}

std::string superaccumulator::to_decimal() const {
    if (nan_seen_ || (pos_inf_ > 0 && neg_inf_ > 0)) return "nan";
    if (pos_inf_ > 0) return "inf";
    if (neg_inf_ > 0) return "-inf";
    const dyadic d = to_dyadic();
    if (d.is_zero()) return all_negative_zero() ? "-0" : "0";

    mpz_t n;
    mpz_init(n);
    mpz_import(n, d.magnitude.size(), -1, sizeof(std::uint32_t), 0, 0, d.magnitude.data());
    std::string digits;
    int fraction_digits = 0;
    if (d.exponent >= 0) {
        mpz_mul_2exp(n, n, static_cast<mp_bitcnt_t>(d.exponent));
    } else {
        // m * 2^-k = m * 5^k / 10^k: an exact decimal with k fraction digits.
        fraction_digits = -d.exponent;
        mpz_t five;
        mpz_init(five);
        mpz_ui_pow_ui(five, 5, static_cast<unsigned long>(fraction_digits));
        mpz_mul(n, n, five);
        mpz_clear(five);
    }
    std::unique_ptr<char[]> buf(new char[mpz_sizeinbase(n, 10) + 2]);
    mpz_get_str(buf.get(), 10, n);
    mpz_clear(n);
    digits = buf.get();
    return detail::place_decimal_point(digits, static_cast<std::size_t>(fraction_digits), d.negative);
}

}  // namespace exactref

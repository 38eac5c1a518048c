// The oracle's own decode, the special-value state of a list of terms, and the exact-term lists the three exact sums
// start from. Independent of format.h's decode_bits: the encoding is read again from the field widths.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "oracle.h"

namespace exactref::oracle {
namespace {

std::uint64_t low_mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

// IEEE 754-2019 §3.4: bias = 2^(w-1) - 1 for an exponent field of w bits.
int bias_of(const format_info& f) { return (1 << (f.exponent_bits - 1)) - 1; }

// Accumulates the special state term by term; the finite terms go to `finite` with run-length folding.
class term_builder {
public:
    void special_term(bool nan, bool negative) {
        ++out_.special.count;
        not_negative_zero_ = not_positive_zero_ = true;
        if (nan) out_.special.nan = true;
        else if (negative) ++out_.special.neg_inf;
        else ++out_.special.pos_inf;
    }
    void zero_term(bool negative) {
        ++out_.special.count;
        (negative ? not_positive_zero_ : not_negative_zero_) = true;
    }
    void finite_term(bool negative, std::uint64_t high, std::uint64_t low, int exponent) {
        ++out_.special.count;
        not_negative_zero_ = not_positive_zero_ = true;
        if (!out_.finite.empty()) {
            exact_term& last = out_.finite.back();
            if (last.negative == negative && last.high == high && last.low == low && last.exponent == exponent &&
                last.count != ~std::uint64_t{0}) {
                ++last.count;
                return;
            }
        }
        out_.finite.push_back(exact_term{negative, high, low, exponent, 1});
    }
    term_list finish() {
        out_.special.all_negative_zero = out_.special.count > 0 && !not_negative_zero_;
        out_.special.all_positive_zero = out_.special.count > 0 && !not_positive_zero_;
        return std::move(out_);
    }

private:
    term_list out_;
    bool not_negative_zero_ = false;  // some term is not -0.0
    bool not_positive_zero_ = false;  // some term is not +0.0
};

}  // namespace

parts decode(const format_info& f, std::uint64_t bits) {
    const int frac_bits = f.storage_bits - 1 - f.exponent_bits;
    bits &= low_mask(f.storage_bits);
    const std::uint64_t fraction = bits & low_mask(frac_bits);
    const std::uint64_t field = (bits >> frac_bits) & low_mask(f.exponent_bits);
    parts p;
    p.negative = (bits >> (f.storage_bits - 1)) != 0;
    if (field == low_mask(f.exponent_bits)) {
        p.nan = fraction != 0;
        p.inf = fraction == 0;
        return p;
    }
    const int bias = bias_of(f);
    if (field == 0) {  // zero or subnormal: 0.fraction * 2^(1 - bias)
        p.significand = fraction;
        p.exponent = 1 - bias - frac_bits;
    } else {           // normal: 1.fraction * 2^(field - bias)
        p.significand = fraction | (std::uint64_t{1} << frac_bits);
        p.exponent = static_cast<int>(field) - bias - frac_bits;
    }
    return p;
}

std::uint64_t zero_bits(const format_info& f, bool negative) {
    return std::uint64_t{negative} << (f.storage_bits - 1);
}
std::uint64_t inf_bits(const format_info& f, bool negative) {
    const int frac_bits = f.storage_bits - 1 - f.exponent_bits;
    return zero_bits(f, negative) | (low_mask(f.exponent_bits) << frac_bits);
}
std::uint64_t max_bits(const format_info& f, bool negative) {
    const int frac_bits = f.storage_bits - 1 - f.exponent_bits;
    return zero_bits(f, negative) | ((low_mask(f.exponent_bits) - 1) << frac_bits) | low_mask(frac_bits);
}
std::uint64_t nan_bits(const format_info& f) {
    const int frac_bits = f.storage_bits - 1 - f.exponent_bits;
    return inf_bits(f, false) | (std::uint64_t{1} << (frac_bits - 1));
}
bool is_nan_bits(const format_info& f, std::uint64_t bits) { return decode(f, bits).nan; }

std::optional<std::uint64_t> special_state::decided_bits(const format_info& to) const {
    if (nan || (pos_inf > 0 && neg_inf > 0)) return nan_bits(to);
    if (pos_inf > 0) return inf_bits(to, false);
    if (neg_inf > 0) return inf_bits(to, true);
    return std::nullopt;
}

std::optional<std::string> special_state::decided_decimal() const {
    if (nan || (pos_inf > 0 && neg_inf > 0)) return std::string("nan");
    if (pos_inf > 0) return std::string("inf");
    if (neg_inf > 0) return std::string("-inf");
    return std::nullopt;
}

std::uint64_t special_state::exact_zero_bits(const format_info& to, rounding mode) const {
    if (count == 0) return zero_bits(to, false);  // the empty sum
    const bool negative = mode == rounding::downward ? !all_positive_zero : all_negative_zero;
    return zero_bits(to, negative);
}

term_list sum_terms(std::span<const std::uint64_t> bits, const format_info& f) {
    term_builder b;
    for (std::uint64_t x : bits) {
        const parts p = decode(f, x);
        if (p.nan || p.inf) b.special_term(p.nan, p.negative);
        else if (p.significand == 0) b.zero_term(p.negative);
        else b.finite_term(p.negative, 0, p.significand, p.exponent);
    }
    return b.finish();
}

term_list dot_terms(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f) {
    if (x.size() != y.size())
        throw std::invalid_argument("oracle dot: x has " + std::to_string(x.size()) + " elements and y " +
                                    std::to_string(y.size()) + "; pass two spans of the same length");
    term_builder b;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const parts a = decode(f, x[i]);
        const parts c = decode(f, y[i]);
        const bool negative = a.negative != c.negative;
        const bool a_zero = !a.nan && !a.inf && a.significand == 0;
        const bool c_zero = !c.nan && !c.inf && c.significand == 0;
        if (a.nan || c.nan || (a.inf && c_zero) || (c.inf && a_zero)) b.special_term(true, false);  // IEEE §7.2
        else if (a.inf || c.inf) b.special_term(false, negative);
        else if (a_zero || c_zero) b.zero_term(negative);
        else {
            // The exact product of two significands < 2^53: split each at 32 bits and add the partial products.
            const std::uint64_t a_lo = a.significand & 0xFFFF'FFFFu, a_hi = a.significand >> 32;
            const std::uint64_t c_lo = c.significand & 0xFFFF'FFFFu, c_hi = c.significand >> 32;
            const std::uint64_t ll = a_lo * c_lo, lh = a_lo * c_hi, hl = a_hi * c_lo, hh = a_hi * c_hi;
            const std::uint64_t mid = (ll >> 32) + (lh & 0xFFFF'FFFFu) + (hl & 0xFFFF'FFFFu);
            const std::uint64_t low = (ll & 0xFFFF'FFFFu) | (mid << 32);
            const std::uint64_t high = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
            b.finite_term(negative, high, low, a.exponent + c.exponent);
        }
    }
    return b.finish();
}

std::optional<std::uint64_t> scale_exact(std::uint64_t bits, const format_info& f, int k) {
    const parts p = decode(f, bits);
    if (p.nan || p.inf || p.significand == 0) return bits & low_mask(f.storage_bits);
    const int frac_bits = f.storage_bits - 1 - f.exponent_bits;
    const int bias = bias_of(f);
    const int length = 64 - std::countl_zero(p.significand);
    const long lead = static_cast<long>(p.exponent) + k + length - 1;         // value in [2^lead, 2^(lead+1))
    const long lowest = static_cast<long>(p.exponent) + k + std::countr_zero(p.significand);
    const long subnormal_lsb = 1 - bias - frac_bits;
    if (lead > bias || lowest < subnormal_lsb) return std::nullopt;
    std::uint64_t out = zero_bits(f, p.negative);
    if (lead >= 1 - bias) {  // normal: p significant bits with the leading one hidden
        const std::uint64_t m = p.significand << (frac_bits + 1 - length);
        out |= (static_cast<std::uint64_t>(lead + bias) << frac_bits) | (m & low_mask(frac_bits));
    } else {                 // subnormal: multiples of 2^subnormal_lsb
        const long shift = static_cast<long>(p.exponent) + k - subnormal_lsb;
        out |= shift >= 0 ? (p.significand << shift) : (p.significand >> -shift);
    }
    return out;
}

}  // namespace exactref::oracle

// The Boost.Multiprecision oracle (cpp_int, cpp_rational; no GMP backend): exact sums in one scaled integer, a
// correct rounding of any rational to any of the four formats in any mode, and a decimal printer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "oracle.h"

namespace exactref::oracle {
namespace {

using boost::multiprecision::denominator;
using boost::multiprecision::lsb;
using boost::multiprecision::msb;
using boost::multiprecision::numerator;

boost_integer magnitude_of(const exact_term& t) {
    boost_integer m = t.high;
    m <<= 64;
    m |= t.low;
    if (t.count != 1) m *= t.count;
    return m;
}

boost_rational times_power_of_two(const boost_integer& z, long e) {
    if (e >= 0) return boost_rational(boost_integer(z << static_cast<unsigned>(e)));
    return boost_rational(z, boost_integer(1) << static_cast<unsigned>(-e));
}

// Σ ±count·magnitude·2^exponent = Z · 2^lowest with every term shifted onto the lowest exponent: one integer.
boost_exact sum_exact(const term_list& terms) {
    boost_exact out;
    out.special = terms.special;
    if (terms.finite.empty()) return out;
    long lowest = terms.finite.front().exponent;
    for (const exact_term& t : terms.finite) lowest = std::min<long>(lowest, t.exponent);
    boost_integer m;
    for (const exact_term& t : terms.finite) {
        m = magnitude_of(t);
        m <<= static_cast<unsigned>(t.exponent - lowest);
        if (t.negative) out.scaled -= m;
        else out.scaled += m;
    }
    out.exponent = lowest;
    return out;
}

bool rounds_up(rounding mode, bool negative, bool odd, int remainder_vs_half, bool inexact) {
    switch (mode) {
        case rounding::to_nearest_even: return remainder_vs_half > 0 || (remainder_vs_half == 0 && odd);
        case rounding::toward_zero: return false;
        case rounding::upward: return inexact && !negative;
        case rounding::downward: return inexact && negative;
    }
    return false;
}

// Step 5 of the rounding below: carry into the next binade, overflow, encoding. M < 2^p + 1, q the quantum exponent.
std::uint64_t encode(boost_integer M, long q, bool negative, const format_info& to, rounding mode) {
    const int p = to.precision;
    const boost_integer hidden = boost_integer(1) << (p - 1);
    if (M == (hidden << 1)) {
        M = hidden;
        ++q;
    }
    const std::uint64_t sign = zero_bits(to, negative);
    if (M >= hidden) {
        const long lead = q + p - 1;
        if (lead > to.emax) {
            const bool to_inf = mode == rounding::to_nearest_even || (mode == rounding::upward && !negative) ||
                                (mode == rounding::downward && negative);
            return to_inf ? inf_bits(to, negative) : max_bits(to, negative);
        }
        const auto fraction = static_cast<std::uint64_t>(M - hidden);
        return sign | (static_cast<std::uint64_t>(lead + to.emax) << (p - 1)) | fraction;
    }
    return sign | static_cast<std::uint64_t>(M);  // subnormal, or zero keeping the sign of x
}

// The digits of n * 10^k / (2^twos * 5^fives) with k = max(twos, fives), the point put k digits from the right.
std::string place_point(const boost_integer& n, bool negative, unsigned twos, unsigned fives) {
    const unsigned k = std::max(twos, fives);
    const boost_integer scaled = n * boost::multiprecision::pow(boost_integer(2), k - twos) *
                                 boost::multiprecision::pow(boost_integer(5), k - fives);
    std::string digits = scaled.str();
    if (digits.size() <= k) digits.insert(0, k + 1 - digits.size(), '0');
    std::string out = negative ? "-" : "";
    out += digits.substr(0, digits.size() - k);
    std::string fraction = digits.substr(digits.size() - k);
    fraction.erase(fraction.find_last_not_of('0') + 1);
    if (!fraction.empty()) out += "." + fraction;
    return out;
}

}  // namespace

boost_rational boost_value(std::uint64_t bits, const format_info& f) {
    const parts p = decode(f, bits);
    if (p.nan || p.inf) throw std::invalid_argument("oracle boost_value: NaN and Inf have no finite value");
    boost_integer m = p.significand;
    if (p.negative) m = -m;
    return times_power_of_two(m, p.exponent);
}

// Dyadic x = ±n·2^e: Step 1: lead = floor(log2 |x|) = msb(n) + e. Step 2: the quantum q = max(lead, emin) - p + 1
// (gradual underflow). Step 3: M = n >> (q - e); the bits shifted out decide (round bit and sticky). Step 4: the mode
// decides. Step 5: carry, overflow (IEEE 754-2019 §7.4), encoding.
std::uint64_t boost_round_bits(const boost_integer& scaled, long exponent, const format_info& to, rounding mode) {
    if (scaled == 0) return zero_bits(to, false);
    const bool negative = scaled < 0;
    const boost_integer n = negative ? boost_integer(-scaled) : scaled;
    const int p = to.precision;
    const long lead = static_cast<long>(msb(n)) + exponent;                  // Step 1
    const long q = std::max<long>(lead, to.emin) - p + 1;                    // Step 2
    const long shift = q - exponent;                                          // Step 3
    if (shift <= 0) return encode(n << static_cast<unsigned>(-shift), q, negative, to, mode);
    const boost_integer M = n >> static_cast<unsigned>(shift);
    const bool round_bit = boost::multiprecision::bit_test(n, static_cast<unsigned>(shift - 1));
    const bool sticky = static_cast<long>(lsb(n)) < shift - 1;
    const int vs_half = round_bit ? (sticky ? 1 : 0) : -1;
    const bool up = rounds_up(mode, negative, bit_test(M, 0), vs_half, round_bit || sticky);  // Step 4
    return encode(up ? boost_integer(M + 1) : M, q, negative, to, mode);                       // Step 5
}

// Any rational x = ±n/d: Step 1: e = floor(log2 |x|) from the bit lengths, corrected by one comparison. Step 2: the
// quantum q = max(e, emin) - p + 1. Step 3: |x| / 2^q = M + r/den with 0 <= r < den. Steps 4 and 5 as above.
std::uint64_t boost_round_bits(const boost_rational& x, const format_info& to, rounding mode) {
    if (x == 0) return zero_bits(to, false);
    boost_integer n = numerator(x);
    const boost_integer d = denominator(x);  // > 0, coprime with n
    if ((d & (d - 1)) == 0) return boost_round_bits(n, -static_cast<long>(msb(d)), to, mode);
    const bool negative = n < 0;
    if (negative) n = -n;
    const int p = to.precision;
    long e = static_cast<long>(msb(n)) - static_cast<long>(msb(d));  // Step 1
    const bool at_least = e >= 0 ? n >= (d << static_cast<unsigned>(e)) : (n << static_cast<unsigned>(-e)) >= d;
    if (!at_least) --e;
    const long q = std::max<long>(e, to.emin) - p + 1;  // Step 2
    boost_integer num = n, den = d;                      // Step 3
    if (q >= 0) den <<= static_cast<unsigned>(q);
    else num <<= static_cast<unsigned>(-q);
    boost_integer M, r;
    boost::multiprecision::divide_qr(num, den, M, r);
    const boost_integer twice = r * 2;  // Step 4
    const int vs_half = twice > den ? 1 : (twice == den ? 0 : -1);
    const bool up = rounds_up(mode, negative, bit_test(M, 0), vs_half, r != 0);
    return encode(up ? boost_integer(M + 1) : M, q, negative, to, mode);  // Step 5
}

std::string boost_decimal(const boost_rational& x) {
    boost_integer n = numerator(x);
    boost_integer d = denominator(x);
    const bool negative = n < 0;
    if (negative) n = -n;
    unsigned twos = 0, fives = 0;
    while ((d & 1) == 0) {
        d >>= 1;
        ++twos;
    }
    while (d % 5 == 0) {
        d /= 5;
        ++fives;
    }
    if (d != 1)
        throw std::invalid_argument("oracle boost_decimal: " + x.str() +
                                    " has no finite decimal expansion (denominator not 2^a * 5^b)");
    return place_point(n, negative, twos, fives);
}

std::string boost_decimal(const boost_integer& scaled, long exponent) {
    const bool negative = scaled < 0;
    boost_integer n = negative ? boost_integer(-scaled) : scaled;
    if (n == 0) return "0";
    if (exponent >= 0) return place_point(n << static_cast<unsigned>(exponent), negative, 0, 0);
    return place_point(n, negative, static_cast<unsigned>(-exponent), 0);
}

boost_rational boost_exact::value() const { return times_power_of_two(scaled, exponent); }

std::uint64_t boost_exact::round_bits(const format_info& to, rounding mode) const {
    if (auto decided = special.decided_bits(to)) return *decided;
    if (scaled == 0) return special.exact_zero_bits(to, mode);
    return boost_round_bits(scaled, exponent, to, mode);
}

std::string boost_exact::decimal() const {
    if (auto decided = special.decided_decimal()) return *decided;
    if (scaled == 0) return special.exact_zero_decimal();
    return boost_decimal(scaled, exponent);
}

boost_exact boost_sum(std::span<const std::uint64_t> bits, const format_info& f) {
    return sum_exact(sum_terms(bits, f));
}

boost_exact boost_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f) {
    return sum_exact(dot_terms(x, y, f));
}

}  // namespace exactref::oracle

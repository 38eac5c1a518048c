// The GMP oracle: exact sums as rationals (mpq_class) built with GMP integers, and an exact decimal printer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "oracle.h"

namespace exactref::oracle {
namespace {

mpz_class magnitude_of(const exact_term& t) {
    mpz_class m(static_cast<unsigned long>(t.high));
    m <<= 64;
    m += static_cast<unsigned long>(t.low);
    if (t.count != 1) m *= static_cast<unsigned long>(t.count);
    return m;
}

// z * 2^e as a canonical rational.
mpq_class times_power_of_two(const mpz_class& z, long e) {
    mpq_class q(z);
    if (e >= 0) q <<= static_cast<mp_bitcnt_t>(e);   // mpq_mul_2exp: canonical
    else q >>= static_cast<mp_bitcnt_t>(-e);         // mpq_div_2exp: canonical
    return q;
}

// Σ ±count·magnitude·2^exponent = Z·2^lowest: every term shifted onto the lowest exponent and added into one mpz
// (one canonicalization at the end instead of a gcd per term).
gmp_exact sum_exact(const term_list& terms) {
    gmp_exact out;
    out.special = terms.special;
    if (terms.finite.empty()) return out;
    long lowest = terms.finite.front().exponent;
    for (const exact_term& t : terms.finite) lowest = std::min<long>(lowest, t.exponent);
    mpz_class z = 0, m;
    for (const exact_term& t : terms.finite) {
        if (t.high == 0 && t.count == 1) mpz_set_ui(m.get_mpz_t(), t.low);
        else m = magnitude_of(t);
        mpz_mul_2exp(m.get_mpz_t(), m.get_mpz_t(), static_cast<mp_bitcnt_t>(t.exponent - lowest));
        if (t.negative) mpz_sub(z.get_mpz_t(), z.get_mpz_t(), m.get_mpz_t());
        else mpz_add(z.get_mpz_t(), z.get_mpz_t(), m.get_mpz_t());
    }
    out.value = times_power_of_two(z, lowest);
    return out;
}

}  // namespace

mpq_class gmp_value(std::uint64_t bits, const format_info& f) {
    const parts p = decode(f, bits);
    if (p.nan || p.inf) throw std::invalid_argument("oracle gmp_value: NaN and Inf have no finite value");
    const mpz_class m(static_cast<unsigned long>(p.significand));
    return times_power_of_two(p.negative ? mpz_class(-m) : m, p.exponent);
}

// The integer part by division, the fraction as r * 10^k / den with k = max(a, b) for den = 2^a * 5^b.
std::string gmp_decimal(const mpq_class& q) {
    mpz_class den = q.get_den();
    const mp_bitcnt_t twos = mpz_scan1(den.get_mpz_t(), 0);
    mpz_class rest = den >> twos;
    mpz_class five(5);
    const mp_bitcnt_t fives = mpz_remove(rest.get_mpz_t(), rest.get_mpz_t(), five.get_mpz_t());
    if (rest != 1)
        throw std::invalid_argument("oracle gmp_decimal: " + q.get_str() +
                                    " has no finite decimal expansion (denominator not 2^a * 5^b)");
    const mp_bitcnt_t k = std::max(twos, fives);
    mpz_class num = abs(q.get_num());
    mpz_class whole, r;
    mpz_tdiv_qr(whole.get_mpz_t(), r.get_mpz_t(), num.get_mpz_t(), den.get_mpz_t());
    std::string out;
    if (q < 0) out += '-';
    out += whole.get_str();
    if (r != 0) {
        mpz_class ten_k;
        mpz_ui_pow_ui(ten_k.get_mpz_t(), 10, k);
        const mpz_class fraction = r * ten_k / den;  // exact: den divides 10^k
        std::string digits = fraction.get_str();
        digits.insert(0, k - digits.size(), '0');
        digits.erase(digits.find_last_not_of('0') + 1);
        out += "." + digits;
    }
    return out;
}

std::string describe(std::uint64_t bits, const format_info& f) {
    const parts p = decode(f, bits);
    std::string value;
    if (p.nan) value = "nan";
    else if (p.inf) value = p.negative ? "-inf" : "inf";
    else if (p.significand == 0) value = p.negative ? "-0" : "0";
    else value = gmp_decimal(gmp_value(bits, f));
    const mpz_class b(static_cast<unsigned long>(bits));
    return "0x" + b.get_str(16) + " (" + std::string(f.name) + " " + value + ")";
}

std::string gmp_exact::decimal() const {
    if (auto decided = special.decided_decimal()) return *decided;
    if (value == 0) return special.exact_zero_decimal();
    return gmp_decimal(value);
}

gmp_exact gmp_sum(std::span<const std::uint64_t> bits, const format_info& f) { return sum_exact(sum_terms(bits, f)); }

gmp_exact gmp_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f) {
    return sum_exact(dot_terms(x, y, f));
}

}  // namespace exactref::oracle

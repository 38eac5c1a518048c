// The MPFR oracle: exact sums with mpfr_sum, and rounding to a format by MPFR's own emulation of IEEE formats
// (precision p, exponent range, mpfr_check_range, mpfr_subnormalize; MPFR manual §5.4 "Exception Related Functions").
#include <gmp.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

#include "oracle.h"

namespace exactref::oracle {

mpfr_number::mpfr_number(mpfr_prec_t precision) { mpfr_init2(value_, precision); }
mpfr_number::mpfr_number(const mpfr_number& other) {
    mpfr_init2(value_, mpfr_get_prec(other.value_));
    mpfr_set(value_, other.value_, MPFR_RNDN);  // same precision: exact
}
mpfr_number::mpfr_number(mpfr_number&& other) noexcept {
    mpfr_init2(value_, MPFR_PREC_MIN);
    mpfr_swap(value_, other.value_);
}
mpfr_number& mpfr_number::operator=(mpfr_number other) noexcept {
    mpfr_swap(value_, other.value_);
    return *this;
}
mpfr_number::~mpfr_number() { mpfr_clear(value_); }

namespace {

mpfr_rnd_t to_mpfr(rounding mode) {
    switch (mode) {
        case rounding::to_nearest_even: return MPFR_RNDN;
        case rounding::toward_zero: return MPFR_RNDZ;
        case rounding::upward: return MPFR_RNDU;
        case rounding::downward: return MPFR_RNDD;
    }
    throw std::invalid_argument("oracle: unknown rounding mode");
}

// Restores MPFR's exponent range on scope exit (also when something throws).
class exponent_range_guard {
public:
    exponent_range_guard() : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {}
    ~exponent_range_guard() {
        mpfr_set_emin(emin_);
        mpfr_set_emax(emax_);
    }
    exponent_range_guard(const exponent_range_guard&) = delete;
    exponent_range_guard& operator=(const exponent_range_guard&) = delete;

private:
    mpfr_exp_t emin_, emax_;
};

// Bits needed for count * magnitude (<= 106 + 64).
int term_bits(const exact_term& t) {
    const int m = t.high != 0 ? 128 - std::countl_zero(t.high) : 64 - std::countl_zero(t.low);
    return m + 64 - std::countl_zero(t.count);
}

// Every term fits in term_precision bits: a magnitude < 2^106 (products) times a count < 2^64.
constexpr mpfr_prec_t term_precision = 192;

// Sets out (precision term_precision) to the exact value of one term.
void set_term(mpfr_number& out, const exact_term& t) {
    int ternary;
    if (t.high == 0 && t.count == 1) {
        ternary = mpfr_set_ui_2exp(out.get(), t.low, t.exponent, MPFR_RNDN);
    } else {
        mpz_t z;
        mpz_init(z);
        const std::uint64_t words[2] = {t.low, t.high};
        mpz_import(z, 2, -1, sizeof(std::uint64_t), 0, 0, words);
        mpz_mul_ui(z, z, t.count);
        ternary = mpfr_set_z_2exp(out.get(), z, t.exponent, MPFR_RNDN);
        mpz_clear(z);
    }
    if (ternary != 0) throw std::logic_error("oracle mpfr: a term was not set exactly");
    if (t.negative) mpfr_neg(out.get(), out.get(), MPFR_RNDN);
}

// Exact sum of the finite terms. Precision: from the lowest term bit to the highest, plus log2(#terms) + 2 carry
// bits, so mpfr_sum cannot round (its ternary value is checked anyway). Terms go in chunks so that memory stays
// bounded for millions of terms; each chunk sum is exact at the same precision, and so is their sum.
mpfr_exact sum_exact(term_list terms) {
    mpfr_exact out;
    out.special = terms.special;
    if (terms.finite.empty()) {
        mpfr_set_zero(out.value.get(), +1);
        return out;
    }
    long low = terms.finite.front().exponent, high = low;
    for (const exact_term& t : terms.finite) {
        low = std::min<long>(low, t.exponent);
        high = std::max<long>(high, static_cast<long>(t.exponent) + term_bits(t));
    }
    const long count_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(terms.finite.size()));
    const auto precision = static_cast<mpfr_prec_t>(high - low + count_bits + 2);
    mpfr_set_prec(out.value.get(), precision);

    constexpr std::size_t chunk = std::size_t{1} << 16;
    std::vector<mpfr_number> partials;
    std::vector<mpfr_number> values(std::min(chunk, terms.finite.size()), mpfr_number(term_precision));
    std::vector<mpfr_ptr> pointers;
    for (std::size_t start = 0; start < terms.finite.size(); start += chunk) {
        const std::size_t len = std::min(chunk, terms.finite.size() - start);
        pointers.clear();
        for (std::size_t i = 0; i < len; ++i) {
            set_term(values[i], terms.finite[start + i]);
            pointers.push_back(values[i].get());
        }
        partials.emplace_back(precision);
        if (mpfr_sum(partials.back().get(), pointers.data(), len, MPFR_RNDN) != 0)
            throw std::logic_error("oracle mpfr: mpfr_sum rounded a chunk; the precision is too small");
    }
    pointers.clear();
    for (auto& p : partials) pointers.push_back(p.get());
    if (mpfr_sum(out.value.get(), pointers.data(), pointers.size(), MPFR_RNDN) != 0)
        throw std::logic_error("oracle mpfr: mpfr_sum rounded; the precision is too small");
    return out;
}

}  // namespace

mpfr_number mpfr_value(std::uint64_t bits, const format_info& f) {
    const parts p = decode(f, bits);
    if (p.nan || p.inf) throw std::invalid_argument("oracle mpfr_value: NaN and Inf have no finite value");
    mpfr_number out(f.precision);
    if (p.significand == 0) {
        mpfr_set_zero(out.get(), p.negative ? -1 : +1);
        return out;
    }
    if (mpfr_set_ui_2exp(out.get(), p.significand, p.exponent, MPFR_RNDN) != 0)
        throw std::logic_error("oracle mpfr_value: not exact");
    if (p.negative) mpfr_neg(out.get(), out.get(), MPFR_RNDN);
    return out;
}

namespace {

// y holds the value rounded to p bits in the wide default range with ternary value `ternary` (MPFR convention:
// sign of y - exact). Brings it into the format's exponent range and encodes it.
std::uint64_t finish_rounding(mpfr_number& y, int ternary, const format_info& to, mpfr_rnd_t rnd) {
    const bool negative = mpfr_signbit(y.get()) != 0;
    const int p = to.precision;
    {
        exponent_range_guard range;
        // MPFR's exponents are those of 0.1xxx * 2^E: the normal range [2^emin, 2^(emax+1)) is E in
        // [emin + 1, emax + 1]; the smallest subnormal 2^(emin - p + 1) is E = emin - p + 2.
        mpfr_set_emin(to.emin - p + 2);
        mpfr_set_emax(to.emax + 1);
        ternary = mpfr_check_range(y.get(), ternary, rnd);   // overflow and underflow
        mpfr_subnormalize(y.get(), ternary, rnd);             // fewer bits below 2^emin, no double rounding
    }
    if (mpfr_inf_p(y.get())) return inf_bits(to, negative);
    if (mpfr_zero_p(y.get())) return zero_bits(to, negative);

    // Encode y = z * 2^E, |z| of exactly p bits, with integer operations.
    mpz_t z;
    mpz_init(z);
    const long E = mpfr_get_z_2exp(z, y.get());
    mpz_abs(z, z);
    const std::uint64_t m = mpz_get_ui(z);
    mpz_clear(z);
    const int frac_bits = p - 1;
    const long lead = E + frac_bits;  // y in [2^lead, 2^(lead+1))
    if ((m >> frac_bits) != 1 || lead > to.emax) throw std::logic_error("oracle mpfr: unexpected rounded value");
    std::uint64_t bits = zero_bits(to, negative);
    if (lead >= to.emin) {
        bits |= (static_cast<std::uint64_t>(lead + to.emax) << frac_bits) | (m - (std::uint64_t{1} << frac_bits));
    } else {
        const long shift = static_cast<long>(to.subnormal_lsb_exponent()) - E;
        if (shift <= 0 || shift > frac_bits || (m & ((std::uint64_t{1} << shift) - 1)) != 0)
            throw std::logic_error("oracle mpfr: subnormal result with bits below the smallest subnormal");
        bits |= m >> shift;
    }
    return bits;
}

}  // namespace

std::uint64_t mpfr_round_bits(mpfr_srcptr x, const format_info& to, rounding mode) {
    if (mpfr_nan_p(x)) return nan_bits(to);
    const bool negative = mpfr_signbit(x) != 0;
    if (mpfr_inf_p(x)) return inf_bits(to, negative);
    if (mpfr_zero_p(x)) return zero_bits(to, negative);
    const mpfr_rnd_t rnd = to_mpfr(mode);
    mpfr_number y(to.precision);
    const int ternary = mpfr_set(y.get(), x, rnd);  // to p bits, in the wide default range
    return finish_rounding(y, ternary, to, rnd);
}

std::uint64_t mpfr_round_rational_bits(const mpq_class& x, const format_info& to, rounding mode) {
    if (x == 0) return zero_bits(to, false);
    const mpfr_rnd_t rnd = to_mpfr(mode);
    mpfr_number y(to.precision);
    const int ternary = mpfr_set_q(y.get(), x.get_mpq_t(), rnd);  // to p bits, in the wide default range
    return finish_rounding(y, ternary, to, rnd);
}

std::uint64_t mpfr_exact::round_bits(const format_info& to, rounding mode) const {
    if (auto decided = special.decided_bits(to)) return *decided;
    if (mpfr_zero_p(value.get())) return special.exact_zero_bits(to, mode);
    return mpfr_round_bits(value.get(), to, mode);
}

mpfr_exact mpfr_sum(std::span<const std::uint64_t> bits, const format_info& f) { return sum_exact(sum_terms(bits, f)); }

mpfr_exact mpfr_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f) {
    return sum_exact(dot_terms(x, y, f));
}

}  // namespace exactref::oracle

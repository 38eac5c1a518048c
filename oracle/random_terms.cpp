// Random test inputs of the four formats with mixed magnitudes and signs (see term_mix in oracle.h).
#include <algorithm>
#include <stdexcept>

#include "oracle.h"

namespace exactref::oracle {
namespace {

struct layout {
    int frac_bits;
    std::uint64_t max_field;  // all ones: Inf/NaN
    explicit layout(const format_info& f)
        : frac_bits(f.storage_bits - 1 - f.exponent_bits), max_field((std::uint64_t{1} << f.exponent_bits) - 1) {}
};

std::uint64_t uniform(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
}

std::uint64_t make(const format_info& f, bool negative, std::uint64_t field, std::uint64_t fraction) {
    const layout l(f);
    return zero_bits(f, negative) | (field << l.frac_bits) | (fraction & ((std::uint64_t{1} << l.frac_bits) - 1));
}

// A random fraction, sometimes with only its top `keep` bits (short significands make exact results and ties common).
std::uint64_t random_fraction(const format_info& f, std::mt19937_64& rng, int keep) {
    const layout l(f);
    std::uint64_t fr = rng() & ((std::uint64_t{1} << l.frac_bits) - 1);
    if (keep < l.frac_bits) fr &= ~((std::uint64_t{1} << (l.frac_bits - keep)) - 1);
    return fr;
}

struct cluster {
    std::uint64_t lo, hi;  // exponent fields, inclusive, within [0, max_field - 1]
    int keep;              // significant fraction bits kept
};

cluster random_cluster(const format_info& f, std::mt19937_64& rng) {
    const layout l(f);
    const std::uint64_t center = uniform(rng, 0, l.max_field - 1);
    const std::uint64_t width = uniform(rng, 0, static_cast<std::uint64_t>(f.precision) + 8);
    cluster c;
    c.lo = center > width ? center - width : 0;
    c.hi = std::min(l.max_field - 1, center + width);
    c.keep = rng() % 2 ? l.frac_bits : static_cast<int>(uniform(rng, 0, static_cast<std::uint64_t>(l.frac_bits)));
    return c;
}

std::uint64_t from_cluster(const format_info& f, const cluster& c, std::mt19937_64& rng) {
    return make(f, rng() & 1, uniform(rng, c.lo, c.hi), random_fraction(f, rng, c.keep));
}

std::uint64_t negated(const format_info& f, std::uint64_t b) { return b ^ zero_bits(f, true); }

}  // namespace

const char* to_string(term_mix mix) noexcept {
    switch (mix) {
        case term_mix::full_range: return "full_range";
        case term_mix::clustered: return "clustered";
        case term_mix::cancelling: return "cancelling";
        case term_mix::ties: return "ties";
        case term_mix::subnormal: return "subnormal";
        case term_mix::specials: return "specials";
    }
    return "?";
}

std::vector<std::uint64_t> random_terms(const format_info& f, std::size_t n, term_mix mix, std::mt19937_64& rng) {
    const layout l(f);
    std::vector<std::uint64_t> out;
    out.reserve(n);
    switch (mix) {
        case term_mix::full_range:
            for (std::size_t i = 0; i < n; ++i)
                out.push_back(make(f, rng() & 1, uniform(rng, 0, l.max_field - 1), rng()));
            break;
        case term_mix::clustered: {
            const cluster c = random_cluster(f, rng);
            for (std::size_t i = 0; i < n; ++i) out.push_back(from_cluster(f, c, rng));
            break;
        }
        case term_mix::cancelling: {
            const cluster c = random_cluster(f, rng);
            while (out.size() + 2 <= n) {
                const std::uint64_t v = from_cluster(f, c, rng);
                out.push_back(v);
                if (rng() % 8 != 0) out.push_back(negated(f, v));
            }
            if (out.size() < n) {  // one small residue below the cluster
                const std::uint64_t field = c.lo > 0 ? uniform(rng, 0, c.lo - 1) : 0;
                out.push_back(make(f, rng() & 1, field, rng()));
            }
            std::shuffle(out.begin(), out.end(), rng);
            break;
        }
        case term_mix::ties: {
            if (n == 0) break;
            // x with a random significand, and half an ulp of x (possibly in two quarters): x ± ulp/2 is a midpoint.
            const std::uint64_t field = uniform(rng, static_cast<std::uint64_t>(l.frac_bits) + 3, l.max_field - 1);
            const std::uint64_t x = make(f, rng() & 1, field, rng());
            out.push_back(x);
            const parts px = decode(f, x);
            const std::uint64_t one = make(f, false, l.max_field >> 1, 0);  // 1.0: field = bias
            const bool half_negative = rng() & 1;
            if (out.size() < n) {
                if (n - out.size() >= 2 && rng() % 2) {
                    if (auto quarter = scale_exact(one, f, px.exponent - 2)) {
                        out.push_back(half_negative ? negated(f, *quarter) : *quarter);
                        out.push_back(half_negative ? negated(f, *quarter) : *quarter);
                    }
                } else if (auto half = scale_exact(one, f, px.exponent - 1)) {
                    out.push_back(half_negative ? negated(f, *half) : *half);
                }
            }
            const cluster c = random_cluster(f, rng);
            while (out.size() + 2 <= n) {  // pairs that cancel exactly
                const std::uint64_t v = from_cluster(f, c, rng);
                out.push_back(v);
                out.push_back(negated(f, v));
            }
            if (out.size() < n) out.push_back(zero_bits(f, rng() & 1));
            std::shuffle(out.begin(), out.end(), rng);
            break;
        }
        case term_mix::subnormal:
            for (std::size_t i = 0; i < n; ++i) out.push_back(make(f, rng() & 1, 0, rng() % 8 == 0 ? 0 : rng()));
            break;
        case term_mix::specials: {
            const cluster c = random_cluster(f, rng);
            // One kind of special value per input, so every special rule is reached often.
            const unsigned kind = static_cast<unsigned>(rng() % 7);
            for (std::size_t i = 0; i < n; ++i) {
                const bool special = kind >= 5 || rng() % 4 == 0;  // kinds 5, 6: zeros only
                if (!special) {
                    out.push_back(from_cluster(f, c, rng));
                    continue;
                }
                switch (kind) {
                    case 0: out.push_back(inf_bits(f, false)); break;
                    case 1: out.push_back(inf_bits(f, true)); break;
                    case 2: out.push_back(inf_bits(f, rng() & 1)); break;
                    case 3: out.push_back(make(f, rng() & 1, l.max_field, rng() | 1)); break;  // any NaN payload
                    case 4: out.push_back(zero_bits(f, rng() & 1)); break;
                    case 5: out.push_back(zero_bits(f, rng() % 16 != 0)); break;  // mostly -0.0
                    default: out.push_back(zero_bits(f, true)); break;
                }
            }
            break;
        }
    }
    return out;
}

}  // namespace exactref::oracle

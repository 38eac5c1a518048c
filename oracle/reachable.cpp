// One correctly rounded addition in any of the four formats (integer arithmetic only), and the exhaustive set of
// results of every binary tree over every order of n <= 8 terms built from it.
#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

#include "oracle.h"

namespace exactref::oracle {
namespace {

__extension__ typedef unsigned __int128 u128;  // __extension__: -Wpedantic accepts the GCC/Clang type here

int bit_length(u128 m) {
    const auto hi = static_cast<std::uint64_t>(m >> 64);
    return hi != 0 ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(static_cast<std::uint64_t>(m));
}

// Rounds (negative ? -1 : 1) * (m + sticky·ε) * 2^e, 0 < ε < 1, to f. A sticky part comes only with m holding at
// least p + 2 bits, so the round bit is a bit of m. m != 0.
std::uint64_t round_value(const format_info& f, bool negative, u128 m, long e, bool sticky, rounding mode) {
    const int p = f.precision;
    const long lead = e + bit_length(m) - 1;
    long q = std::max<long>(lead, f.emin) - p + 1;  // exponent of the result's last bit
    const long shift = q - e;
    u128 M;
    bool round_bit = false;
    if (shift <= 0) {
        if (sticky) throw std::logic_error("oracle add_rounded: sticky bits without a round bit");
        M = m << -shift;
    } else {
        M = shift >= 128 ? 0 : m >> shift;
        round_bit = shift > 128 ? false : ((m >> (shift - 1)) & 1) != 0;
        const u128 below = shift - 1 >= 128 ? m : (m & ((u128{1} << (shift - 1)) - 1));
        sticky = sticky || below != 0;
    }
    bool up = false;
    switch (mode) {
        case rounding::to_nearest_even: up = round_bit && (sticky || (M & 1) != 0); break;
        case rounding::toward_zero: break;
        case rounding::upward: up = !negative && (round_bit || sticky); break;
        case rounding::downward: up = negative && (round_bit || sticky); break;
    }
    if (up) ++M;
    const u128 hidden = u128{1} << (p - 1);
    if (M == hidden << 1) {
        M = hidden;
        ++q;
    }
    if (M >= hidden) {
        const long top = q + p - 1;
        if (top > f.emax) {
            const bool to_inf = mode == rounding::to_nearest_even || (mode == rounding::upward && !negative) ||
                                (mode == rounding::downward && negative);
            return to_inf ? inf_bits(f, negative) : max_bits(f, negative);
        }
        return zero_bits(f, negative) | (static_cast<std::uint64_t>(top + f.emax) << (p - 1)) |
               static_cast<std::uint64_t>(M - hidden);
    }
    return zero_bits(f, negative) | static_cast<std::uint64_t>(M);
}

}  // namespace

std::uint64_t add_rounded(std::uint64_t a, std::uint64_t b, const format_info& f, rounding mode) {
    const parts x = decode(f, a);
    const parts y = decode(f, b);
    // IEEE 754-2019 §6.1, §6.2, §7.2: NaN in, NaN out; Inf + -Inf is invalid.
    if (x.nan || y.nan || (x.inf && y.inf && x.negative != y.negative)) return nan_bits(f);
    if (x.inf) return inf_bits(f, x.negative);
    if (y.inf) return inf_bits(f, y.negative);
    const bool x_zero = x.significand == 0, y_zero = y.significand == 0;
    // §6.3: the sum of two zeros of opposite sign, and an exact zero from non-zero terms, are +0 (-0 under RD).
    if (x_zero && y_zero) {
        const bool negative = mode == rounding::downward ? (x.negative || y.negative) : (x.negative && y.negative);
        return zero_bits(f, negative);
    }
    const std::uint64_t storage_mask = zero_bits(f, true) | (zero_bits(f, true) - 1);
    if (x_zero) return b & storage_mask;  // exact: y itself
    if (y_zero) return a & storage_mask;

    // Order by exponent: big has the larger (or equal) exponent.
    const parts& big = x.exponent >= y.exponent ? x : y;
    const parts& small = x.exponent >= y.exponent ? y : x;
    const long gap = static_cast<long>(big.exponent) - small.exponent;
    u128 m;
    long e;
    bool negative, sticky = false;
    if (gap <= 60) {
        // Exact: both significands (< 2^53) on the smaller exponent fit in 113 bits.
        const u128 B = static_cast<u128>(big.significand) << gap;
        const u128 S = small.significand;
        e = small.exponent;
        if (big.negative == small.negative) {
            m = B + S;
            negative = big.negative;
        } else if (B >= S) {
            m = B - S;
            negative = big.negative;
        } else {
            m = S - B;
            negative = small.negative;
        }
        if (m == 0) return zero_bits(f, mode == rounding::downward);
    } else {
        // big is normal (its exponent exceeds the subnormal one) and |small| < 2^(small.exponent + 53) <= 2^(big's
        // exponent - 8): with 4 guard bits, small only moves the value strictly inside one unit of m (sticky).
        e = static_cast<long>(big.exponent) - 4;
        m = static_cast<u128>(big.significand) << 4;
        negative = big.negative;
        if (big.negative != small.negative) --m;  // the value lies in (m - 1, m) units: m - 1 plus a sticky part
        sticky = true;
    }
    return round_value(f, negative, m, e, sticky, mode);
}

namespace {

// Memoized enumeration: results(mask, h) is the set of results of trees of height <= h over the terms in mask.
// Sub-multisets with the same terms (equal bits) share one entry; a per-(mask, height) table avoids rebuilding keys.
class enumerator {
public:
    static constexpr unsigned max_terms = 8;

    enumerator(std::span<const std::uint64_t> terms, const format_info& f, rounding mode)
        : terms_(terms.begin(), terms.end()), f_(f), mode_(mode) {
        for (auto& t : terms_)
            if (is_nan_bits(f_, t)) t = nan_bits(f_);
        table_.fill(nullptr);
    }

    const std::vector<std::uint64_t>& results(unsigned mask, unsigned height) {
        const unsigned k = static_cast<unsigned>(std::popcount(mask));
        height = std::min(height, k - 1);  // no tree over k leaves is taller than k - 1
        const std::vector<std::uint64_t>*& slot = table_[mask * max_terms + height];
        if (slot != nullptr) return *slot;
        std::vector<std::uint64_t> key;
        for (unsigned i = 0; i < terms_.size(); ++i)
            if (mask >> i & 1u) key.push_back(terms_[i]);
        std::sort(key.begin(), key.end());
        key.push_back(height);
        if (auto it = memo_.find(key); it != memo_.end()) return *(slot = &it->second);

        std::vector<std::uint64_t> out;
        if (k == 1) {
            out.push_back(key.front());
        } else if (height >= 1 && (1u << height) >= k) {  // a tree of height h has at most 2^h leaves
            const unsigned lowest = mask & (~mask + 1);
            // Unordered splits {A, B}: A holds the lowest term (addition is commutative).
            for (unsigned a = (mask - 1) & mask; a != 0; a = (a - 1) & mask) {
                if ((a & lowest) == 0) continue;
                const std::vector<std::uint64_t>& left = results(a, height - 1);  // std::map: stable references
                const std::vector<std::uint64_t>& right = results(mask ^ a, height - 1);
                for (std::uint64_t x : left)
                    for (std::uint64_t y : right) out.push_back(add_rounded(x, y, f_, mode_));
                if (out.size() > (std::size_t{1} << 16)) unique_sorted(out);  // keep memory bounded
            }
            unique_sorted(out);
        }
        return *(slot = &memo_.emplace(std::move(key), std::move(out)).first->second);
    }

private:
    static void unique_sorted(std::vector<std::uint64_t>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }

    std::vector<std::uint64_t> terms_;
    const format_info& f_;
    rounding mode_;
    std::map<std::vector<std::uint64_t>, std::vector<std::uint64_t>> memo_;  // node-based: references stay valid
    std::array<const std::vector<std::uint64_t>*, (1u << max_terms) * max_terms> table_;
};

void check_size(std::span<const std::uint64_t> terms) {
    if (terms.size() > enumerator::max_terms)
        throw std::invalid_argument("oracle reachable_sums: " + std::to_string(terms.size()) +
                                    " terms; the exhaustive enumeration takes at most 8");
}

std::vector<std::uint64_t> enumerate(std::span<const std::uint64_t> terms, const format_info& f, unsigned height,
                                     rounding mode) {
    check_size(terms);
    if (terms.empty()) return {zero_bits(f, false)};
    enumerator e(terms, f, mode);
    return e.results((1u << terms.size()) - 1, height);
}

}  // namespace

std::vector<std::uint64_t> reachable_sums(std::span<const std::uint64_t> terms, const format_info& f,
                                          rounding mode) {
    return enumerate(terms, f, 8, mode);
}

std::vector<std::uint64_t> reachable_sums_height(std::span<const std::uint64_t> terms, const format_info& f,
                                                 unsigned height, rounding mode) {
    return enumerate(terms, f, height, mode);
}

std::vector<std::vector<std::uint64_t>> reachable_sums_by_height(std::span<const std::uint64_t> terms,
                                                                 const format_info& f, rounding mode) {
    check_size(terms);
    if (terms.empty()) return {{zero_bits(f, false)}};
    enumerator e(terms, f, mode);
    std::vector<std::vector<std::uint64_t>> out;
    for (unsigned h = 0; h < terms.size(); ++h) out.push_back(e.results((1u << terms.size()) - 1, h));
    return out;
}

}  // namespace exactref::oracle

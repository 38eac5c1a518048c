// Order-free test data (exactref/testing.h): the construction of docs/order-free.md, step by step.
//
// Everything is an integer in units of the quantum q = 2^e0: a term is v·q with 0 < |v| <= M, a partial sum π·q
// with |π| <= W, W + M = C = 2^p. Lemma 1 (docs/order-free.md): every multiple of q of magnitude at most C·q is
// representable, so the whole construction is integer bookkeeping, checked as it goes (the checks restate the
// lemmas and throw std::logic_error, which no input can reach).
//
// The structure's groups are generated from the root down, depth first: each group is given the exact sum it must
// have (its target t, |t| <= its level's capacity b) and gives each of its items a target in turn, so memory is
// O(levels) and every random draw happens in one fixed sequence (the same bits on every platform).
//   fold group   a walk: item k moves the prefix π by v_k, |v_k| <= a (the item cap), π stays in [-W, W] and within
//                reach of t (Step F1-F3 below); the last item lands on t.
//   any group    magnitudes within the mass budget Σ|v_k| + |t| <= 2W (equivalently Σ positive <= W and
//                Σ |negative| <= W: every subset sum lies in [-W, W]); signs by a walk kept in [-L, L]; the last
//                item is t minus the rest (Step A1-A4 below).
#include "exactref/testing.h"

#include <algorithm>  // std::min, std::max, std::clamp
#include <bit>        // std::bit_width
#include <stdexcept>
#include <string>
#include <vector>

namespace exactref::testing {

namespace {

__extension__ typedef unsigned __int128 u128;  // __extension__: -Wpedantic accepts the GCC/Clang type here

// ---- random numbers ----------------------------------------------------------------------------------------------

// xoshiro256** (Blackman–Vigna 2018) seeded through splitmix64: fully specified, so a seed gives the same data
// everywhere (std::mt19937_64 is too, but its distributions are not).
class random_bits {
public:
    explicit random_bits(std::uint64_t seed) noexcept {
        for (std::uint64_t& w : s_) {
            seed += 0x9e3779b97f4a7c15ULL;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            w = z ^ (z >> 31);
        }
    }
    std::uint64_t next() noexcept {
        const std::uint64_t out = std::rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = std::rotl(s_[3], 45);
        return out;
    }
    /// Uniform in [0, k) up to a bias below k/2^64 (Lemire's multiply, no rejection: one draw per call).
    std::uint64_t below(std::uint64_t k) noexcept { return static_cast<std::uint64_t>((u128{next()} * k) >> 64); }
    bool coin() noexcept { return (next() >> 63) != 0; }

private:
    std::uint64_t s_[4];
};

// ---- magnitudes over binades ---------------------------------------------------------------------------------

// The distribution D(B) of a magnitude: a binade b uniform in [0, B), then uniform in [2^b, 2^(b+1)). Its largest
// value is 2^B - 1; every bit down to the quantum is random. B >= 1.
std::int64_t draw_magnitude(random_bits& rng, int binades) {
    const int b = static_cast<int>(rng.below(static_cast<std::uint64_t>(binades)));
    const std::uint64_t low = b == 0 ? 0 : rng.next() & ((std::uint64_t{1} << b) - 1);
    return static_cast<std::int64_t>((std::uint64_t{1} << b) | low);
}

// Planning compares budgets with expected masses as exact fractions (no floating point anywhere, so the data does
// not depend on the FP environment). Products saturate at 2^128 - 1; every right-hand side below stays under 2^100.
struct fraction {
    u128 num, den;
};
constexpr u128 u128_max = ~u128{0};
u128 times(u128 a, u128 b) noexcept { return b != 0 && a > u128_max / b ? u128_max : a * b; }

// Mean of D(B): (1/B) Σ_b (2^b + 2^(b+1) - 1)/2 = (3·(2^B - 1) - B) / (2B).
fraction mean_magnitude(int binades) {
    const u128 top = (u128{1} << binades) - 1;
    return {3 * top - static_cast<u128>(binades), 2 * static_cast<u128>(binades)};
}

// floor(sqrt(x)), integer operations only.
std::uint64_t isqrt(std::uint64_t x) noexcept {
    std::uint64_t r = 0;
    for (std::uint64_t bit = std::uint64_t{1} << 62; bit != 0; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

// The largest B with 2^B - 1 <= cap (cap >= 1).
int binades_within(std::int64_t cap) {
    return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(cap) + 1)) - 1;
}

// ---- the levels of the structure -------------------------------------------------------------------------------

// One level's groups (standard.h, level_groups) and the parameters the generator uses for it.
struct level_plan {
    level_order order = level_order::any;
    level_groups groups = level_groups::rest;
    std::uint64_t n = 0;          // N of ":N", "/N", "%N"
    std::uint64_t items = 0;      // items this level receives (leaves for the first level)
    std::uint64_t count = 0;      // groups it forms (the items of the next level)
    std::uint64_t largest = 0;    // items in its largest group
    std::uint64_t smallest = 0;   // items in its smallest group
    bool may_hold_one_leaf = false;  // some group's whole subtree may be a single leaf (a forced non-zero item)

    std::int64_t item_cap = 0;  // a: every item's value (a term, or the sum of a group below) has |v| <= a
    std::int64_t capacity = 0;  // b: the sum of every group of this level has |t| <= b (targets its parent gives)
    int binades = 1;            // B: proposals are drawn from D(B)

    std::uint64_t size(std::uint64_t g) const noexcept {
        switch (groups) {
            case level_groups::rest: return items;
            case level_groups::consecutive: return std::min(n, items - g * n);
            case level_groups::chunks: return items / n + (g < items % n ? 1 : 0);
            case level_groups::interleaved: return (items - g + n - 1) / n;
        }
        return 0;
    }
    std::uint64_t item(std::uint64_t g, std::uint64_t k) const noexcept {
        switch (groups) {
            case level_groups::rest: return k;
            case level_groups::consecutive: return g * n + k;
            case level_groups::chunks: return g * (items / n) + std::min(g, items % n) + k;
            case level_groups::interleaved: return g + k * n;
        }
        return 0;
    }
};

// Fills items/count/largest/smallest of each level over `leaves` leaves (the rules of standard.h).
void shape_levels(std::vector<level_plan>& levels, std::uint64_t leaves) {
    std::uint64_t items = leaves;
    for (level_plan& l : levels) {
        l.items = items;
        switch (l.groups) {
            case level_groups::rest:
                l.count = 1;
                l.largest = l.smallest = items;
                break;
            case level_groups::consecutive:
                l.count = items / l.n + (items % l.n != 0 ? 1 : 0);
                l.largest = std::min(items, l.n);
                l.smallest = items - (l.count - 1) * l.n;
                break;
            case level_groups::chunks:
            case level_groups::interleaved:
                l.count = l.n;
                l.largest = items / l.n + (items % l.n != 0 ? 1 : 0);
                l.smallest = items / l.n;
                break;
        }
        items = l.count;
    }
}

// ---- the plan: M, W and each level's caps ---------------------------------------------------------------------

struct plan {
    std::vector<level_plan> levels;
    const format_info* format = nullptr;
    std::int64_t M = 0;   // |term| <= M
    std::int64_t W = 0;   // |every allowed partial sum| <= W, W + M = 2^p
    bool parity = false;  // M = 1, one any level: every term ±1, the sum's parity is n's (Step A0)
    int e0 = 0;           // q = 2^e0
    std::string described;  // "any order and any tree" or "the structure levels:..." (messages)
};

std::string format_name(const format_info& f) { return std::string(f.name); }

std::string what_to_do() {
    std::string wider;
    for (dtype d : {dtype::bfloat16, dtype::float16, dtype::float32, dtype::float64}) {
        if (!wider.empty()) wider += ", ";
        wider += std::string(info(d).name) + " " + std::to_string(order_free_max_terms(d));
    }
    return "pass a structure that says how the sum is evaluated (such as \"levels:fold/4,any\": 4 threads fold "
           "static chunks, then atomics), a wider dtype (without a structure at most: " + wider +
           " terms), or a smaller n";
}

[[noreturn]] void internal(const char* what) {
    throw std::logic_error(std::string("exactref::testing: internal error in the order-free construction: ") + what);
}

// Refuses what is not a structure for data of format f: a standard that is not levels:, or one that accumulates
// (mixed) in a format that does not hold every value of f.
void check_structure(const format_info& f, const standard& s) {
    if (!s.structured) {
        // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "'" + s.name() here.
        std::string why = "order-free data: structure '";
        why += s.name();
        why += "' is not a structured standard";
        if (s.decides == rule::bound) {
            const std::string alone = s.structure();
            why += " (its structure alone is " + alone + "; pass parse_standard(\"" + alone +
                   "\"), or no structure for any order and any tree)";
        } else {
            why += " (it compares encodings and describes no evaluation; pass levels:... such as "
                   "\"levels:fold/4,any\", or no structure for any order and any tree)";
        }
        throw std::invalid_argument(why);
    }
    if (s.accumulate) {
        const format_info& acc = info(*s.accumulate);
        if (acc.precision < f.precision || acc.emin > f.emin || acc.emax < f.emax)
            throw std::invalid_argument("order-free data: structure '" + s.name() + "' accumulates in " +
                                        std::string(acc.name) + ", which does not hold every " +
                                        format_name(f) + " value: generate " + std::string(acc.name) +
                                        " data, or pass the levels alone (" + s.structure() + ")");
    }
}

// The levels of `structure` (nullptr: one `any` level), checked and shaped over n >= 1 leaves.
std::vector<level_plan> levels_of(const format_info& f, std::uint64_t n, const standard* structure) {
    std::vector<level_plan> levels;
    if (structure == nullptr) {
        levels.push_back(level_plan{});
        shape_levels(levels, n);
        return levels;
    }
    const standard& s = *structure;
    check_structure(f, s);
    const std::vector<level_shape> shapes = level_shapes(s, n);  // throws for groups that would be empty
    for (const level& l : s.levels) {
        level_plan p;
        p.order = l.order;
        p.groups = l.groups;
        p.n = l.size;
        levels.push_back(p);
    }
    shape_levels(levels, n);
    if (shapes.size() != levels.size()) internal("level_shapes disagrees on the number of levels");
    for (std::size_t i = 0; i < levels.size(); ++i)
        if (shapes[i].items != levels[i].items || shapes[i].groups != levels[i].count ||
            shapes[i].largest != levels[i].largest)
            internal("level_shapes disagrees on a level's groups");
    return levels;
}

// Is the item j of level l a single leaf (a term, or a group whose subtree holds one term)? Such an item cannot sum
// to 0. O(levels).
bool single_leaf_item(const std::vector<level_plan>& levels, std::size_t l, std::uint64_t j) {
    while (l > 0) {
        const level_plan& below = levels[l - 1];
        if (below.size(j) != 1) return false;
        j = below.item(j, 0);
        --l;
    }
    return true;
}

// The share of an any group's budget its c - 1 proposals may expect to use: half for a small group, nearly all of
// it for a large one, whose mass concentrates (relative spread ~ 1/sqrt(c)): 1 - 4/floor(sqrt(c)). So the budget
// clamp of Step A2 rarely shapes the magnitudes.
fraction expected_share(std::uint64_t c) {
    if (c < 64) return {1, 2};
    const std::uint64_t r = isqrt(c);
    return {r - 4, r};
}

// Comfort: the expected mass of c - 1 proposals from D(B) fits the expected share of the budget A:
// (c - 1)·mean <= share·A.
bool comfortable(std::uint64_t c, int binades, std::int64_t budget) {
    if (c <= 1) return true;
    const fraction mean = mean_magnitude(binades), share = expected_share(c);
    return times(times(c - 1, mean.num), share.den) <=
           times(times(share.num, static_cast<u128>(budget)), mean.den);
}

// The probability (as a threshold on a 64-bit draw; all ones: always) that an item that may be 0 is non-zero, so
// that the expected mass of `singles` items that must be non-zero and `free_items` others stays within the share of
// the budget: rho = (share·A / mean - singles) / free_items.
std::uint64_t nonzero_threshold(std::uint64_t c, int binades, std::int64_t budget, std::uint64_t singles,
                                std::uint64_t free_items) {
    if (free_items == 0) return ~std::uint64_t{0};
    const fraction mean = mean_magnitude(binades), share = expected_share(c);
    // rho = num / den with num = share.num·A·mean.den - singles·share.den·mean.num, den = free·share.den·mean.num.
    const u128 room = times(times(share.num, static_cast<u128>(budget)), mean.den);
    const u128 used = times(times(singles, share.den), mean.num);
    if (room <= used) return 0;
    u128 num = room - used;
    u128 den = times(times(free_items, share.den), mean.num);
    if (num >= den) return ~std::uint64_t{0};
    while (den >> 64 != 0) {  // keep 64 bits of the ratio: threshold = floor(num·2^64 / den)
        num >>= 1;
        den >>= 1;
    }
    return static_cast<std::uint64_t>((num << 64) / den);
}

// Step A1's budget for the first c - 1 items of an any group with item cap a, walk bound L and target |t| <= b =
// a - L: 2W - |t| - (largest last item, min(a, |t| + L)) - (1 for the nudge of Step A3) at the worst |t| = b.
std::int64_t any_budget(std::int64_t W, std::int64_t a, std::int64_t L) { return 2 * W - 2 * a + L - 1; }

plan make_plan(const format_info& f, std::uint64_t n, const standard* structure) {
    plan pl;
    pl.format = &f;
    pl.levels = levels_of(f, n, structure);
    pl.described = structure == nullptr ? std::string("any order and any tree")
                                        : "the structure " + structure->structure();
    std::vector<level_plan>& levels = pl.levels;
    const int p = f.precision;
    const std::int64_t C = std::int64_t{1} << p;

    for (std::size_t l = 0; l < levels.size(); ++l)
        levels[l].may_hold_one_leaf = levels[l].smallest == 1 && (l == 0 || levels[l - 1].may_hold_one_leaf);

    // M: terms of a fold level reach C/4 (W = 3C/4 leaves the walk room, Step F). Terms of an any level are drawn
    // with L = 2^B - 1 <= M/2 for the largest B the level's mass budget comfortably holds (Step A1).
    int leaf_binades = p - 2;
    if (levels[0].order == level_order::fold) {
        pl.M = C / 4;
    } else {
        const std::uint64_t c1 = levels[0].largest;
        for (int B = p - 3; B >= 1 && pl.M == 0; --B) {
            const std::int64_t m = std::int64_t{2} << B;
            const std::int64_t L = (std::int64_t{1} << B) - 1;
            if (comfortable(c1, B, any_budget(C - m, m, L))) {
                pl.M = m;
                leaf_binades = B;
            }
        }
        if (pl.M == 0 && c1 - 1 <= static_cast<std::uint64_t>(any_budget(C - 4, 4, 1))) {
            pl.M = 4;  // terms ±1 but the last (Step A4)
            leaf_binades = 1;
        }
        if (pl.M == 0 && levels.size() == 1 && n + n % 2 <= static_cast<std::uint64_t>(2 * (C - 1))) {
            pl.M = 1;  // Step A0: every term ±1, P = N <= C - 1
            pl.parity = true;
            leaf_binades = 1;
        }
        if (pl.M == 0) {
            if (levels.size() == 1)
                throw std::invalid_argument(
                    "order-free data: no " + format_name(f) + " data of n = " + std::to_string(n) +
                    " terms is exact in every order and every tree: all 2^n subset sums would have to be "
                    "representable, which " + format_name(f) + " (p = " + std::to_string(p) + ") allows for at "
                    "most " + std::to_string(order_free_max_terms(f.id)) + " terms; " + what_to_do());
            throw std::invalid_argument(
                "order-free data: no " + format_name(f) + " data of n = " + std::to_string(n) +
                " terms is exact for " + pl.described + ": its first level (" +
                std::string(levels[0].order == level_order::tree ? "tree" : "any") +
                ") may add any subset of a group of " + std::to_string(c1) + " terms first, and " + format_name(f) +
                " holds every subset sum of at most " + std::to_string(any_budget(C - 4, 4, 1) + 1) +
                " terms; use smaller groups there (or fold them), a wider dtype, or a smaller n");
        }
    }
    pl.W = C - pl.M;
    const std::int64_t W = pl.W;

    for (std::size_t l = 0; l < levels.size(); ++l) {
        level_plan& lv = levels[l];
        const std::int64_t a = l == 0 ? pl.M : levels[l - 1].capacity;
        lv.item_cap = a;
        if (pl.parity) {  // one level, every term ±1
            lv.binades = 1;
            lv.capacity = 1;
            continue;
        }
        if (a < 2)
            throw std::invalid_argument(
                "order-free data: " + pl.described + " has too many tree/any levels for " + format_name(f) +
                " at n = " + std::to_string(n) + ": each one leaves less room for the sums of the groups below it; "
                "use fewer levels, a wider dtype, or a smaller n");
        if (lv.order == level_order::fold) {
            // Step F needs W >= b + 2a with b = a: M <= C/4 and a <= M give W >= 3C/4 >= 3a.
            if (3 * a > W) internal("a fold level's items exceed W/3");
            lv.binades = binades_within(a);
            lv.capacity = a;
            continue;
        }
        int B = l == 0 ? leaf_binades : binades_within(a / 2);
        while (B > 1 && !comfortable(lv.largest, B, any_budget(W, a, (std::int64_t{1} << B) - 1))) --B;
        const std::int64_t L = (std::int64_t{1} << B) - 1;
        const std::int64_t budget = any_budget(W, a, L);
        // Items that cannot be 0 (single leaves) each cost at least 1 of the budget.
        std::uint64_t forced = 0;
        if (l == 0) {
            forced = lv.largest - 1;
        } else if (levels[l - 1].may_hold_one_leaf) {
            for (std::uint64_t g = 0; g < lv.count; ++g) {
                const std::uint64_t c = lv.size(g);
                std::uint64_t k1 = 0;
                for (std::uint64_t k = 0; k + 1 < c; ++k) k1 += single_leaf_item(levels, l, lv.item(g, k)) ? 1 : 0;
                forced = std::max(forced, k1);
            }
        }
        if (forced > static_cast<std::uint64_t>(budget))
            throw std::invalid_argument(
                "order-free data: no " + format_name(f) + " data of n = " + std::to_string(n) +
                " terms is exact for " + pl.described + ": level " + std::to_string(l + 1) + " (" +
                std::string(lv.order == level_order::tree ? "tree" : "any") + ") may add any subset of up to " +
                std::to_string(forced + 1) + " items that each hold a single term, and " + format_name(f) +
                " holds every subset sum of at most " + std::to_string(budget + 1) + " such items; give the "
                "levels below it groups of at least 2 terms, use a wider dtype, or a smaller n");
        lv.binades = B;
        lv.capacity = a - L;
    }

    // q = 2^e0: the terms' geometric middle near 1, every term normal (q >= 2^emin), C·q <= 2^emax.
    const int log2_m = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(pl.M))) - 1;
    pl.e0 = std::clamp(-(log2_m / 2), f.emin, f.emax - p);
    return pl;
}

// ---- the generator -----------------------------------------------------------------------------------------------

// v·2^e0 in format f, 0 < |v| < 2^p, e0 >= emin (so the value is normal): integer operations only.
std::uint64_t encode(const format_info& f, std::int64_t v, int e0) noexcept {
    const bool negative = v < 0;
    const auto m = static_cast<std::uint64_t>(negative ? -v : v);
    const int lead = static_cast<int>(std::bit_width(m)) - 1;
    const int frac_bits = f.precision - 1;
    const auto field = static_cast<std::uint64_t>(e0 + lead + f.emax);
    const std::uint64_t frac = (m << (frac_bits - lead)) & ((std::uint64_t{1} << frac_bits) - 1);
    return (static_cast<std::uint64_t>(negative) << (f.storage_bits - 1)) | (field << frac_bits) | frac;
}

template <class T>
class generator {
public:
    generator(const plan& pl, std::span<T> out, std::uint64_t seed) : pl_(pl), out_(out), rng_(seed) {}

    void run() {
        const std::size_t top = pl_.levels.size() - 1;
        // The sum s = t·q: for Step A0 the parity of n decides (|t| <= 1); otherwise a draw within the root's
        // capacity, non-zero (so n = 1 gets its one non-zero term).
        std::int64_t t;
        if (pl_.parity) {
            t = out_.size() % 2 == 0 ? 0 : 1;
        } else {
            t = draw_magnitude(rng_, binades_within(pl_.levels[top].capacity));
        }
        if (rng_.coin()) t = -t;
        group(top, 0, t);
    }

private:
    const plan& pl_;
    std::span<T> out_;
    random_bits rng_;

    bool single(std::size_t l, std::uint64_t j) const { return single_leaf_item(pl_.levels, l, j); }

    // Item j of level l takes the value v: a term (l = 0) or the target of group j of level l - 1.
    void emit(std::size_t l, std::uint64_t j, std::int64_t v) {
        if (l == 0) {
            if (v == 0 || v > pl_.M || v < -pl_.M) internal("a term outside [-M, M] or zero");
            out_[j] = format_traits<T>::from_bits(
                static_cast<typename format_traits<T>::bits_type>(encode(*pl_.format, v, pl_.e0)));
        } else {
            group(l - 1, j, v);
        }
    }

    // Group g of level l, which must sum to exactly t: |t| <= capacity, t != 0 when its subtree is one leaf.
    void group(std::size_t l, std::uint64_t g, std::int64_t t) {
        const level_plan& lv = pl_.levels[l];
        if (t > lv.capacity || t < -lv.capacity) internal("a target above its level's capacity");
        if (lv.order == level_order::fold) {
            fold_group(l, g, t);
        } else {
            any_group(l, g, t);
        }
    }

    // Step F: a left fold over the group's items in index order. Invariant before item k (r = c - 1 - k items
    // after it): |π| <= W and |π - t| <= (r + 1)·a. Step F1 draws v from D(B) with a random sign; F2 keeps it when
    // π + v stays in [-W, W], within reach of t (|π + v - t| <= r·a) and avoids the two dead ends (a single-leaf
    // item must move π; with one single-leaf item left, π must not sit on t), else tries -v, else the nearest
    // feasible value (which exists: docs/order-free.md, Lemma 4, with a >= 2 and W >= |t| + 2a); F3 lands on t.
    void fold_group(std::size_t l, std::uint64_t g, std::int64_t t) {
        const level_plan& lv = pl_.levels[l];
        const std::uint64_t c = lv.size(g);
        const std::int64_t a = lv.item_cap, W = pl_.W;
        const bool last_single = single(l, lv.item(g, c - 1));
        std::int64_t pi = 0;
        for (std::uint64_t k = 0; k < c; ++k) {
            const std::uint64_t j = lv.item(g, k);
            const std::uint64_t r = c - 1 - k;
            const bool one = l == 0 || single(l, j);
            std::int64_t y;
            if (r == 0) {
                y = t;  // Step F3
            } else {
                // r·a, saturated beyond any distance that matters (and before it could overflow).
                const std::int64_t reach =
                    r > static_cast<std::uint64_t>(4 * W / a + 4) ? 8 * W : static_cast<std::int64_t>(r) * a;
                const std::int64_t lo = std::max({-W, pi - a, t - reach});
                const std::int64_t hi = std::min({W, pi + a, t + reach});
                const auto ok = [&](std::int64_t z) {
                    return z >= lo && z <= hi && !(one && z == pi) && !(r == 1 && last_single && z == t);
                };
                std::int64_t v = draw_magnitude(rng_, lv.binades);  // Step F1
                if (rng_.coin()) v = -v;
                y = pi + v;  // Step F2
                if (!ok(y)) y = pi - v;
                if (!ok(y)) {
                    const std::int64_t near = std::clamp(pi + v, lo, hi);
                    bool found = false;
                    for (std::int64_t d = 0; d <= 3 && !found; ++d)
                        for (std::int64_t z : {near - d, near + d})
                            if (!found && ok(z)) {
                                y = z;
                                found = true;
                            }
                    if (!found) internal("a fold step with no feasible value");
                }
            }
            const std::int64_t v = y - pi;
            if (v > a || v < -a || (one && v == 0) || y > W || y < -W) internal("a fold step breaks its invariant");
            emit(l, j, v);
            pi = y;
        }
    }

    // Step A: any order and any tree over the group's items. A1: the budget for the first c - 1 items is
    // 2W - |t| - max|last| - 1, one unit kept for every single-leaf item still to come. A2: each item draws a
    // magnitude from D(B) (0 for an item that may be 0, with the level's share), clamped to the budget left, and a
    // random sign, flipped when the walk T would leave [-L, L]. A3: when the last item would be 0 but must not be,
    // the one before it moves by one unit. A4: the last item is t - T, |t - T| <= |t| + L <= a. Then
    // Σ|v| + |t| <= 2W: every subset sum lies in [-W, W] (Lemma 3). A0 (one level, M = 1): every term ±1 and
    // t ≡ n (mod 2), so T ≡ n - 1 and the last term t - T is ±1.
    void any_group(std::size_t l, std::uint64_t g, std::int64_t t) {
        const level_plan& lv = pl_.levels[l];
        const std::uint64_t c = lv.size(g);
        const std::int64_t a = lv.item_cap, W = pl_.W;
        const std::int64_t L = (std::int64_t{1} << lv.binades) - 1;
        const std::int64_t abs_t = t < 0 ? -t : t;
        if (c == 1) {
            emit(l, lv.item(g, 0), t);
            return;
        }
        // Step A1.
        const std::int64_t nudge = a >= 2 ? 1 : 0;
        const std::int64_t budget = 2 * W - abs_t - std::min(a, abs_t + L) - nudge;
        std::uint64_t singles = 0;  // single-leaf items among the first c - 1
        if (l == 0) {
            singles = c - 1;
        } else if (pl_.levels[l - 1].may_hold_one_leaf) {
            for (std::uint64_t k = 0; k + 1 < c; ++k) singles += single(l, lv.item(g, k)) ? 1 : 0;
        }
        if (static_cast<std::uint64_t>(budget) < singles) internal("an any group's budget below its single leaves");
        // The share of items that may be 0 which are non-zero: the expected mass stays within expected_share(c).
        const std::uint64_t share = nonzero_threshold(c, lv.binades, budget, singles, c - 1 - singles);
        std::int64_t left = budget, walk = 0, mass = 0;
        const bool last_single = l == 0 || single(l, lv.item(g, c - 1));
        for (std::uint64_t k = 0; k + 1 < c; ++k) {
            const std::uint64_t j = lv.item(g, k);
            const bool one = l == 0 || (singles > 0 && single(l, j));
            if (one) --singles;
            // Step A2.
            std::int64_t m = 0;
            if (one || share == ~std::uint64_t{0} || rng_.next() < share) m = draw_magnitude(rng_, lv.binades);
            m = std::min(m, left - static_cast<std::int64_t>(singles));
            if (m < (one ? 1 : 0)) internal("an any group ran out of budget");
            std::int64_t v = rng_.coin() ? m : -m;
            if (walk + v > L || walk + v < -L) v = -v;
            if (k + 2 == c && last_single && t - (walk + v) == 0) {
                // Step A3: the last item would be 0; move this one by one unit (shrink it where it may).
                const std::int64_t sign = v < 0 ? -1 : 1;
                m = (m >= 2 || (m == 1 && !one)) ? m - 1 : m + 1;
                v = sign * m;
                if (m > a) internal("the nudge of Step A3 exceeds the item cap");
            }
            emit(l, j, v);
            walk += v;
            left -= m;
            mass += m;
        }
        // Step A4.
        const std::int64_t last = t - walk;
        if (last > a || last < -a || (last_single && last == 0)) internal("the last item of an any group");
        emit(l, lv.item(g, c - 1), last);
        mass += last < 0 ? -last : last;
        if (mass + abs_t > 2 * W) internal("an any group's subset sums exceed W");  // Lemma 3
    }
};

template <class T>
void fill(std::span<T> out, std::uint64_t seed, const standard* structure) {
    const format_info& f = format_traits<T>::info;
    if (out.empty()) {  // the empty sum: nothing to place, but a wrong structure is still an error
        if (structure != nullptr) check_structure(f, *structure);
        return;
    }
    const plan pl = make_plan(f, out.size(), structure);
    generator<T>(pl, out, seed).run();
}

}  // namespace

template <floating_format T>
void fill_order_free(std::span<T> out, std::uint64_t seed, const standard* structure) {
    fill(out, seed, structure);
}

template void fill_order_free<double>(std::span<double>, std::uint64_t, const standard*);
template void fill_order_free<float>(std::span<float>, std::uint64_t, const standard*);
template void fill_order_free<float16>(std::span<float16>, std::uint64_t, const standard*);
template void fill_order_free<bfloat16>(std::span<bfloat16>, std::uint64_t, const standard*);

std::uint64_t order_free_max_terms(dtype format) noexcept {
    return (std::uint64_t{1} << (info(format).precision + 1)) - 2;
}

}  // namespace exactref::testing

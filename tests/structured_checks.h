// tests/structured_checks.h — evaluations consistent with a structure (standard.h, levels:), for the soundness and
// detection tests of structured standards: one random evaluation, and every reachable result for n <= 8.
//
// Terms are raw bits of a format; `add` is one rounded addition on bits (the oracle's add_rounded in any mode, or
// native float/double arithmetic), so every format and rounding mode goes through the same code. The groups follow
// standard.h: ":N" consecutive, "/N" balanced chunks (the first m mod N one longer), "%N" item i in group i mod N;
// fold combines in order, tree by a random binary tree of minimal height (or of height <= h) over the group's items
// in a random order, any by a random binary tree over a random order (left folds, as atomics give, among them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "exactref/standard.h"
#include "oracle.h"

namespace exactref::test {

using bits_add = std::function<std::uint64_t(std::uint64_t, std::uint64_t)>;

/// The groups of one level over m items: the item indices of each group, in order.
inline std::vector<std::vector<std::size_t>> level_groups_of(const level& l, std::size_t m) {
    std::vector<std::vector<std::size_t>> groups;
    switch (l.groups) {
        case level_groups::rest:
            if (m > 0) groups.emplace_back(m);
            if (m > 0) std::iota(groups[0].begin(), groups[0].end(), std::size_t{0});
            break;
        case level_groups::consecutive:
            for (std::size_t b = 0; b < m; b += l.size) {
                groups.emplace_back();
                for (std::size_t i = b; i < std::min<std::size_t>(m, b + l.size); ++i) groups.back().push_back(i);
            }
            break;
        case level_groups::chunks: {
            const std::size_t n = std::min<std::size_t>(l.size, m);
            std::size_t at = 0;
            for (std::size_t g = 0; g < n; ++g) {
                const std::size_t size = m / n + (g < m % n ? 1 : 0);
                groups.emplace_back();
                for (std::size_t i = 0; i < size; ++i) groups.back().push_back(at++);
            }
            break;
        }
        case level_groups::interleaved: {
            const std::size_t n = std::min<std::size_t>(l.size, m);
            groups.resize(n);
            for (std::size_t i = 0; i < m; ++i) groups[i % n].push_back(i);
            break;
        }
    }
    return groups;
}

inline unsigned ceil_log2_of(std::size_t c) { return c <= 1 ? 0u : static_cast<unsigned>(std::bit_width(c - 1)); }

/// A random binary tree of height <= h (h = ~0u: any height) over values (in the order given), evaluated with add.
inline std::uint64_t random_tree(std::span<const std::uint64_t> v, unsigned h, const bits_add& add,
                                 std::mt19937_64& rng) {
    if (v.size() == 1) return v[0];
    const std::size_t m = v.size();
    std::size_t lo = 1, hi = m - 1;
    if (h != ~0u) {
        const std::size_t half = h >= 63 ? m : (std::size_t{1} << (h - 1));
        lo = std::max<std::size_t>(1, m > half ? m - half : 1);
        hi = std::min<std::size_t>(m - 1, half);
    }
    std::size_t split = std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
    // Sometimes a caterpillar (left or right fold), the order an atomic counter gives.
    if (h == ~0u && rng() % 4 == 0) split = rng() % 2 ? m - 1 : 1;
    const unsigned sub = h == ~0u ? ~0u : h - 1;
    return add(random_tree(v.subspan(0, split), sub, add, rng), random_tree(v.subspan(split), sub, add, rng));
}

/// One random evaluation of `terms` consistent with the structure of `model`.
inline std::uint64_t random_evaluation(const standard& model, std::vector<std::uint64_t> items, std::uint64_t zero,
                                       const bits_add& add, std::mt19937_64& rng) {
    if (items.empty()) return zero;
    for (const level& l : model.levels) {
        std::vector<std::uint64_t> next;
        for (std::vector<std::size_t>& g : level_groups_of(l, items.size())) {
            std::vector<std::uint64_t> v;
            for (std::size_t i : g) v.push_back(items[i]);
            if (l.order == level_order::fold) {
                std::uint64_t acc = v[0];
                for (std::size_t i = 1; i < v.size(); ++i) acc = add(acc, v[i]);
                next.push_back(acc);
            } else {
                std::shuffle(v.begin(), v.end(), rng);
                const unsigned h = l.order == level_order::any ? ~0u : (l.height ? unsigned(*l.height) : ceil_log2_of(v.size()));
                next.push_back(random_tree(v, h, add, rng));
            }
        }
        items = std::move(next);
    }
    return items[0];
}

/// Every result an evaluation consistent with the structure can give (n <= 8 terms), each addition rounded in f with
/// `mode` by the oracle's add_rounded; tree and any levels enumerate every tree over every order of their items
/// (oracle::reachable_sums / reachable_sums_height), for every combination of their items' possible values.
inline std::set<std::uint64_t> reachable_under(const standard& model, const std::vector<std::uint64_t>& terms,
                                               const format_info& f, rounding mode) {
    using set = std::set<std::uint64_t>;
    std::vector<set> items;
    for (std::uint64_t t : terms) items.push_back({t});
    if (items.empty()) return {0};
    for (const level& l : model.levels) {
        std::vector<set> next;
        for (std::vector<std::size_t>& g : level_groups_of(l, items.size())) {
            // Every choice of one value per item, then every result of the level's order over those values.
            std::vector<std::vector<std::uint64_t>> choices{{}};
            for (std::size_t i : g) {
                std::vector<std::vector<std::uint64_t>> more;
                for (const auto& c : choices)
                    for (std::uint64_t v : items[i]) {
                        auto d = c;
                        d.push_back(v);
                        more.push_back(std::move(d));
                    }
                choices = std::move(more);
            }
            set out;
            for (const auto& c : choices) {
                if (l.order == level_order::fold) {
                    std::uint64_t acc = c[0];
                    for (std::size_t i = 1; i < c.size(); ++i) acc = oracle::add_rounded(acc, c[i], f, mode);
                    out.insert(acc);
                } else if (l.order == level_order::any) {
                    for (std::uint64_t r : oracle::reachable_sums(c, f, mode)) out.insert(r);
                } else {
                    const unsigned h = l.height ? unsigned(*l.height) : ceil_log2_of(c.size());
                    for (std::uint64_t r : oracle::reachable_sums_height(c, f, h, mode)) out.insert(r);
                }
            }
            next.push_back(std::move(out));
        }
        items = std::move(next);
    }
    return items[0];
}

}  // namespace exactref::test

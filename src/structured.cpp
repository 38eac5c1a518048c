// Structured bounds: the error bound of a reduction with a known structure, computed from the data's group sums.
//
// docs/algorithms/structured-bounds.md is the derivation; the steps below carry its numbers.
//
// Each item of a level (a term at the leaves, a group result above) is described by
//   v   a binary64 value near the item's exact value y (the exact sum of its group)
//   w   |y - v| <= w: the uncertainty of v (binary64 rounding while computing it)
//   E   |ŷ - y| <= E: the kernel's error in the item's computed value ŷ, one per accumulation format and rounding
//       (u of that format; 2u for directed rounding), the "combos" below.
// A group of c items combined by its level's order gets (Step S2)
//   fold  E_g <= ρ_c·(ΣE_j + u·Σ_k |Y_k|),  Y_k the exact prefix sums, ρ_c = (1+u)^(c-1)      (S2a; Higham (4.3))
//   tree  E_g <= ΣE_j + γ_h·ΣM_j,            M_j = |v_j| + w_j + E_j >= |ŷ_j|                 (S2b; Higham §4.2)
//   any   E_g <= ΣE_j + u·Σ_{m=2..c} T(m) / (1 - (c-1)u),  T(m) the largest |sum| of m items    (S2c)
//   every order also E_g <= ΣE_j + (c-1)·u·ΣM_j                                               (S2d; Lange–Rump 2017)
// and E_g is the smallest that applies. The group's own v, w follow from binary64 sums (Step S3). Everything is
// computed in binary64 round-to-nearest and then enlarged by explicit margins (grow()), so each bound stays above the
// exact value of its formula; the data pass costs one read of the terms, memory O(levels) (O(N) for "%N" levels).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>  // std::memcpy: lane loads
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "exactref/detail/fp_environment.h"
#include "exactref/dot.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "simd_targets.h"

namespace exactref {

const structure_bound* reference::find_structure(const standard& model) const noexcept {
    const std::string name = model.structure();
    for (const structure_bound& b : structures)
        if (b.structure == name) return &b;
    return nullptr;
}

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double u_d = 0x1p-53;  // binary64's unit roundoff: the arithmetic of this file

// x enlarged to cover the rounding errors of at most `ops` binary64 operations (each relative <= 2^-53) on the way
// to it, and of this multiplication: x·(1 + (ops + 2)·2^-52) exceeds x·(1 + 2^-53)^ops for ops < 2^40.
double grow(double x, double ops) { return x * (1 + (ops + 2) * 0x1p-52); }

// γ_k = k·u / (1 - k·u) rounded upward; inf when k·u >= 1.
double gamma_up(double k, double u) {
    const double ku = k * u;  // exact: u is a power of two, k < 2^53
    if (!(ku < 1)) return inf;
    return grow(ku / (1 - ku), 4);
}

// (1 + u)^m <= exp(m·u), rounded upward (glibc's exp is within one ulp).
double growth_up(double m, double u) {
    const double mu = m * u;
    if (mu > 700) return inf;
    return std::exp(mu) * (1 + 0x1p-40);
}

// The (format, rounding) pairs a bound is computed for: every accumulation format that holds the terms exactly.
struct combos {
    int count = 0;
    std::array<int, 8> slot{};    // index into structure_bound::error
    std::array<double, 8> u{};    // unit roundoff (2u for directed)
    std::array<double, 8> eta{};  // 2^(emin - p) (doubled for directed): a product's underflow (dots)
    std::array<bool, 8> directed{};
};

combos combos_for(dtype term) {
    const format_info& t = info(term);
    combos c;
    for (dtype acc : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16}) {
        const format_info& a = info(acc);
        const bool fits = t.precision <= a.precision && t.emax <= a.emax &&
                          t.subnormal_lsb_exponent() >= a.subnormal_lsb_exponent();
        if (!fits) continue;
        for (int directed = 0; directed < 2; ++directed) {
            c.slot[c.count] = 2 * static_cast<int>(acc) + directed;
            c.u[c.count] = std::ldexp(1.0, a.u_exponent() + directed);
            c.eta[c.count] = std::ldexp(1.0, a.emin - a.precision + directed);
            c.directed[c.count] = directed != 0;
            ++c.count;
        }
    }
    return c;
}

// One item handed to the next level.
struct item {
    double v = 0, w = 0;
    std::array<double, 8> e{};
};

// Step S1: the running statistics of one open group.
struct group_acc {
    std::uint64_t c = 0;
    double sum_v = 0;  // Σ v_j, in order (the prefix V_k while the group is open)
    double abs_v = 0;  // Σ |v_j|
    double sum_w = 0;  // Σ w_j
    double q = 0;      // fold: Σ_k |V_k|
    std::array<double, 8> se{};  // Σ E_j per combo
    std::vector<item> items;     // any, above the leaves: the items themselves, for T(m) (Step S2c), while few
    bool keep_items = false;
    // Level 2 only: its leaf children's statistics summed, their errors added at this group's end (Step S1).
    std::uint64_t leaf_terms = 0, leaf_groups = 0;
    double leaf_abs_sum_v = 0, leaf_abs_v = 0, leaf_q = 0;
};

// The statistics a group's error is computed from (Step S2): one group's, or the sum over a parent's leaf groups.
struct totals {
    std::uint64_t c = 0;      // group size for the formulas' constants (the largest, for a sum over leaf groups)
    double ops = 0;           // additions behind each sum below (for the rounding margins)
    double abs_sum_v = 0;     // |Σ v_j| (summed over the groups)
    double abs_v = 0, sum_w = 0, q = 0;
    std::array<double, 8> se{};
};

// A group of at most this many items keeps them for Step S2c's sorted T(m); larger ones use max(P, N).
constexpr std::uint64_t max_kept_items = 1 << 16;

// Per-size constants of a level's formulas, per combo (groups mostly share one size: exp() once, not per group).
struct size_constants {
    std::uint64_t c = ~std::uint64_t{0};
    std::array<double, 8> rho{};       // (1 + u)^(c-1), Step S2a
    std::array<double, 8> gamma_h{};   // γ_h, Step S2b
    std::array<double, 8> gamma_c1{};  // γ_{c-1}, Step S2d (directed)
};

struct level_state {
    level lv;
    level_shape shape;
    size_constants constants;
    std::vector<group_acc> open;    // one (consecutive) or N (interleaved)
    std::uint64_t position = 0;     // items received so far
    std::uint64_t group = 0;        // consecutive: index of the open group
    std::uint64_t group_left = 0;   // consecutive: items the open group still takes
};

class engine {
public:
    engine(const standard& model, std::uint64_t leaves, dtype term, bool dot, bool f64_dot)
        : combos_(combos_for(term)), dot_(dot), f64_dot_(f64_dot) {
        const std::vector<level_shape> shapes = level_shapes(model, leaves);
        for (std::size_t i = 0; i < model.levels.size(); ++i) {
            level_state st;
            st.lv = model.levels[i];
            st.shape = shapes[i];
            const bool interleaved = st.lv.groups == level_groups::interleaved;
            st.open.resize(interleaved && i > 0 ? st.shape.groups : 1);  // the leaf level's groups: run_engine
            for (group_acc& g : st.open)
                g.keep_items = i > 0 && st.lv.order == level_order::any && st.shape.largest <= max_kept_items;
            st.group_left = size_of_group(st, 0);
            levels_.push_back(std::move(st));
        }
    }

    const level_state& leaf_level() const { return levels_[0]; }

    // The leaf level's groups arrive whole from the kernels: c terms with Σv, Σ|v|, Σ_k|V_k|.
    void leaf_group(std::uint64_t c, double sum_v, double abs_v, double q) {
        if (levels_.size() > 1) {
            // The common case, many small leaf groups: their statistics add into the parent's group (linear in them),
            // and Step S2 runs once per parent group with the leaf groups' largest size (constants grow with c).
            level_state& st = levels_[1];
            group_acc& parent = st.lv.groups == level_groups::interleaved ? st.open[st.position % st.open.size()]
                                                                         : st.open[0];
            if (!parent.keep_items) {
                ++parent.leaf_groups;
                parent.leaf_terms += c;
                parent.leaf_abs_sum_v += std::fabs(sum_v);
                parent.leaf_abs_v += abs_v;
                parent.leaf_q += q;
                item it;
                it.v = sum_v;  // w and e are added at the parent's end
                push(1, it, true);
                return;
            }
        }
        group_acc g;
        g.c = c;
        g.sum_v = sum_v;
        g.abs_v = abs_v;
        g.q = q;
        if (f64_dot_) g.sum_w = grow(u_d * abs_v + static_cast<double>(c) * 0x1p-1074, 3);  // products rounded to binary64
        if (dot_) {
            // A product's rounding in the accumulation format: |RN(p) - p| <= u·|p| + η (Higham (2.8)); an FMA chain's
            // roundings are bounded by the same terms (docs/algorithms/structured-bounds.md, "Products").
            for (int k = 0; k < combos_.count; ++k)
                g.se[k] = grow(combos_.u[k] * (abs_v + g.sum_w) + static_cast<double>(c) * combos_.eta[k], 4);
        }
        push(1, finish(levels_[0], g));
    }

    // How many whole leaf groups of `c` terms can go to the parent at once (leaf_batch), 0 when they cannot: the
    // parent must be a consecutive tree/any group that keeps no items (a fold parent needs each child's prefix).
    std::uint64_t leaf_batch_room() const {
        if (levels_.size() < 2) return 0;
        const level_state& p = levels_[1];
        if (p.lv.order == level_order::fold || p.lv.groups == level_groups::interleaved || p.open[0].keep_items) return 0;
        return p.group_left;
    }

    // `groups` whole leaf groups at once: their sums Σv_g and Σ|v_g| and their statistics (Step S1, batched).
    void leaf_batch(std::uint64_t groups, std::uint64_t terms, double sum_v, double abs_sum_v, double abs_v, double q) {
        level_state& st = levels_[1];
        group_acc& parent = st.open[0];
        parent.leaf_groups += groups;
        parent.leaf_terms += terms;
        parent.leaf_abs_sum_v += abs_sum_v;
        parent.leaf_abs_v += abs_v;
        parent.leaf_q += q;
        parent.c += groups;
        parent.sum_v += sum_v;
        parent.abs_v += abs_sum_v;
        st.position += groups;
        st.group_left -= groups;
        if (st.group_left == 0) {
            group_acc done = std::move(st.open[0]);
            st.open[0] = group_acc{};
            st.open[0].keep_items = done.keep_items;
            ++st.group;
            st.group_left = size_of_group(st, st.group);
            push(2, finish(st, done));
        }
    }

    std::array<double, 8> result() {
        for (std::size_t i = 0; i < levels_.size(); ++i) flush(i);
        std::array<double, 8> out;
        out.fill(inf);
        for (int k = 0; k < combos_.count; ++k) {
            const double e = top_.e[k];
            out[combos_.slot[k]] = std::isnan(e) ? inf : e;
        }
        return out;
    }

private:
    static std::uint64_t size_of_group(const level_state& st, std::uint64_t g) {
        const std::uint64_t m = st.shape.items;
        switch (st.lv.groups) {
            case level_groups::rest: return m;
            case level_groups::consecutive: return std::min(st.lv.size, m - std::min(m, g * st.lv.size));
            case level_groups::chunks: {
                const std::uint64_t n = st.shape.groups;
                if (n == 0) return 0;
                return m / n + (g < m % n ? 1 : 0);
            }
            case level_groups::interleaved: return 0;  // not used
        }
        return 0;
    }

    // Step S1: an item joins its group at level i (i == levels_.size(): the root's result).
    void push(std::size_t i, const item& it, bool value_only = false) {
        if (i == levels_.size()) {
            top_ = it;
            return;
        }
        level_state& st = levels_[i];
        const std::uint64_t index = st.position++;
        if (st.lv.groups == level_groups::interleaved) {
            add(st.open[index % st.open.size()], it, st.lv.order, value_only);
            return;
        }
        add(st.open[0], it, st.lv.order, value_only);
        if (--st.group_left == 0) {
            group_acc done = std::move(st.open[0]);
            st.open[0] = group_acc{};
            st.open[0].keep_items = done.keep_items;
            ++st.group;
            st.group_left = size_of_group(st, st.group);
            push(i + 1, finish(st, done));
        }
    }

    // value_only: a leaf group's result, whose w and E come with its parent's leaf statistics.
    void add(group_acc& g, const item& it, level_order order, bool value_only) {
        ++g.c;
        g.sum_v += it.v;
        g.abs_v += std::fabs(it.v);
        if (order == level_order::fold) g.q += std::fabs(g.sum_v);
        if (value_only) return;
        g.sum_w += it.w;
        for (int k = 0; k < combos_.count; ++k) g.se[k] += it.e[k];
        if (g.keep_items) g.items.push_back(it);
    }

    // Interleaved groups finish together, in group order, when their level has received every item.
    void flush(std::size_t i) {
        level_state& st = levels_[i];
        if (st.lv.groups != level_groups::interleaved) return;
        for (group_acc& g : st.open)
            if (g.c > 0) push(i + 1, finish(st, g));
        st.open.clear();
    }

    // Steps S2 and S3: the group's error per combo, and the item it becomes.
    const size_constants& constants_for(level_state& st, std::uint64_t count) const {  // st: a cache only
        size_constants& k = st.constants;
        if (k.c == count) return k;
        k.c = count;
        const double c = static_cast<double>(count);
        const double h = st.lv.height ? static_cast<double>(*st.lv.height)
                                      : static_cast<double>(count <= 1 ? 0 : std::bit_width(count - 1));
        for (int i = 0; i < combos_.count; ++i) {
            k.rho[i] = growth_up(c - 1, combos_.u[i]);
            k.gamma_h[i] = gamma_up(h, combos_.u[i]);
            k.gamma_c1[i] = gamma_up(c - 1, combos_.u[i]);
        }
        return k;
    }

    // The leaf groups' part of a level-2 group: their errors and uncertainties, summed (Step S1).
    void add_leaf_children(group_acc& g) const {
        if (g.leaf_groups == 0) return;
        totals t;
        t.c = levels_[0].shape.largest;
        t.ops = static_cast<double>(g.leaf_terms + g.leaf_groups);
        t.abs_sum_v = g.leaf_abs_sum_v;
        t.abs_v = g.leaf_abs_v;
        t.q = g.leaf_q;
        if (f64_dot_) t.sum_w = grow(u_d * g.leaf_abs_v + static_cast<double>(g.leaf_terms) * 0x1p-1074, 3);
        if (dot_)
            for (int k = 0; k < combos_.count; ++k)
                t.se[k] = grow(combos_.u[k] * (g.leaf_abs_v + t.sum_w) + static_cast<double>(g.leaf_terms) * combos_.eta[k], 4);
        std::array<double, 8> e{};
        double w = 0;
        group_error(const_cast<level_state&>(levels_[0]), t, e, w);
        for (int k = 0; k < combos_.count; ++k) g.se[k] += e[k];
        g.sum_w += w;
        g.leaf_groups = 0;
    }

    item finish(level_state& st, group_acc& g) const {
        item out;
        add_leaf_children(g);
        if (g.c == 0) return out;
        totals t;
        t.c = g.c;
        t.ops = static_cast<double>(g.c);
        t.abs_sum_v = std::fabs(g.sum_v);
        t.abs_v = g.abs_v;
        t.sum_w = g.sum_w;
        t.q = g.q;
        t.se = g.se;
        out.v = g.sum_v;
        group_error(st, t, out.e, out.w);
        if (g.keep_items && g.items.size() == g.c)  // Step S2c's sorted form, when the items were kept
            for (int k = 0; k < combos_.count; ++k) {
                const double cu = (static_cast<double>(g.c) - 1) * combos_.u[k];
                if (!(cu < 1)) continue;
                const double se = grow(g.se[k], t.ops);
                const double node_sum = sorted_node_sum(g.items, k);
                const double e = grow(se + grow(combos_.u[k] * node_sum / grow(1 - cu, 1) * (1 + 0x1p-50), 3), 1);
                if (e + 0x1p-1060 < out.e[k]) out.e[k] = e + 0x1p-1060;
            }
        return out;
    }

    // Steps S2 and S3 over totals: the error per combo, and the uncertainty of the group's v.
    void group_error(level_state& st, const totals& t, std::array<double, 8>& e_out, double& w_out) const {
        const double c = static_cast<double>(t.c);
        const double ops = t.ops;
        const size_constants& sc = constants_for(st, t.c);
        // Step S3: Σ|y_j| <= A; |Σy_j - sum_v| and |Y_k - V_k| <= W (Lange–Rump in binary64 for the sums of v: every
        // prefix is some binary tree over the v's; Σ w_j for the v's own uncertainty).
        const double abs_up = grow(t.abs_v, ops);
        const double sum_w_up = grow(t.sum_w, ops);
        const double A = grow(abs_up + sum_w_up, 1);
        const double W = grow(sum_w_up + grow((c - 1) * u_d * abs_up, 2), 1);
        w_out = W;
        const level& lv = st.lv;
        for (int k = 0; k < combos_.count; ++k) {
            const double u = combos_.u[k];
            const double se = grow(t.se[k], ops);
            const double sm = grow(A + se, 1);  // >= Σ M_j
            // Step S2d: any binary tree, (c-1)·u·Σ|ŷ_j| in round-to-nearest (Lange–Rump, BIT 57 (2017)); Higham's
            // γ_{c-1}·Σ|ŷ_j| (with 2u) under directed rounding, where the linear form fails (covers.cpp, Step B1a).
            double e = combos_.directed[k] ? grow(se + grow(sc.gamma_c1[k] * sm, 1), 1)
                                           : grow(se + grow((c - 1) * u * sm, 2), 1);
            switch (lv.order) {
                case level_order::fold: {
                    // Step S2a: F_k <= (1+u)(F_{k-1} + E_k) + u|Y_k|, so F_c <= (1+u)^(c-1)·(ΣE_j + u·Σ_{k>=2}|Y_k|),
                    // with Σ_k |Y_k| <= Σ_k |V_k| + c·W.
                    const double prefix = grow(grow(t.q, ops) + grow(c * W, 1), 1);
                    const double f = grow(sc.rho[k] * grow(se + grow(u * prefix, 1), 1), 1);
                    e = std::min(e, f);
                    break;
                }
                case level_order::tree:
                    // Step S2b: every item lies at depth <= h; Higham §4.2 with |ŷ_j| <= M_j.
                    e = std::min(e, grow(se + grow(sc.gamma_h[k] * sm, 1), 1));
                    break;
                case level_order::any: {
                    // Step S2c without the items: T(m) <= max(P, N) <= (Σ|y| + |Σy|)/2 + W + ΣE for every m, and the
                    // node sums of any tree number c - 1.
                    const double pn = grow(grow(A + t.abs_sum_v + W, 2) / 2 + W + se, 2);
                    const double cu = (c - 1) * u;
                    if (cu < 1)
                        e = std::min(e, grow(se + grow(u * grow((c - 1) * pn, 1) / grow(1 - cu, 1) * (1 + 0x1p-50), 3), 1));
                    break;
                }
            }
            // Subnormal products and quotients above may lose up to 2^-1075 each: a floor covers them.
            e_out[k] = std::isnan(e) ? inf : e + 0x1p-1060;
        }
    }

    // Σ_{m=2..c} T(m), T(m) = max(sum of the m largest b+_j, sum of the m largest b-_j), b±_j >= max(0, ±ŷ_j).
    double sorted_node_sum(const std::vector<item>& items, int k) const {
        std::vector<double> pos, neg;
        pos.reserve(items.size());
        neg.reserve(items.size());
        for (const item& it : items) {
            const double m = it.w + it.e[k];
            pos.push_back(std::max(0.0, grow(it.v + m, 1)));
            neg.push_back(std::max(0.0, grow(-it.v + m, 1)));
        }
        std::sort(pos.begin(), pos.end(), std::greater<>());
        std::sort(neg.begin(), neg.end(), std::greater<>());
        double p = 0, n = 0, total = 0;
        for (std::size_t m = 0; m < items.size(); ++m) {
            p += pos[m];
            n += neg[m];
            if (m >= 1) total += std::max(p, n);
        }
        const double c = static_cast<double>(items.size());
        return grow(total, 2 * c + 2);
    }

    combos combos_;
    bool dot_ = false, f64_dot_ = false;
    std::vector<level_state> levels_;
    item top_;
};

// ---- Leaf kernels: Σv, Σ|v| and (fold) Σ_k |V_k| of a run of terms -------------------------------------------------

struct run_stats {
    double sum = 0, abs = 0, q = 0;
};

template <class Get>
run_stats fold_run(Get get, std::size_t begin, std::size_t end, run_stats st) {
    for (std::size_t i = begin; i < end; ++i) {
        const double t = get(i);
        st.sum += t;
        st.abs += std::fabs(t);
        st.q += std::fabs(st.sum);
    }
    return st;
}

// The fold kernel over a contiguous run of binary64 or binary32 terms, in SIMD: each vector of W terms gets its
// prefix sums by log2(W) shifted adds, plus the carry (the prefix before the vector). Every prefix V_k is then some
// binary tree of additions over x_1..x_k, as Step S3's bound assumes; the carry's chain is one add per vector. The
// widest version the CPU runs is chosen once (EXACTREF_SIMD=avx2 or =base caps it, as for the sum kernels); all give
// bounds that hold, not the same bits (the bound is not promised bit for bit).
struct batch_stats {
    double sum_v = 0, abs_sum_v = 0, abs = 0, q = 0;  // Σv_g, Σ|v_g|, Σ|x|, Σ_g Σ_k|V_k|
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_STRUCTURED_SIMD 1

template <int W>
struct lanes;
template <>
struct lanes<8> {
    typedef double vd __attribute__((vector_size(64)));
    typedef long long vi __attribute__((vector_size(64)));
    typedef float vf __attribute__((vector_size(32)));
};
template <>
struct lanes<4> {
    typedef double vd __attribute__((vector_size(32)));
    typedef long long vi __attribute__((vector_size(32)));
    typedef float vf __attribute__((vector_size(16)));
};

// W terms as binary64 lanes (binary32 widened exactly), from memory of any alignment.
template <int W, class T>
[[gnu::always_inline]] inline typename lanes<W>::vd load_lanes(const T* x) {
    typename lanes<W>::vd v;
    if constexpr (std::is_same_v<T, float>) {
        typename lanes<W>::vf f;
        std::memcpy(&f, x, sizeof f);
        v = __builtin_convertvector(f, typename lanes<W>::vd);
    } else {
        std::memcpy(&v, x, sizeof v);
    }
    return v;
}

// `groups` consecutive runs of c terms each, every run its own fold (prefix from 0).
template <int W, class T>
[[gnu::always_inline]] inline batch_stats fold_scan(const T* x, std::size_t c, std::size_t groups) {
    using vd = typename lanes<W>::vd;
    using vi = typename lanes<W>::vi;
    const vd zero = {};
    const vi magnitude = vi{} + 0x7fffffffffffffffLL;
    auto abs = [&](vd v) { return reinterpret_cast<vd>(reinterpret_cast<vi>(v) & magnitude); };
    auto load = [&](std::size_t i) { return load_lanes<W>(x + i); };
    auto scan = [&](vd v) {  // inclusive prefix sums inside the vector
        if constexpr (W == 8) {
            v += __builtin_shuffle(zero, v, vi{0, 8, 9, 10, 11, 12, 13, 14});
            v += __builtin_shuffle(zero, v, vi{0, 1, 8, 9, 10, 11, 12, 13});
            v += __builtin_shuffle(zero, v, vi{0, 1, 2, 3, 8, 9, 10, 11});
        } else {
            v += __builtin_shuffle(zero, v, vi{0, 4, 5, 6});
            v += __builtin_shuffle(zero, v, vi{0, 1, 4, 5});
        }
        return v;
    };
    const vi last = vi{} + (W - 1);
    vd q = zero, a = zero, q2 = zero, a2 = zero;
    batch_stats b;
    double q_tail = 0, a_tail = 0;
    for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t base = g * c;
        vd carry = zero;
        std::size_t i = 0;
        // Two vectors a step: the carry's chain is one add per 2W terms (the second prefix is (carry + t0) + s1,
        // still a binary tree over the terms before it), and q, a have two accumulators each.
        for (; i + 2 * W <= c; i += 2 * W) {
            const vd v0 = load(base + i), v1 = load(base + i + W);
            const vd s0 = scan(v0), s1 = scan(v1);
            const vd t0 = __builtin_shuffle(s0, last), t1 = __builtin_shuffle(s1, last);
            q += abs(carry + s0);
            q2 += abs((carry + t0) + s1);
            a += abs(v0);
            a2 += abs(v1);
            carry += t0 + t1;
        }
        for (; i + W <= c; i += W) {
            const vd v = load(base + i);
            const vd s = scan(v);
            q += abs(carry + s);
            a += abs(v);
            carry += __builtin_shuffle(s, last);
        }
        double sum = carry[0];
        for (; i < c; ++i) {
            const double t = static_cast<double>(x[base + i]);
            sum += t;
            a_tail += std::fabs(t);
            q_tail += std::fabs(sum);
        }
        b.sum_v += sum;
        b.abs_sum_v += std::fabs(sum);
    }
    b.q = q_tail;
    b.abs = a_tail;
    q += q2;
    a += a2;
    for (int l = 0; l < W; ++l) {
        b.q += q[l];
        b.abs += a[l];
    }
    return b;
}

// Σx and Σ|x| of a run (tree and any leaves).
template <int W, class T>
[[gnu::always_inline]] inline run_stats sum_scan(const T* x, std::size_t n) {
    using vd = typename lanes<W>::vd;
    using vi = typename lanes<W>::vi;
    const vi magnitude = vi{} + 0x7fffffffffffffffLL;
    vd s0 = {}, s1 = {}, a0 = {}, a1 = {};
    auto load = [&](std::size_t i) { return load_lanes<W>(x + i); };
    std::size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        const vd v0 = load(i), v1 = load(i + W);
        s0 += v0;
        s1 += v1;
        a0 += reinterpret_cast<vd>(reinterpret_cast<vi>(v0) & magnitude);
        a1 += reinterpret_cast<vd>(reinterpret_cast<vi>(v1) & magnitude);
    }
    s0 += s1;
    a0 += a1;
    run_stats st;
    for (int l = 0; l < W; ++l) {
        st.sum += s0[l];
        st.abs += a0[l];
    }
    for (; i < n; ++i) {
        st.sum += static_cast<double>(x[i]);
        st.abs += std::fabs(static_cast<double>(x[i]));
    }
    return st;
}
EXACTREF_TARGET_V4 run_stats sum_scan_v4(const double* x, std::size_t n) { return sum_scan<8>(x, n); }
EXACTREF_TARGET_V4 run_stats sum_scan_v4(const float* x, std::size_t n) { return sum_scan<8>(x, n); }
EXACTREF_TARGET_V3 run_stats sum_scan_v3(const double* x, std::size_t n) { return sum_scan<4>(x, n); }
EXACTREF_TARGET_V3 run_stats sum_scan_v3(const float* x, std::size_t n) { return sum_scan<4>(x, n); }

EXACTREF_TARGET_V4 batch_stats fold_scan_v4(const double* x, std::size_t c, std::size_t g) {
    return fold_scan<8>(x, c, g);
}
EXACTREF_TARGET_V4 batch_stats fold_scan_v4(const float* x, std::size_t c, std::size_t g) {
    return fold_scan<8>(x, c, g);
}
EXACTREF_TARGET_V3 batch_stats fold_scan_v3(const double* x, std::size_t c, std::size_t g) {
    return fold_scan<4>(x, c, g);
}
EXACTREF_TARGET_V3 batch_stats fold_scan_v3(const float* x, std::size_t c, std::size_t g) {
    return fold_scan<4>(x, c, g);
}

#endif

// Σv, Σ|v|, Σ_k|V_k| of a contiguous run: the SIMD kernel for binary64/binary32 terms, the scalar fold otherwise.
template <class T, class Get>
run_stats fold_run_of(const T* data, Get get, std::size_t begin, std::size_t end) {
#ifdef EXACTREF_STRUCTURED_SIMD
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        if (data != nullptr) {
            const int w = detail::host_simd_lanes();
            if (w >= 4) {
                const batch_stats b = w == 8 ? fold_scan_v4(data + begin, end - begin, 1)
                                             : fold_scan_v3(data + begin, end - begin, 1);
                return run_stats{b.sum_v, b.abs, b.q};
            }
        }
    }
#endif
    (void)data;
    return fold_run(get, begin, end, {});
}

// Σv and Σ|v| of a contiguous run: SIMD for binary64/binary32 terms (any tree of additions: Step S3's bound).
template <class Get>
run_stats sum_run(Get get, std::size_t begin, std::size_t end, run_stats st);
template <class T, class Get>
run_stats sum_run_of(const T* data, Get get, std::size_t begin, std::size_t end) {
#ifdef EXACTREF_STRUCTURED_SIMD
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        if (data != nullptr) {
            const int w = detail::host_simd_lanes();
            if (w == 8) return sum_scan_v4(data + begin, end - begin);
            if (w == 4) return sum_scan_v3(data + begin, end - begin);
        }
    }
#endif
    (void)data;
    return sum_run(get, begin, end, {});
}

// Many consecutive fold groups of c terms each (Σv_g, Σ|v_g|, Σ|x|, Σ_g Σ_k|V_k|): the leaf kernel of small groups,
// without a call into the engine per group.
template <class T, class Get>
batch_stats fold_batch(const T* data, Get get, std::size_t begin, std::size_t c, std::size_t groups) {
#ifdef EXACTREF_STRUCTURED_SIMD
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        if (data != nullptr) {
            const int w = detail::host_simd_lanes();
            if (w == 8) return fold_scan_v4(data + begin, c, groups);
            if (w == 4) return fold_scan_v3(data + begin, c, groups);
        }
    }
#endif
    batch_stats b;
    for (std::size_t g = 0; g < groups; ++g) {
        const run_stats st = fold_run_of(data, get, begin + g * c, begin + (g + 1) * c);
        b.sum_v += st.sum;
        b.abs_sum_v += std::fabs(st.sum);
        b.abs += st.abs;
        b.q += st.q;
    }
    return b;
}

template <class Get>
run_stats sum_run(Get get, std::size_t begin, std::size_t end, run_stats st) {
    double s[4] = {st.sum, 0, 0, 0}, a[4] = {st.abs, 0, 0, 0};
    std::size_t i = begin;
    for (; i + 4 <= end; i += 4)
        for (int j = 0; j < 4; ++j) {
            const double t = get(i + j);
            s[j] += t;
            a[j] += std::fabs(t);
        }
    for (; i < end; ++i) {
        s[0] += get(i);
        a[0] += std::fabs(get(i));
    }
    st.sum = (s[0] + s[1]) + (s[2] + s[3]);
    st.abs = (a[0] + a[1]) + (a[2] + a[3]);
    return st;
}

template <class T, class Get>
std::array<double, 8> run_engine(const standard& model, std::uint64_t n, dtype term, bool dot, bool f64_dot,
                                 const T* data, Get get) {
    detail::default_fp_environment guard;  // the margins assume binary64 round-to-nearest without FTZ/DAZ
    engine eng(model, n, term, dot, f64_dot);
    const level_state& leaf = eng.leaf_level();
    const bool fold = leaf.lv.order == level_order::fold;
    if (leaf.lv.groups == level_groups::interleaved) {
        // N interleaved groups: N running prefixes, updated a row of N terms at a time (vectorizes over the groups).
        const std::size_t groups = leaf.shape.groups;
        std::vector<double> sum(groups, 0.0), abs(groups, 0.0), q(groups, 0.0);
        for (std::size_t row = 0; row < n; row += groups) {
            const std::size_t width = std::min<std::size_t>(groups, n - row);
            for (std::size_t g = 0; g < width; ++g) {
                const double t = get(row + g);
                sum[g] += t;
                abs[g] += std::fabs(t);
                q[g] += std::fabs(sum[g]);
            }
        }
        std::vector<std::uint64_t> counts(groups, n / groups);
        for (std::size_t g = 0; g < n % groups; ++g) ++counts[g];
        for (std::size_t g = 0; g < groups; ++g) eng.leaf_group(counts[g], sum[g], abs[g], fold ? q[g] : 0);
    } else {
        std::uint64_t begin = 0;
        for (std::uint64_t g = 0; begin < n; ++g) {
            // Small consecutive fold groups go to the parent in batches (Step S1, batched).
            if (fold && leaf.lv.groups == level_groups::consecutive && leaf.lv.size <= 64) {
                const std::uint64_t c = leaf.lv.size;
                const std::uint64_t whole = std::min<std::uint64_t>(eng.leaf_batch_room(), (n - begin) / c);
                if (whole > 0) {
                    const batch_stats b = fold_batch(data, get, begin, c, whole);
                    eng.leaf_batch(whole, whole * c, b.sum_v, b.abs_sum_v, b.abs, b.q);
                    begin += whole * c;
                    g += whole - 1;
                    continue;
                }
            }
            std::uint64_t size = 0;
            switch (leaf.lv.groups) {
                case level_groups::rest: size = n; break;
                case level_groups::consecutive: size = std::min<std::uint64_t>(leaf.lv.size, n - begin); break;
                case level_groups::chunks:
                    size = n / leaf.shape.groups + (g < n % leaf.shape.groups ? 1 : 0);
                    break;
                case level_groups::interleaved: break;
            }
            const run_stats st = fold ? fold_run_of(data, get, begin, begin + size) : sum_run_of(data, get, begin, begin + size);
            eng.leaf_group(size, st.sum, st.abs, st.q);
            begin += size;
        }
    }
    return eng.result();
}

// A term as binary64, exactly (every supported format embeds in binary64).
template <class T>
double as_double(T x) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) return static_cast<double>(x);
    else return static_cast<double>(static_cast<float>(x));
}

void check_structured(const standard& model, const char* where) {
    detail::check_simd_setting();  // the fold kernel's version follows EXACTREF_SIMD: a bad value is an error
    if (model.decides != rule::bound || !model.structured)
        throw std::invalid_argument(std::string(where) + ": '" + model.name() + "' is not a structured standard; "
                                    "give one spelled levels:... (e.g. levels:fold/4,any), or no structure");
}

}  // namespace

template <floating_format T>
structure_bound structured_bound(std::span<const T> xs, const standard& model) {
    check_structured(model, "structured_bound");
    structure_bound b;
    b.structure = model.structure();
    b.leaves = xs.size();
    const T* data = xs.data();
    b.error = run_engine(model, xs.size(), format_traits<T>::info.id, false, false, data,
                         [data](std::size_t i) { return as_double(data[i]); });
    return b;
}

template <floating_format T>
structure_bound structured_dot_bound(std::span<const T> x, std::span<const T> y, const standard& model) {
    check_structured(model, "structured_dot_bound");
    if (x.size() != y.size())
        throw std::invalid_argument("structured_dot_bound: x has " + std::to_string(x.size()) + " elements and y " +
                                    std::to_string(y.size()) + ": pass vectors of one length");
    structure_bound b;
    b.structure = model.structure();
    b.leaves = x.size();
    const T* px = x.data();
    const T* py = y.data();
    const bool f64 = format_traits<T>::info.id == dtype::float64;
    b.error = run_engine(model, x.size(), format_traits<T>::info.id, true, f64, static_cast<const T*>(nullptr),
                         [px, py](std::size_t i) {
        return as_double(px[i]) * as_double(py[i]);
    });
    return b;
}

#define EXACTREF_INSTANTIATE_STRUCTURED(T)                                                                        \
    template structure_bound structured_bound<T>(std::span<const T>, const standard&);                           \
    template structure_bound structured_dot_bound<T>(std::span<const T>, std::span<const T>, const standard&);
EXACTREF_INSTANTIATE_STRUCTURED(double)
EXACTREF_INSTANTIATE_STRUCTURED(float)
EXACTREF_INSTANTIATE_STRUCTURED(float16)
EXACTREF_INSTANTIATE_STRUCTURED(bfloat16)
#undef EXACTREF_INSTANTIATE_STRUCTURED

}  // namespace exactref

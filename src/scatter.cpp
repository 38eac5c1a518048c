// Compact reference arrays and the scatter/scan builders (include/exactref/scatter.h; docs/scatter.md has the
// representation and why it is exact).
//
// Invariant of a compact cell (state without cell_spilled):
//   Σt = sum·2^exponent and Σ|t| = abs·2^exponent exactly, with 0 <= |sum| <= abs < 2^126 (so sum fits a signed
//   128-bit word and one more aligned term cannot wrap), over the finite terms; no Inf or NaN term was seen.
// A term that would break it (an Inf, a NaN, or an alignment needing more than 125 bits) moves the cell to a full
// superaccumulator pair, rebuilt from the cell exactly (add_scaled), which then takes every later term.
#include "exactref/scatter.h"

#include "compact_cells.h"  // the entries src/axis_sums.cpp uses (defined at the end)

#include <atomic>     // scatter_terms' first rejected position
#include <exception>  // std::exception_ptr (run_partitioned)

#include <algorithm>  // std::min({...})
#include <initializer_list>
#include <cstddef>  // offsetof
#include <cstdlib>  // std::aligned_alloc
#include <new>
#include <bit>
#include <cmath>    // std::isnan
#include <cstring>  // std::memcpy
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>  // madvise
#endif

#include "exactref/threads.h"  // detail::resolve_threads, chunk_count

namespace exactref {

namespace {

__extension__ typedef unsigned __int128 u128;  // __extension__: -Wpedantic accepts the GCC/Clang type here
__extension__ typedef __int128 i128;
using cell = compact_reference_array::cell;

enum : std::uint32_t {
    cell_spilled = 1u,
    cell_saw_not_negative_zero = 2u,  // a term other than -0.0 (superaccumulator's non_negative_zero_seen_)
    cell_saw_not_positive_zero = 4u,  // a term other than +0.0
    cell_saw_nonzero = 8u,            // a term other than ±0.0 (the abs_sum's "not +0.0")
    cell_local_spill = 16u,           // builders only: spilled into a thread's own list (spill_list, finish_cells)
};

constexpr int headroom_bits = 126;  // abs < 2^126 (file comment)

u128 abs_of(const cell& c) noexcept { return (u128{c.abs_hi} << 64) | c.abs_lo; }
i128 sum_of(const cell& c) noexcept { return static_cast<i128>((u128{c.sum_hi} << 64) | c.sum_lo); }
void store(cell& c, u128 a, i128 s) noexcept {
    c.abs_lo = static_cast<std::uint64_t>(a);
    c.abs_hi = static_cast<std::uint64_t>(a >> 64);
    const u128 us = static_cast<u128>(s);
    c.sum_lo = static_cast<std::uint64_t>(us);
    c.sum_hi = static_cast<std::uint64_t>(us >> 64);
}
int bit_width128(u128 a) noexcept {
    const auto hi = static_cast<std::uint64_t>(a >> 64);
    return hi != 0 ? 64 + std::bit_width(hi) : std::bit_width(static_cast<std::uint64_t>(a));
}

// The cases of add_finite below other than the common one (the cell's first non-zero term, a term below the cell's
// exponent, a span too wide), out of line so that the common case inlines into the builders' loops. m is odd.
[[gnu::noinline]] bool add_finite_rare(cell& c, bool negative, std::uint64_t m, int e) noexcept {
    if ((c.abs_lo | c.abs_hi) == 0) {  // the first non-zero term (then sum = 0 too)
        c.exponent = e;
        store(c, u128{m}, negative ? -static_cast<i128>(m) : static_cast<i128>(m));
        return true;
    }
    if (e >= c.exponent) return false;  // d + bitwidth(m) > 125 (add_finite takes every other e >= exponent)
    u128 a = abs_of(c);
    i128 s = sum_of(c);
    const int d = c.exponent - e;
    if (d > headroom_bits - 1 || bit_width128(a) + d > headroom_bits - 1) return false;
    a <<= d;
    s = static_cast<i128>(static_cast<u128>(s) << d);
    a += u128{m};  // a < 2^125 and m < 2^53: no wrap
    if ((a >> headroom_bits) != 0) return false;
    s += negative ? -static_cast<i128>(m) : static_cast<i128>(m);
    c.exponent = e;
    store(c, a, s);
    return true;
}

// Adds (negative ? -1 : 1)·m·2^e, m != 0, to a compact cell; false (cell unchanged) when the invariant would break.
// The common case — a non-empty cell and e >= its exponent with d + bitwidth(m) <= 125 — runs without a branch on
// the data: t = m·2^d < 2^125, abs += t, and sum += t XOR-negated (two's complement: sum + (t ^ -1) + 1 = sum - t).
[[gnu::always_inline]] inline bool add_finite(cell& c, bool negative, std::uint64_t m, int e) noexcept {
    const int zeros = std::countr_zero(m);  // keep the exponent as high as the terms allow
    m >>= zeros;
    e += zeros;
    const int d = e - c.exponent;
    // A negative d becomes at least 2^31 as a 32-bit unsigned, summed in 64 bits (no wrap): one comparison for
    // d >= 0 and d + bitwidth(m) <= 125.
    const std::uint64_t span = std::uint64_t{static_cast<std::uint32_t>(d)} + static_cast<unsigned>(std::bit_width(m));
    if ((c.abs_lo | c.abs_hi) == 0 || span > headroom_bits - 1)
        return add_finite_rare(c, negative, m, e);
    // In 64-bit halves on the cell itself (a 128-bit copy through memory stalls store forwarding).
    const std::uint64_t t_lo = d < 64 ? m << d : 0;
    const std::uint64_t t_hi = d == 0 ? 0 : (d < 64 ? m >> (64 - d) : m << (d - 64));
    std::uint64_t lo;
    const std::uint64_t carry = __builtin_add_overflow(c.abs_lo, t_lo, &lo) ? 1 : 0;
    const std::uint64_t hi = c.abs_hi + t_hi + carry;  // < 2^127: no wrap
    if ((hi >> (headroom_bits - 64)) != 0) return false;
    c.abs_lo = lo;
    c.abs_hi = hi;
    const std::uint64_t flip = 0 - static_cast<std::uint64_t>(negative);  // all ones for a negative term
    std::uint64_t sum_lo;
    const std::uint64_t k1 = __builtin_add_overflow(c.sum_lo, t_lo ^ flip, &sum_lo) ? 1 : 0;
    const std::uint64_t k2 = __builtin_add_overflow(sum_lo, flip & 1, &sum_lo) ? 1 : 0;
    c.sum_lo = sum_lo;
    c.sum_hi += (t_hi ^ flip) + k1 + k2;  // wraps exactly as the signed 128-bit sum does
    return true;
}

// ---- builder form ----------------------------------------------------------------------------------------------
// While a builder runs, a compact cell holds the positive and negative parts of its terms instead (Step 2' of
// docs/algorithms/compact-reference-array.md):
//   P = Σ_{t > 0} t = (abs_hi:abs_lo)·2^exponent,  N = Σ_{t < 0} |t| = (sum_hi:sum_lo)·2^exponent,  P, N < 2^125,
// so each term is one 128-bit addition into the part its sign selects, and finish_cells turns a cell into the
// finished form above: Σt = P - N, Σ|t| = P + N < 2^126 (the same headroom). The empty cell is all zeros in both
// forms; cell_saw_nonzero tells whether P + N is 0 without reading the parts.
constexpr int part_headroom_bits = 125;  // P, N < 2^125
static_assert(2 * (u128{1} << part_headroom_bits) <= (u128{1} << headroom_bits), "P + N within the finished headroom");

u128 negative_part_of(const cell& c) noexcept { return (u128{c.sum_hi} << 64) | c.sum_lo; }
void store_parts(cell& c, u128 p, u128 n) noexcept {
    c.abs_lo = static_cast<std::uint64_t>(p);
    c.abs_hi = static_cast<std::uint64_t>(p >> 64);
    c.sum_lo = static_cast<std::uint64_t>(n);
    c.sum_hi = static_cast<std::uint64_t>(n >> 64);
}
// Builder form -> finished form: exact (P, N < 2^125, so P + N < 2^126 and P - N fits a signed 128-bit word).
void finish_parts(cell& c) noexcept {
    const u128 p = abs_of(c), n = negative_part_of(c);
    store(c, p + n, static_cast<i128>(p - n));
}

// A finished builder cell at the highest exponent its value allows (Step D4 of
// docs/algorithms/compact-reference-array.md): sum and abs shifted right by their common trailing zero bits, so the
// cell is a function of Σt and Σ|t| alone, whichever path (dense or one by one, any thread count) built it.
void normalize(cell& c) noexcept {
    const u128 a = abs_of(c);
    const i128 s = sum_of(c);
    const u128 bits = a | static_cast<u128>(s);
    if (bits == 0) return;  // no non-zero term: the exponent is untouched (0)
    const auto lo = static_cast<std::uint64_t>(bits);
    const int k = lo != 0 ? std::countr_zero(lo) : 64 + std::countr_zero(static_cast<std::uint64_t>(bits >> 64));
    if (k == 0) return;
    c.exponent += k;
    store(c, a >> k, s >> k);  // exact: both are multiples of 2^k (>> of a negative i128 is arithmetic)
}

// The rare cases of add_part, as add_finite_rare: the first non-zero term, a term below the exponent (both parts
// shifted up by d), a span too wide (false). Every check is exact — false exactly when a part would reach 2^125 — so
// a cell spills exactly when its terms' parts do not fit (P and N only grow, the exponent only falls): whatever the
// order of the terms, and whether they were added one by one or as merged partial cells (merge_parts).
[[gnu::noinline]] bool add_part_rare(cell& c, bool negative, std::uint64_t m, int e) noexcept {
    if ((c.state & cell_saw_nonzero) == 0) {  // the first non-zero term: both parts are 0
        c.exponent = e;
        store_parts(c, negative ? 0 : u128{m}, negative ? u128{m} : 0);
        return true;
    }
    if (e >= c.exponent) return false;  // d + bitwidth(m) > 125 (add_part takes every other e >= exponent)
    u128 p = abs_of(c), n = negative_part_of(c);
    const int d = c.exponent - e;
    if (d > part_headroom_bits || std::max(bit_width128(p), bit_width128(n)) + d > part_headroom_bits) return false;
    p <<= d;  // < 2^125
    n <<= d;
    u128& part = negative ? n : p;
    part += u128{m};  // < 2^125 + 2^53: no wrap
    if ((part >> part_headroom_bits) != 0) return false;
    c.exponent = e;
    store_parts(c, p, n);
    return true;
}

// Adds (negative ? -1 : 1)·m·2^e, m != 0, to a cell in builder form; false (cell unchanged) when a part would reach
// 2^125. The common case (e >= exponent, d + bitwidth(m) <= 125: t = m·2^d < 2^125) is one 128-bit addition into the
// part the sign selects (an address chosen without a branch) and one comparison.
[[gnu::always_inline]] inline bool add_part(cell& c, bool negative, std::uint64_t m, int e) noexcept {
    const int zeros = std::countr_zero(m);
    m >>= zeros;
    e += zeros;
    const int d = e - c.exponent;
    const std::uint64_t span = std::uint64_t{static_cast<std::uint32_t>(d)} + static_cast<unsigned>(std::bit_width(m));
    if ((c.state & cell_saw_nonzero) == 0 || span > part_headroom_bits) return add_part_rare(c, negative, m, e);
    const std::uint64_t t_lo = d < 64 ? m << d : 0;
    const std::uint64_t t_hi = d == 0 ? 0 : (d < 64 ? m >> (64 - d) : m << (d - 64));
    // The part's address as arithmetic on the sign (a select of two pointers may compile to a branch, mispredicted
    // on random signs); stores through uint64_t (char stores would alias every object the loop reads).
    static_assert(offsetof(cell, abs_hi) == offsetof(cell, abs_lo) + 8 && offsetof(cell, sum_hi) == offsetof(cell, sum_lo) + 8);
    const auto step = static_cast<std::uintptr_t>(negative) * (offsetof(cell, sum_lo) - offsetof(cell, abs_lo));
    auto* const part_lo_word = reinterpret_cast<std::uint64_t*>(reinterpret_cast<std::uintptr_t>(&c.abs_lo) + step);
    auto* const part_hi_word = reinterpret_cast<std::uint64_t*>(reinterpret_cast<std::uintptr_t>(&c.abs_hi) + step);
    const std::uint64_t part_lo = *part_lo_word, part_hi = *part_hi_word;
    std::uint64_t lo;
    const std::uint64_t carry = __builtin_add_overflow(part_lo, t_lo, &lo) ? 1 : 0;
    const std::uint64_t hi = part_hi + t_hi + carry;  // < 2^126: no wrap
    if ((hi >> (part_headroom_bits - 64)) != 0) return false;
    *part_lo_word = lo;
    *part_hi_word = hi;
    return true;
}

// The superaccumulator pair equal to a compact cell (value, term count, signed-zero flags).
void rebuild(const cell& c, superaccumulator& sum, superaccumulator& abs_sum) noexcept {
    const i128 s = sum_of(c);
    const bool negative = s < 0;
    const u128 ms = negative ? -static_cast<u128>(s) : static_cast<u128>(s);
    const u128 a = abs_of(c);
    if (ms != 0) {
        sum.add_scaled(negative, static_cast<std::uint64_t>(ms), c.exponent);
        sum.add_scaled(negative, static_cast<std::uint64_t>(ms >> 64), c.exponent + 64);
    }
    if (a != 0) {
        abs_sum.add_scaled(false, static_cast<std::uint64_t>(a), c.exponent);
        abs_sum.add_scaled(false, static_cast<std::uint64_t>(a >> 64), c.exponent + 64);
    }
    sum.note_terms(c.count, (c.state & cell_saw_not_negative_zero) != 0, (c.state & cell_saw_not_positive_zero) != 0);
    abs_sum.note_terms(c.count, c.count > 0, (c.state & cell_saw_nonzero) != 0);
}

// Rounds the compact value sum·2^exponent (non-zero) to f in `mode`.
std::uint64_t round_compact(const cell& c, const format_info& f, rounding mode) noexcept {
    const i128 s = sum_of(c);
    const bool negative = s < 0;
    const u128 m = negative ? -static_cast<u128>(s) : static_cast<u128>(s);
    const int width = bit_width128(m);
    if (width <= 64) return detail::encode(f, negative, static_cast<std::uint64_t>(m), c.exponent, false, mode);
    const int shift = width - 64;
    const bool sticky = (m & ((u128{1} << shift) - 1)) != 0;
    return detail::encode(f, negative, static_cast<std::uint64_t>(m >> shift), c.exponent + shift, sticky, mode);
}

// Adds one term (raw bits of f) to a compact cell (finished form, or builder form when `parts`): true when done,
// false (cell unchanged) for an Inf or NaN term or one the cell cannot take (the caller spills). Inlined with a
// constant f, it decodes with the format's constants.
template <bool parts = false>
[[gnu::always_inline]] inline bool try_add(cell& c, std::uint64_t bits, const format_info& f) noexcept {
    const int frac_bits = f.precision - 1;
    const std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    const std::uint32_t special = f.special_exponent_field();
    const auto field = static_cast<std::uint32_t>((bits >> frac_bits) & special);
    if (field == special) return false;
    const std::uint64_t frac = bits & frac_mask;
    const bool negative = ((bits >> (f.storage_bits - 1)) & 1u) != 0;
    if (field == 0 && frac == 0) {  // ±0.0: a term, and the signed-zero flags
        ++c.count;
        c.state |= negative ? cell_saw_not_positive_zero : cell_saw_not_negative_zero;
        return true;
    }
    const std::uint64_t m = field == 0 ? frac : (frac | (std::uint64_t{1} << frac_bits));
    const int e = (field == 0 ? 1 : static_cast<int>(field)) - f.emax - frac_bits;
    if (!(parts ? add_part(c, negative, m, e) : add_finite(c, negative, m, e))) return false;
    ++c.count;
    c.state |= cell_saw_not_negative_zero | cell_saw_not_positive_zero | cell_saw_nonzero;
    return true;
}

// Adds a term to the superaccumulator pair of a spilled element (Σt, and |t| to Σ|t|, as add_sum_and_abs).
void add_to_pair(compact_reference_array::spill& sp, std::uint64_t bits, const format_info& f) noexcept {
    sp.sum.add_bits(f, bits);
    sp.abs_sum.add_bits(f, bits & ~(std::uint64_t{1} << (f.storage_bits - 1)));
}

// Moves a compact cell (finished form) to a new pair (Step 3 of docs/algorithms/compact-reference-array.md).
std::unique_ptr<compact_reference_array::spill> spill_cell(cell& c) {
    auto sp = std::make_unique<compact_reference_array::spill>();
    rebuild(c, sp->sum, sp->abs_sum);
    // The pair holds the flags and the value from now on: the cell keeps only n_i, so a spilled element's cell is
    // the same whichever terms came before the spill (the builders' merged partial cells rely on it).
    c.state = cell_spilled;
    c.exponent = 0;
    c.sum_lo = c.sum_hi = c.abs_lo = c.abs_hi = 0;
    return sp;
}

// Where a spilling cell's new pair goes: the array's own list (tag 0), or, on a builder thread, that thread's list
// (tag = (thread + 1) << 48 in the cell's sum_lo, and cell_local_spill), renumbered by finish_cells. A cell spilled
// before the threads started keeps its pair in the array's list (`shared`, not resized while they run).
struct spill_list {
    std::vector<compact_reference_array::spill>* shared = nullptr;
    std::vector<compact_reference_array::spill>* own = nullptr;  // == shared without threads
    std::uint64_t tag = 0;
    static constexpr std::uint64_t index_mask = (std::uint64_t{1} << 48) - 1;
    compact_reference_array::spill& pair(const cell& c) const noexcept {
        return (c.state & cell_local_spill) ? (*own)[c.sum_lo & index_mask] : (*shared)[c.sum_lo];
    }
    // Moves c (finished form, not spilled) to a new pair in `own`.
    void spill(cell& c) const {
        std::unique_ptr<compact_reference_array::spill> sp = spill_cell(c);
        own->push_back(std::move(*sp));
        c.sum_lo = tag | (own->size() - 1);
        if (tag != 0) c.state |= cell_local_spill;
    }
    // Spills c (finished form), then adds the term to its pair; or adds it to the pair of a spilled c.
    void add(cell& c, std::uint64_t bits, const format_info& f) const {
        if ((c.state & cell_spilled) == 0) spill(c);
        ++c.count;
        add_to_pair(pair(c), bits, f);
    }
};

// Adds the parts of `from` into `to`, both in builder form and not spilled: false (to unchanged) when a part of the
// sum would reach 2^125. The result is the cell the terms of both would give one by one (Step T3 of
// docs/algorithms/compact-reference-array.md): the exponent is the least of the two, each part the exact sum.
bool merge_parts(cell& to, const cell& from) noexcept {
    if (from.state & cell_saw_nonzero) {
        if ((to.state & cell_saw_nonzero) == 0) {
            to.exponent = from.exponent;
            to.abs_lo = from.abs_lo, to.abs_hi = from.abs_hi, to.sum_lo = from.sum_lo, to.sum_hi = from.sum_hi;
        } else {
            const int e = std::min(to.exponent, from.exponent);
            u128 parts[4] = {abs_of(to), negative_part_of(to), abs_of(from), negative_part_of(from)};
            const int shift[2] = {to.exponent - e, from.exponent - e};
            for (int k = 0; k < 4; ++k) {
                if (parts[k] == 0) continue;
                if (shift[k / 2] > part_headroom_bits || bit_width128(parts[k]) + shift[k / 2] > part_headroom_bits)
                    return false;
                parts[k] <<= shift[k / 2];  // < 2^125
            }
            const u128 p = parts[0] + parts[2], n = parts[1] + parts[3];  // < 2^126: no wrap
            if (((p | n) >> part_headroom_bits) != 0) return false;
            to.exponent = e;
            store_parts(to, p, n);
        }
    }
    to.count += from.count;
    to.state |= from.state;
    return true;
}

// Adds the state of `from` (builder form, or spilled with its pair `from_pair`) into `to` (builder form, or spilled
// with its pair in `spills`): merged parts when they fit, else both as exact superaccumulator pairs.
void merge_cell(cell& to, const cell& from, const compact_reference_array::spill* from_pair, const spill_list& spills) {
    if (from.count == 0) return;  // no terms at all (count counts zeros and specials too)
    const bool both_compact = ((to.state | from.state) & cell_spilled) == 0;
    if (both_compact && merge_parts(to, from)) return;
    if ((to.state & cell_spilled) == 0) {
        finish_parts(to);
        spills.spill(to);
    }
    compact_reference_array::spill& pair = spills.pair(to);
    if (from.state & cell_spilled) {
        pair.sum.merge(from_pair->sum);
        pair.abs_sum.merge(from_pair->abs_sum);
    } else {
        cell finished = from;
        finish_parts(finished);
        compact_reference_array::spill rebuilt;
        rebuild(finished, rebuilt.sum, rebuilt.abs_sum);
        pair.sum.merge(rebuilt.sum);
        pair.abs_sum.merge(rebuilt.abs_sum);
    }
    to.count += from.count;
}

// A cell and, when it is spilled, its own pair: a scan's running state.
struct running_state {
    cell c;
    std::unique_ptr<compact_reference_array::spill> pair;
    void add(std::uint64_t bits, const format_info& f) {
        if ((c.state & cell_spilled) == 0 && try_add(c, bits, f)) return;
        if ((c.state & cell_spilled) == 0) pair = spill_cell(c);
        ++c.count;
        add_to_pair(*pair, bits, f);
    }
    void assign(const cell& from, const compact_reference_array::spill* from_pair) {
        c = from;
        if (c.state & cell_spilled) pair = std::make_unique<compact_reference_array::spill>(*from_pair);
        else pair.reset();
    }
};

}  // namespace

// A scan's references: the terms as given and, per line, the state before every scan_block-th element.
struct compact_reference_array::scan_storage {
    bool inclusive = true;
    bool along_rows = true;     // lines are rows (rank 1, or axis 1); else columns
    std::size_t lines = 0, length = 0, cols = 0;
    std::size_t blocks = 0;     // checkpoints per line: ceil(length / scan_block)
    std::vector<std::uint8_t> terms;   // the terms' bytes (storage_bits / 8 each), row-major as given
    cell_vector checkpoints;           // [line·blocks + b]: the state before element b·scan_block of the line
    std::vector<spill> pairs;          // of the spilled checkpoints (cell.sum_lo indexes it)

    std::size_t line_of(std::size_t i) const noexcept { return along_rows ? i / cols : i % cols; }
    std::size_t position_of(std::size_t i) const noexcept { return along_rows ? i % cols : i / cols; }
    std::size_t index_of(std::size_t line, std::size_t k) const noexcept {
        return along_rows ? line * cols + k : k * cols + line;
    }
    std::uint64_t bits_at(std::size_t index, int storage_bits) const noexcept {
        const std::uint8_t* p = terms.data() + index * static_cast<std::size_t>(storage_bits / 8);
        switch (storage_bits) {
            case 64: { std::uint64_t b; std::memcpy(&b, p, 8); return b; }
            case 32: { std::uint32_t b; std::memcpy(&b, p, 4); return b; }
            default: { std::uint16_t b; std::memcpy(&b, p, 2); return b; }
        }
    }
    // Number of terms of element k of a line: its prefix.
    std::uint64_t count_at(std::size_t k) const noexcept { return inclusive ? k + 1 : k; }
};

// At 32 MiB and more: 2 MiB-aligned storage with MADV_HUGEPAGE (Linux), so a 10^7-element array takes ~240 faults
// instead of ~120,000; smaller arrays use operator new.
constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
constexpr std::size_t huge_page_threshold = std::size_t{32} << 20;  // rounding up wastes at most 1/16

template <class T>
T* compact_reference_array::large_array_allocator<T>::allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < huge_page_threshold) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    void* p = std::aligned_alloc(huge_page_bytes, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without huge pages the array still works
#endif
    return static_cast<T*>(p);
}

template <class T>
void compact_reference_array::large_array_allocator<T>::deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < huge_page_threshold) ::operator delete(p);
    else std::free(p);
}

template struct compact_reference_array::large_array_allocator<compact_reference_array::cell>;
template struct compact_reference_array::large_array_allocator<double>;         // covers()' decisions
template struct compact_reference_array::large_array_allocator<std::uint8_t>;

compact_reference_array::compact_reference_array(std::vector<std::size_t> shape, dtype term_format)
    : shape_(std::move(shape)), term_format_(term_format) {
    if (shape_.empty() || shape_.size() > 2)
        throw std::invalid_argument("compact_reference_array: shape of rank " + std::to_string(shape_.size()) +
                                    "; pass {n} or {rows, cols}");
    std::size_t n = 1;
    for (std::size_t extent : shape_) {
        if (extent != 0 && n > std::numeric_limits<std::size_t>::max() / sizeof(cell) / extent)
            throw std::invalid_argument("compact_reference_array: shape too large");
        n *= extent;
    }
    size_ = n;
    cells_.assign(n, cell{});
}

void compact_reference_array::set_scan(std::vector<std::size_t> shape, dtype term_format,
                                       std::unique_ptr<scan_storage> scan) {
    shape_ = std::move(shape);
    term_format_ = term_format;
    size_ = scan->lines * scan->length;
    cells_ = cell_vector();
    spills_.clear();
    scan_ = std::move(scan);
    summaries_.reset();
}

void compact_reference_array::check_format(const format_info& f) const {
    if (f.id != term_format_)
        throw std::invalid_argument("compact_reference_array: a " + std::string(f.name) + " term for an array of " +
                                    std::string(info(term_format_).name) + " terms; convert it first");
}

void compact_reference_array::check_index(std::size_t i) const {
    if (i >= size_)
        throw std::out_of_range("compact_reference_array: element " + std::to_string(i) + " of " +
                                std::to_string(size_));
}

void compact_reference_array::add_bits(std::size_t i, std::uint64_t bits) {
    check_index(i);
    if (scan_) throw std::logic_error("compact_reference_array: a scan's references take no more terms");
    check_no_structures();
    if (summaries_.data) summaries_.reset();  // kept filter summaries describe the array before this term
    cell& c = cells_[i];
    const format_info& f = info(term_format_);
    if ((c.state & cell_spilled) == 0 && try_add(c, bits, f)) return;
    spill_list{&spills_, &spills_}.add(c, bits, f);
}

std::uint64_t compact_reference_array::count(std::size_t i) const {
    check_index(i);
    if (scan_) return scan_->count_at(scan_->position_of(i));
    return cells_[i].count;
}

std::pair<std::uint64_t, std::uint64_t> compact_reference_array::count_range() const noexcept {
    if (size_ == 0) return {0, 0};
    if (scan_) return {scan_->count_at(0), scan_->count_at(scan_->length - 1)};
    if (summaries_.ready.load(std::memory_order_acquire)) return summaries_.counts;
    std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
    for (const cell& c : cells_) {
        lo = std::min(lo, c.count);
        hi = std::max(hi, c.count);
    }
    return {lo, hi};
}

std::size_t compact_reference_array::spilled() const noexcept { return scan_ ? scan_->pairs.size() : spills_.size(); }

namespace {
std::uint64_t round_state(const cell& c, const compact_reference_array::spill* pair, const format_info& f,
                          rounding mode) {
    if (c.state & cell_spilled) return pair->sum.round_bits(f, mode);
    if (sum_of(c) != 0) return round_compact(c, f, mode);
    // Exact zero (IEEE 754-2019 §6.3, as superaccumulator::round_bits): the empty sum is +0.0 in every mode; under
    // RD any other exact zero is -0.0 unless every term was +0.0; otherwise -0.0 only when every term was -0.0.
    const bool all_negative_zero = c.count > 0 && (c.state & cell_saw_not_negative_zero) == 0;
    const bool all_positive_zero = c.count > 0 && (c.state & cell_saw_not_positive_zero) == 0;
    const bool negative_zero = mode == rounding::downward ? (c.count > 0 && !all_positive_zero) : all_negative_zero;
    return std::uint64_t{negative_zero} << (f.storage_bits - 1);
}
}  // namespace

// ---- reader ----------------------------------------------------------------------------------------------------

struct compact_reference_array::reader::cursor {
    running_state state;
    std::size_t next = 0;  // the position along the line whose state `state` is about to become (0: unset)
    bool valid = false;
};

// Lines of a scan followed with a cursor each (48 bytes + a pair when spilled); beyond this many, replay.
constexpr std::size_t max_cursors = std::size_t{1} << 16;

compact_reference_array::reader::reader(const compact_reference_array& refs, bool follow_lines)
    : refs_(refs), scratch_(std::make_unique<cursor>()) {
    if (follow_lines && refs.scan_ && refs.scan_->lines > 1 && refs.scan_->lines <= max_cursors)
        cursors_.resize(refs.scan_->lines);
}
compact_reference_array::reader::~reader() = default;

const compact_reference_array::cell& compact_reference_array::reader::state(std::size_t i) {
    refs_.check_index(i);
    if (!refs_.scan_) return refs_.cells_[i];
    const scan_storage& sc = *refs_.scan_;
    const format_info& f = info(refs_.term_format_);
    std::size_t line, k;
    if (last_ != nullptr && i == last_index_ + 1 && sc.along_rows && last_position_ + 1 < sc.length) {
        line = last_line_;  // the next element of the same row: no division
        k = last_position_ + 1;
    } else {
        line = sc.line_of(i);
        k = sc.position_of(i);
    }
    last_index_ = i;
    last_line_ = line;
    last_position_ = k;
    const std::size_t want = k + (sc.inclusive ? 1 : 0);  // terms 0 .. want-1 of the line
    cursor& cur = cursors_.empty() ? *scratch_ : cursors_[line];
    if (!cur.valid || cur.next > want || want - cur.next > scan_block) {
        const std::size_t b = std::min(want / scan_block, sc.blocks == 0 ? 0 : sc.blocks - 1);
        const cell& cp = sc.checkpoints[line * sc.blocks + b];
        cur.state.assign(cp, (cp.state & cell_spilled) ? &sc.pairs[cp.sum_lo] : nullptr);
        cur.next = b * scan_block;
        cur.valid = true;
    }
    for (; cur.next < want; ++cur.next) cur.state.add(sc.bits_at(sc.index_of(line, cur.next), f.storage_bits), f);
    last_ = &cur;
    return cur.state.c;
}

const compact_reference_array::spill& compact_reference_array::reader::pair(const cell& c) const {
    if (!refs_.scan_) return refs_.spills_[c.sum_lo];
    (void)c;  // a scan's spilled state lives in the cursor that returned it
    return *last_->state.pair;
}

namespace {

// RD and RU in binary64 of (negative ? -m : m)·2^exponent, with integer operations only (the encoding of a positive
// double grows with its value).
void enclose_scaled(bool negative, u128 m, int exponent, double& lo, double& hi) noexcept {
    if (m == 0) {
        lo = hi = 0;
        return;
    }
    const int width = bit_width128(m);
    const int top = exponent + width - 1;  // |value| in [2^top, 2^(top+1))
    if (top >= binary64_info.emin && top <= binary64_info.emax) {
        // A normal binary64 number: its 53 leading bits truncated (RZ of |value|), and one ulp more when bits were
        // cut off.
        const int cut = width - binary64_info.precision;
        const u128 kept = cut > 0 ? m >> cut : m << -cut;
        const bool inexact = cut > 0 && (m & ((u128{1} << cut) - 1)) != 0;
        const std::uint64_t field = static_cast<std::uint64_t>(top + binary64_info.emax);
        const std::uint64_t rz = (field << 52) | (static_cast<std::uint64_t>(kept) & ((std::uint64_t{1} << 52) - 1));
        const double small = std::bit_cast<double>(rz), large = std::bit_cast<double>(rz + (inexact ? 1 : 0));
        lo = negative ? -large : small;
        hi = negative ? -small : large;
        return;
    }
    const int shift = width > 64 ? width - 64 : 0;
    const bool sticky = shift > 0 && (m & ((u128{1} << shift) - 1)) != 0;
    const auto lead = static_cast<std::uint64_t>(m >> shift);
    lo = std::bit_cast<double>(detail::encode(binary64_info, negative, lead, exponent + shift, sticky,
                                              rounding::downward));
    hi = std::bit_cast<double>(detail::encode(binary64_info, negative, lead, exponent + shift, sticky,
                                              rounding::upward));
}

}  // namespace

compact_reference_array::filter_facts compact_reference_array::reader::facts(std::size_t i) {
    filter_facts out;
    const cell& c = state(i);
    if (c.state & cell_spilled) return out;
    out.count = c.count;
    const i128 s = sum_of(c);
    enclose_scaled(s < 0, s < 0 ? -static_cast<u128>(s) : static_cast<u128>(s), c.exponent, out.s_lo, out.s_hi);
    enclose_scaled(false, abs_of(c), c.exponent, out.w_lo, out.w_hi);
    out.usable = true;
    return out;
}

bool compact_reference_array::reader::error_enclosure(std::size_t i, double r, double& lo, double& hi) {
    const cell& c = state(i);
    if (c.state & cell_spilled) return false;
    // r = ±m·2^q exactly (binary64: q >= -1074), s = sum·2^exponent; both over e0 = min(q, exponent), each below
    // 2^125 there, so their difference fits a signed 128-bit word.
    const auto bits = std::bit_cast<std::uint64_t>(r);
    const auto field = static_cast<int>((bits >> 52) & 0x7ff);
    if (field == 0x7ff) return false;
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    const std::uint64_t m = field == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    const int q = (field == 0 ? 1 : field) - 1075;
    const i128 s = sum_of(c);
    const u128 s_magnitude = s < 0 ? -static_cast<u128>(s) : static_cast<u128>(s);
    constexpr int fits = 125;
    const int e0 = m == 0 ? c.exponent : s_magnitude == 0 ? q : std::min(q, c.exponent);  // a zero needs no shift
    if (m != 0 && std::bit_width(m) + (q - e0) > fits) return false;
    if (s_magnitude != 0 && bit_width128(s_magnitude) + (c.exponent - e0) > fits) return false;
    const i128 r_scaled = m == 0 ? i128{0} : static_cast<i128>(u128{m} << (q - e0));
    const i128 s_scaled = s_magnitude == 0 ? i128{0} : static_cast<i128>(s_magnitude << (c.exponent - e0)) * (s < 0 ? -1 : 1);
    const i128 d = ((bits >> 63) != 0 ? -r_scaled : r_scaled) - s_scaled;
    enclose_scaled(false, d < 0 ? -static_cast<u128>(d) : static_cast<u128>(d), e0, lo, hi);
    return true;
}

// The filter summaries (covers.cpp, docs/algorithms/compact-reference-array.md): reader::facts of every element,
// kept in 24 bytes. An element whose enclosure ends are not equal or adjacent doubles (never expected), or whose
// count does not fit beside the flags, is marked unusable: the exact path decides it, so a summary never misleads.
const compact_reference_array::filter_summary* compact_reference_array::filter_summaries() const {
    if (const filter_summary* kept = summaries_.ready.load(std::memory_order_acquire)) return kept;
    const std::lock_guard<std::mutex> lock(summaries_.mutex);
    if (const filter_summary* kept = summaries_.ready.load(std::memory_order_acquire)) return kept;
    auto data = std::make_unique_for_overwrite<filter_summary[]>(size_);
    reader r(*this);
    for (std::size_t i = 0; i < size_; ++i) {
        const filter_facts f = r.facts(i);
        filter_summary& e = data[i];
        e.s_lo = f.s_lo;
        e.w_lo = f.w_lo;
        const std::uint64_t s_inexact = f.s_hi != f.s_lo ? 1 : 0, w_inexact = f.w_hi != f.w_lo ? 1 : 0;
        e.word = (f.count & filter_summary::count_mask) | (s_inexact ? filter_summary::s_inexact : 0) |
                 (w_inexact ? filter_summary::w_inexact : 0);
        // The reader's RU must be what the facts say, bit for bit (a zero of either sign aside).
        auto same = [](double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
                                                    (a == 0 && b == 0); };
        const bool fits = same(filter_summary::upper(f.s_lo, s_inexact), f.s_hi) &&
                          same(filter_summary::upper(f.w_lo, w_inexact), f.w_hi);
        if (!f.usable || !fits || f.count > filter_summary::count_mask || std::isnan(f.s_lo) || std::isnan(f.w_lo))
            e.word |= filter_summary::unusable;
    }
    summaries_.data = std::move(data);
    summaries_.counts = count_range();
    summaries_.ready.store(summaries_.data.get(), std::memory_order_release);
    return summaries_.data.get();
}

std::uint64_t compact_reference_array::reader::nearest_bits(std::size_t i, const format_info& f, rounding mode) {
    const cell& c = state(i);
    return round_state(c, (c.state & cell_spilled) ? &pair(c) : nullptr, f, mode);
}

// ---- queries -----------------------------------------------------------------------------------------------------

void compact_reference_array::element(std::size_t i, reference& out) const {
    reader r(*this, false);
    const cell& c = r.state(i);
    out = reference{};
    out.count = c.count;
    out.term_format = term_format_;
    if (c.state & cell_spilled) {
        out.sum = r.pair(c).sum;
        out.abs_sum = r.pair(c).abs_sum;
    } else {
        rebuild(c, out.sum, out.abs_sum);
    }
    out.cache_enclosures();
    append_structures(i, out);
}

void compact_reference_array::element(std::size_t i, const standard& model, reference& out) const {
    element(i, out);
    if (!model.structured || !structures_.names.empty()) {  // kept structures: element() gave their bounds
        if (model.structured) {
            const std::string name = model.structure();
            std::erase_if(out.structures, [&](const structure_bound& b) { return b.structure != name; });
        }
        return;
    }
    structure_bound b;
    b.structure = model.structure();
    b.error.fill(std::numeric_limits<double>::infinity());
    b.leaves = out.count;
    out.structures.assign(1, b);
}

reference compact_reference_array::element(std::size_t i) const {
    reference r;
    element(i, r);
    return r;
}

compact_reference_array compact_reference_array::gather(std::span<const std::size_t> index) const {
    compact_reference_array out({index.size()}, term_format_);
    reader r(*this);
    for (std::size_t k = 0; k < index.size(); ++k) {
        const cell& c = r.state(index[k]);
        cell& to = out.cells_[k];
        to = c;
        if (c.state & cell_spilled) {
            out.spills_.push_back(r.pair(c));
            to.sum_lo = out.spills_.size() - 1;
        }
    }
    if (!structures_.names.empty()) {  // the kept structured bounds of the gathered elements, column by column
        out.structures_ = kept_structures{structures_.names, structures_.column_of, structures_.columns, {}};
        const std::size_t columns = structures_.names.size() * structures_.columns;
        out.structures_.bounds.resize(columns * index.size());
        for (std::size_t c = 0; c < columns; ++c)
            for (std::size_t k = 0; k < index.size(); ++k)
                out.structures_.bounds[c * index.size() + k] = structures_.bounds[c * size_ + index[k]];
    }
    return out;
}

reference_array compact_reference_array::to_array() const {
    reference_array out;
    out.rows = shape_.size() == 2 ? shape_[0] : 1;
    out.cols = shape_.size() == 2 ? shape_[1] : (shape_.empty() ? 0 : shape_[0]);
    out.elements.resize(size_);
    for (std::size_t i = 0; i < size_; ++i) element(i, out.elements[i]);
    return out;
}


std::uint64_t compact_reference_array::nearest_bits(std::size_t i, const format_info& f, rounding mode) const {
    if (!scan_) {
        check_index(i);
        const cell& c = cells_[i];
        return round_state(c, (c.state & cell_spilled) ? &spills_[c.sum_lo] : nullptr, f, mode);
    }
    reader r(*this, false);
    const cell& c = r.state(i);
    return round_state(c, (c.state & cell_spilled) ? &r.pair(c) : nullptr, f, mode);
}

std::string compact_reference_array::exact(std::size_t i) const {
    reader r(*this, false);
    const cell& c = r.state(i);
    if (c.state & cell_spilled) return r.pair(c).sum.to_decimal();
    superaccumulator sum, abs_sum;
    rebuild(c, sum, abs_sum);
    return sum.to_decimal();
}

std::size_t compact_reference_array::memory_bytes() const noexcept {
    std::size_t bytes = cells_.capacity() * sizeof(cell) + spills_.capacity() * sizeof(spill) +
                        shape_.capacity() * sizeof(std::size_t) + structures_.bounds.capacity() * sizeof(double);
    if (scan_) {
        bytes += sizeof(scan_storage) + scan_->terms.capacity() +
                 scan_->checkpoints.capacity() * sizeof(cell) + scan_->pairs.capacity() * sizeof(spill);
    }
    return bytes;
}

// ---------------------------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------------------------

namespace {

// The builders' hot path: x added to element i of `cells` (builder form), decoded with T's constants; Inf, NaN,
// spilled cells and terms that do not fit move the cell to its pair (finished form first: rebuild reads that).
template <floating_format T>
[[gnu::noinline]] void add_term_to_pair(cell& c, std::uint64_t bits, const spill_list& spills) {
    if ((c.state & cell_spilled) == 0) finish_parts(c);
    spills.add(c, bits, format_traits<T>::info);
}
template <floating_format T>
[[gnu::always_inline]] inline void add_term(cell* cells, std::size_t i, T x, const spill_list& spills) {
    using tr = format_traits<T>;
    cell& c = cells[i];
    if ((c.state & cell_spilled) == 0 && try_add<true>(c, tr::to_bits(x), tr::info)) return;
    add_term_to_pair<T>(c, tr::to_bits(x), spills);
}

// Scatters into arrays beyond L2 (10^5 cells are 4.8 MB) also wait on random cell accesses: fetch the cell updated
// prefetch_distance terms ahead early (both lines a 48-byte cell may span). 32 measured best of 8, 16, 32 at 10^6
// cells and on par with 16 at 10^5 (bench_scatter, docs/scatter.md).
constexpr std::size_t prefetch_distance = 32;
inline void prefetch_cell(const cell* cells, std::size_t i) noexcept {
    const char* p = reinterpret_cast<const char*>(cells + i);
    __builtin_prefetch(p, 1);
    __builtin_prefetch(p + sizeof(cell) - 1, 1);
}

// The end of every builder: each cell in builder form turned into the finished form, and the pairs of the threads'
// own lists appended to the array's list in thread order (their cells renumbered). Parallel over the cells with the
// builder's threads; the result does not depend on their number (each cell is converted on its own).
void finish_cells(compact_reference_array& out, std::vector<std::vector<compact_reference_array::spill>>& own,
                  unsigned threads) {
    std::vector<compact_reference_array::spill>& spills = out.spills();
    std::vector<std::uint64_t> base(own.size() + 1, spills.size());
    for (std::size_t k = 0; k < own.size(); ++k) base[k + 1] = base[k] + own[k].size();
    cell* cells = out.cells().data();
    const std::size_t n = out.size();
    auto finish = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            cell& c = cells[i];
            if ((c.state & cell_spilled) == 0) {
                finish_parts(c);
                normalize(c);
            } else if (c.state & cell_local_spill) {
                c.sum_lo = base[(c.sum_lo >> 48) - 1] + (c.sum_lo & spill_list::index_mask);
                c.state &= ~cell_local_spill;
            }
        }
    };
    const std::size_t chunks = detail::chunk_count(n, threads);
    if (chunks <= 1) {
        finish(0, n);
    } else {
        const std::size_t length = detail::chunk_length(n, chunks, 1);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(chunks))
        for (std::size_t k = 0; k < chunks; ++k) finish(std::min(n, k * length), std::min(n, (k + 1) * length));
    }
    spills.reserve(base.back());
    for (auto& list : own)
        for (auto& pair : list) spills.push_back(std::move(pair));
}

// Runs a builder's scatter over `terms` terms on up to `threads` threads (exactref/threads.h), then finishes the
// array. Thread k owns the cells [lo, hi) of the k-th of contiguous ranges (multiples of `align` cells): body(cells,
// lo, hi, spills) adds, in input order, every term whose target lies in [lo, hi) and ignores the others. Each cell
// thus takes the same terms in the same order as on one thread: the same bits for every thread count (the pairs'
// order in spills() aside, which no query sees). Fewer than 2 x min_chunk_terms terms run on the calling thread.
// body must not throw but for std::bad_alloc (rethrown here).
template <class Body>
void run_partitioned(compact_reference_array& out, std::size_t terms, unsigned threads, std::size_t align, Body body) {
    cell* cells = out.cells().data();
    const std::size_t n = out.size();
    align = std::max<std::size_t>(align, 1);
    const std::size_t parts = std::min(detail::chunk_count(terms, threads), std::max<std::size_t>(1, n / align));
    std::vector<std::vector<compact_reference_array::spill>> own;
    if (parts <= 1) {
        body(cells, std::size_t{0}, n, spill_list{&out.spills(), &out.spills()});
    } else {
        const std::size_t width = detail::chunk_length(n, parts, align);
        const std::size_t used = (n + width - 1) / width;
        own.resize(used);
        std::vector<compact_reference_array::spill>& shared = out.spills();
        std::exception_ptr error;
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used))
        for (std::size_t k = 0; k < used; ++k) {
            try {
                body(cells, k * width, std::min(n, (k + 1) * width), spill_list{&shared, &own[k], (k + 1) << 48});
            } catch (...) {
#pragma omp critical(exactref_scatter_error)
                if (!error) error = std::current_exception();
            }
        }
        if (error) std::rethrow_exception(error);
    }
    finish_cells(out, own, static_cast<unsigned>(std::max<std::size_t>(parts, 1)));
}

template <index_type I>
[[noreturn]] void bad_index(const char* function, const char* argument, std::size_t position, I value,
                            std::size_t extent, const char* what_to_do) {
    throw std::invalid_argument(std::string(function) + ": " + argument + "[" + std::to_string(position) + "] = " +
                                std::to_string(value) + " lies outside [0, " + std::to_string(extent) + "); " +
                                what_to_do);
}

void check_length(const char* function, const char* argument, std::size_t got, std::size_t expected,
                  const std::string& because) {
    if (got != expected)
        throw std::invalid_argument(std::string(function) + ": " + argument + " has " + std::to_string(got) +
                                    " elements, expected " + std::to_string(expected) + " (" + because + ")");
}

std::size_t elements_of(const char* function, const char* argument, const array_shape& shape) {
    if (shape.empty() || shape.size() > 2)
        throw std::invalid_argument(std::string(function) + ": " + argument + " has rank " +
                                    std::to_string(shape.size()) + "; pass a shape of rank 1 or 2");
    std::size_t n = 1;
    for (std::size_t e : shape) {
        if (e != 0 && n > std::numeric_limits<std::size_t>::max() / e)
            throw std::invalid_argument(std::string(function) + ": " + argument + "'s shape overflows");
        n *= e;
    }
    return n;
}

std::string shape_text(const array_shape& s) {
    std::string out = "(";
    for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
    return out + (s.size() == 1 ? ",)" : ")");
}

// The least and the largest index (0 and -1 for none) in one pass (vectorized: target_clones).
template <index_type I>
[[gnu::always_inline]] inline std::pair<I, I> index_range_of(const I* p, std::size_t n) noexcept {
    I lo = std::numeric_limits<I>::max(), hi = std::numeric_limits<I>::min();  // constants: GCC vectorizes this
    for (std::size_t i = 0; i < n; ++i) {
        lo = std::min(lo, p[i]);
        hi = std::max(hi, p[i]);
    }
    return n == 0 ? std::pair<I, I>{0, -1} : std::pair<I, I>{lo, hi};
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
std::pair<std::int64_t, std::int64_t> index_range(const std::int64_t* p, std::size_t n) noexcept {
    return index_range_of(p, n);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
std::pair<std::int32_t, std::int32_t> index_range(const std::int32_t* p, std::size_t n) noexcept {
    return index_range_of(p, n);
}

// An index as a cell position: a negative one maps beyond every array (out of range).
template <index_type I>
inline std::size_t cell_index(I v) noexcept {
    return v < 0 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(v);
}

// Adds value(i) to element target(i) of `base` (cells elements, builder form) for i = begin .. end-1, in order,
// prefetching the cell prefetch_distance terms ahead; returns the first i whose target is >= cells (or `none`).
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
template <class Target, class Value>
std::size_t scatter_in_order(cell* base, std::size_t cells, std::size_t begin, std::size_t end, Target& target,
                             Value& value, const spill_list& spills) {
    std::size_t bad = none;
    for (std::size_t i = begin; i < end; ++i) {
        if (i + prefetch_distance < end) {
            const std::size_t ahead = target(i + prefetch_distance);
            if (ahead < cells) prefetch_cell(base, ahead);
        }
        const std::size_t t = target(i);
        if (t < cells) add_term(base, t, value(i), spills);
        else if (bad == none) bad = i;
    }
    return bad;
}

// ---- the dense scatter (Step D of docs/algorithms/compact-reference-array.md) ---------------------------------
// When every finite term of a scatter lies in one window of binades narrow enough that no cell can come near 2^125
// (Step D1), the terms go first into a dense array of 32-byte elements — the positive and negative parts as 128-bit
// integers at one exponent for the whole array, each with its count in the low bits — with one 128-bit addition per
// term and no check, and the array is folded into the cells (Step D3) at the end, or whenever the counts could
// outgrow their bits. Blocks holding an Inf or a NaN take scatter_in_order instead.

// The magnitudes' range in one pass (vectorized: target_clones): the largest magnitude encoding, the least
// non-zero one minus 1 (a zero wraps to the top, so it never is the least) and the least one (0 when a zero is
// among them).
template <class Bits>
struct magnitude_range {
    Bits top = 0, least_minus_one = static_cast<Bits>(~Bits{0}), least = static_cast<Bits>(~Bits{0});
};
typedef std::uint64_t __attribute__((may_alias)) alias64;
typedef std::uint32_t __attribute__((may_alias)) alias32;
typedef std::uint16_t __attribute__((may_alias)) alias16;
template <class Bits, class Alias>
[[gnu::always_inline]] inline magnitude_range<Bits> range_masked(const Alias* p, std::size_t n, Bits mask) {
    Bits top = 0, low = static_cast<Bits>(~Bits{0}), least = static_cast<Bits>(~Bits{0});
    for (std::size_t i = 0; i < n; ++i) {
        const Bits m = static_cast<Bits>(p[i] & mask);
        top = std::max(top, m);
        low = std::min(low, static_cast<Bits>(m - 1));
        least = std::min(least, m);
    }
    return {top, low, least};
}
#define EXACTREF_RANGE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
EXACTREF_RANGE_CLONES magnitude_range<std::uint64_t> range64(const alias64* p, std::size_t n, std::uint64_t m) {
    return range_masked<std::uint64_t>(p, n, m);
}
EXACTREF_RANGE_CLONES magnitude_range<std::uint32_t> range32(const alias32* p, std::size_t n, std::uint32_t m) {
    return range_masked<std::uint32_t>(p, n, m);
}
EXACTREF_RANGE_CLONES magnitude_range<std::uint16_t> range16(const alias16* p, std::size_t n, std::uint16_t m) {
    return range_masked<std::uint16_t>(p, n, m);
}
#undef EXACTREF_RANGE_CLONES
magnitude_range<std::uint64_t> range_any(const void* p, std::size_t n, std::uint64_t m) {
    return range64(static_cast<const alias64*>(p), n, m);
}
magnitude_range<std::uint32_t> range_any(const void* p, std::size_t n, std::uint32_t m) {
    return range32(static_cast<const alias32*>(p), n, m);
}
magnitude_range<std::uint16_t> range_any(const void* p, std::size_t n, std::uint16_t m) {
    return range16(static_cast<const alias16*>(p), n, m);
}

// Step D1: the binades of a scatter's finite non-zero terms, as max(exponent field, 1) (a subnormal's field is 0
// but its unit is that of field 1): field_lo <= max(field, 1) <= field_hi for each. special: an Inf or NaN is among
// them (left out of the range). any: some finite non-zero term was seen (else field_lo = field_hi = 1).
struct term_window {
    int field_lo = 1, field_hi = 1;
    bool special = false, any = false;
    // The window of both (w's terms and these).
    term_window& operator|=(const term_window& w) noexcept {
        if (w.any) {
            field_lo = any ? std::min(field_lo, w.field_lo) : w.field_lo;
            field_hi = any ? std::max(field_hi, w.field_hi) : w.field_hi;
            any = true;
        }
        special = special || w.special;
        return *this;
    }
};
template <floating_format T>
struct window_bits {
    using tr = format_traits<T>;
    using bits_t = typename tr::bits_type;
    static constexpr int frac_bits = tr::info.precision - 1;
    static constexpr auto mask = static_cast<bits_t>(~(std::uint64_t{1} << (tr::info.storage_bits - 1)));
    static constexpr auto special = static_cast<bits_t>(std::uint64_t{tr::info.special_exponent_field()} << frac_bits);
    static constexpr auto least_normal = static_cast<bits_t>(std::uint64_t{1} << frac_bits);
    // The window of a range without Inf or NaN (r.top < special).
    static term_window of(const magnitude_range<bits_t>& r) noexcept {
        term_window w;
        if (r.top == 0) return w;  // no finite non-zero term
        w.any = true;
        w.field_hi = std::max(1, static_cast<int>(r.top >> frac_bits));
        w.field_lo = std::max(1, static_cast<int>(static_cast<bits_t>(r.least_minus_one + 1) >> frac_bits));
        return w;
    }
};
template <floating_format T>
term_window window_of(std::span<const T> xs) {
    using wb = window_bits<T>;
    magnitude_range<typename wb::bits_t> r = range_any(static_cast<const void*>(xs.data()), xs.size(), wb::mask);
    if (r.top < wb::special) return wb::of(r);
    r = {};  // an Inf or a NaN: the range of the others, one by one
    for (const T& x : xs) {
        const auto m = static_cast<typename wb::bits_t>(format_traits<T>::to_bits(x) & wb::mask);
        if (m >= wb::special) continue;
        r.top = std::max(r.top, m);
        r.least_minus_one = std::min(r.least_minus_one, static_cast<typename wb::bits_t>(m - 1));
    }
    term_window w = wb::of(r);
    w.special = true;
    return w;
}

// Step D2: the dense array's layout for one scatter, or use = false. Every finite term t = ±m·2^(f1 - emax -
// frac_bits) (f1 = max(field, 1), m < 2^p) becomes the word w = m·2^(f1 - field_lo + count_bits) + 1, added to the
// part its sign bit selects (+0.0 and -0.0 add only their count); with W = field_hi - field_lo,
//   w <= (2^p - 1)·2^(W + c) + 1 < 2^(p + W + c),   and at most batch = 2^c - 1 words per part between folds:
//   a part < 2^c · 2^(p + W + c) <= 2^128 (2c + p + W <= 128: no wrap), its count <= 2^c - 1 (the low c bits, below
//   every m-bit: no carry into the value).
// use also needs bitwidth(n + 1) + p + W <= 125: every cell's parts over all its terms, the initial one included,
// stay below (n + 1)·2^(p + W) <= 2^125 at the exponent of field_lo, so no cell can spill on finite terms whatever
// order or path (dense or one by one) its terms take (Step D4).
constexpr std::size_t dense_max_cells = std::size_t{1} << 18;  // 8 MB of dense elements at most
constexpr std::size_t dense_block = 1024;                       // terms per block (window checked per block)
struct dense_plan {
    bool use = false;
    bool special = false;  // some block may hold an Inf or a NaN
    bool guessed = false;  // Step D5: the window is a guess, checked block by block
    int field_lo = 1, field_hi = 1;
    int exponent = 0;      // of a part's unit: field_lo - emax - frac_bits
    unsigned count_bits = 1;
    std::size_t batch = 1;  // words per part between two folds: 2^count_bits - 1
};
bool dense_applies(std::size_t n, std::size_t cells) noexcept {
    return cells != 0 && cells <= dense_max_cells && n >= 2 * cells;
}
// The plan for n terms (one initial value per cell more) whose finite non-zero terms all lie in window w.
template <floating_format T>
dense_plan plan_for(const term_window& w, std::size_t n, std::size_t cells) {
    using tr = format_traits<T>;
    dense_plan plan;
    const int p = tr::info.precision, width = w.field_hi - w.field_lo;
    if (!dense_applies(n, cells) || std::bit_width(n + 1) + p + width > part_headroom_bits) return plan;
    const int max_bits = (128 - p - width) / 2;  // 2c + p + W <= 128
    const int want = std::bit_width(n);          // 2^want - 1 >= n: one fold at the end
    plan.count_bits = static_cast<unsigned>(std::min(max_bits, want));
    plan.batch = (std::size_t{1} << plan.count_bits) - 1;
    if (plan.batch < std::min(n, 16 * cells)) return plan;  // folds would cost more than they save
    plan.use = true;
    plan.special = w.special;
    plan.field_lo = w.field_lo;
    plan.field_hi = w.field_hi;
    plan.exponent = w.field_lo - tr::info.emax - (p - 1);
    return plan;
}
// Steps D1, D2 over every term: the window of the values and the initial ones, read in one pass before the scatter.
template <floating_format T>
dense_plan plan_dense(std::span<const T> values, std::span<const T> initial, std::size_t cells) {
    if (!dense_applies(values.size(), cells)) return {};
    term_window w = window_of(values);
    if (!initial.empty()) w |= window_of(initial);
    return plan_for<T>(w, values.size(), cells);
}
// Step D5: a window guessed from the first block instead of a pass over every value: the widest window that still
// folds once, at the end (2·bitwidth(n) + p + W <= 128, and D2's headroom), and keeps every shift below 64
// (bitwidth(n) + W <= 63: binary32 at n = 10^7 takes 39 binades, binary64 27), placed one binade above the first
// block's top (or higher, to reach down to its least binade), within the finite fields. The initial values must lie
// in it (their window is one pass over one value per cell). use = false when there is no such window (the first
// block spans more, holds an Inf or a NaN, or has no non-zero term; an initial value outside): plan_dense then.
template <floating_format T>
dense_plan plan_guessed(std::span<const T> values, std::span<const T> initial, std::size_t cells) {
    using tr = format_traits<T>;
    const std::size_t n = values.size();
    if (!dense_applies(n, cells)) return {};
    const term_window first = window_of(values.first(std::min(n, dense_block)));
    const int p = tr::info.precision, top_field = static_cast<int>(tr::info.special_exponent_field()) - 1;
    const int count_bits = static_cast<int>(std::bit_width(n));  // one fold, at the end
    // At most 63 - count_bits binades, so that every shift stays below 64 (add_dense_block's narrow decode).
    const int headroom = part_headroom_bits - static_cast<int>(std::bit_width(n + 1)) - p;  // D2
    const int width = std::min({128 - p - 2 * count_bits, headroom, 63 - count_bits});
    if (first.special || !first.any || width < first.field_hi - first.field_lo) return {};
    term_window guess;
    guess.any = true;
    guess.field_lo = std::max(1, std::min(first.field_lo, first.field_hi + 1 - width));
    guess.field_hi = std::min(top_field, guess.field_lo + width);  // >= first.field_hi (width covers the block)
    if (!initial.empty()) {
        const term_window w = window_of(initial);
        if (w.special || (w.any && (w.field_lo < guess.field_lo || w.field_hi > guess.field_hi))) return {};
    }
    dense_plan plan = plan_for<T>(guess, n, cells);
    if (!plan.use || plan.batch < n) return {};  // (not reached: the width was chosen for one fold)
    plan.guessed = true;
    return plan;
}

// detail::take_dense_scatter_counts (compact_cells.h): relaxed counters, touched once per range, fold or block.
std::atomic<std::uint64_t> dense_ranges{0}, one_by_one_ranges{0}, dense_folds{0}, special_blocks{0},
    guessed_ranges{0}, guesses_widened{0}, guesses_restarted{0}, normal_blocks{0}, narrow_blocks{0};
void tally(std::atomic<std::uint64_t>& counter) noexcept { counter.fetch_add(1, std::memory_order_relaxed); }

// The dense element updated this many terms ahead is fetched early: 32 measured best of 16, 32, 64 (10^5 elements,
// float64 and float32, bench_scatter 2026-12-03; on par with 64 for float64).
constexpr std::size_t dense_prefetch_distance = 32;
struct alignas(32) dense_element {
    u128 part[2];  // [sign bit]: (value / 2^exponent) << count_bits | count
};

// The dense parts, zeroed: at huge_page_bytes and more on Linux, fresh 2 MiB-aligned pages with MADV_HUGEPAGE (a
// 3.2 MB array of random updates then needs 2 TLB entries instead of ~800, and its zeroing is 2 page faults), else
// (or when mmap fails) operator new and a clear.
class dense_storage {
  public:
    explicit dense_storage(std::size_t count) : count_(count) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        const std::size_t bytes = count * sizeof(dense_element);
        if (bytes >= huge_page_bytes) {
            mapped_ = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes + huge_page_bytes;
            void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) {
                map_ = p;
                const auto at = (reinterpret_cast<std::uintptr_t>(p) + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
                data_ = reinterpret_cast<dense_element*>(at);  // anonymous pages read as zeros
                (void)madvise(data_, mapped_ - huge_page_bytes, MADV_HUGEPAGE);  // advice only
                return;
            }
        }
#endif
        owned_ = std::make_unique<dense_element[]>(count);  // value-initialized: zeros
        data_ = owned_.get();
    }
    ~dense_storage() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (map_ != nullptr) (void)munmap(map_, mapped_);
#endif
    }
    dense_storage(const dense_storage&) = delete;
    dense_storage& operator=(const dense_storage&) = delete;
    std::span<dense_element> elements() noexcept { return {data_, count_}; }

  private:
    std::size_t count_ = 0, mapped_ = 0;
    void* map_ = nullptr;
    std::unique_ptr<dense_element[]> owned_;
    dense_element* data_ = nullptr;
};

// Step D3: folds every dense element into its cell (builder form, or spilled) and clears it. An element becomes the
// builder-form cell of its terms (parts at plan.exponent; the flags from the counts and parts: a term other than
// -0.0 was seen when the positive side counts one or the negative part is non-zero, and so on), merged into the
// cell: an empty cell takes it as it is (the same state); a compact cell at the same exponent (an earlier fold of
// the same plan) adds the parts, checked exactly against 2^125 as merge_parts does; any other by merge_cell. Step
// D4 says it fits. clear: zero the parts after.
void fold_dense(cell* base, std::span<dense_element> dense, const dense_plan& plan, const spill_list& spills,
                bool clear) {
    tally(dense_folds);
    const u128 count_mask = (u128{1} << plan.count_bits) - 1;
    for (std::size_t i = 0; i < dense.size(); ++i) {
        dense_element& d = dense[i];
        if ((d.part[0] | d.part[1]) == 0) continue;  // no terms: every word adds at least its count
        const u128 p = d.part[0] >> plan.count_bits, n = d.part[1] >> plan.count_bits;
        const auto positive_count = static_cast<std::uint64_t>(d.part[0] & count_mask);
        const auto negative_count = static_cast<std::uint64_t>(d.part[1] & count_mask);
        cell from{};
        from.count = positive_count + negative_count;
        from.state = (positive_count != 0 || n != 0 ? cell_saw_not_negative_zero : 0u) |
                     (negative_count != 0 || p != 0 ? cell_saw_not_positive_zero : 0u) |
                     ((p | n) != 0 ? cell_saw_nonzero : 0u);
        if ((p | n) != 0) {
            from.exponent = plan.exponent;
            store_parts(from, p, n);
        }
        cell& to = base[i];
        if (clear) d = dense_element{};
        if (to.count == 0) {  // an empty cell (the usual case) takes the element as it is
            to = from;
            continue;
        }
        if ((to.state & (cell_spilled | cell_saw_nonzero)) == cell_saw_nonzero && to.exponent == plan.exponent) {
            const u128 sum_p = abs_of(to) + p, sum_n = negative_part_of(to) + n;  // < 2^126: no wrap
            if (((sum_p | sum_n) >> part_headroom_bits) == 0) {
                store_parts(to, sum_p, sum_n);
                to.count += from.count;
                to.state |= from.state;
                continue;
            }
        }
        merge_cell(to, from, nullptr, spills);
    }
}

// Adds the terms start .. stop-1 (stop <= end) to the dense parts at plan's unit: one 128-bit addition per term into
// the part its sign bit selects, the element fetched dense_prefetch_distance terms ahead (a prefetch never faults, so
// its address is not checked); returns `bad` or, if it was none, the first position whose target is >= cells.
// all_normal: every term of the block is a normal number (no zero, no subnormal: the block's least magnitude is at
// least 2^emin), so m always has its leading bit and the shift needs no clamp; narrow: moreover every shift is below
// 64 (count_bits + the block's top field - field_lo <= 63), so the word's halves are m << shift and m >> (64 - shift)
// (two 64-bit shifts instead of a 128-bit one; N(0,1) data: shifts 24 .. 51).
enum class block_kind { general, all_normal, narrow };
template <floating_format T, block_kind kind, class Target>
[[gnu::always_inline]] inline std::size_t add_dense_block(u128* parts, std::size_t cells, std::size_t start,
                                                          std::size_t stop, std::size_t end, Target& target,
                                                          const T* values, int shift_base, std::size_t bad) {
    using tr = format_traits<T>;
    constexpr int frac_bits = tr::info.precision - 1;
    constexpr std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    constexpr std::uint32_t field_mask = tr::info.special_exponent_field();
    constexpr int sign_shift = tr::info.storage_bits - 1;
    auto add = [&](std::size_t i) {
        const std::size_t t = target(i);
        if (t >= cells) [[unlikely]] {
            if (bad == none) bad = i;
            return;
        }
        const std::uint64_t bits = tr::to_bits(values[i]);
        const auto field = static_cast<std::uint32_t>(bits >> frac_bits) & field_mask;
        std::uint64_t m;
        unsigned shift;
        if constexpr (kind != block_kind::general) {  // field_lo <= field <= field_hi: the shift lies in [c, c + W]
            m = (bits & frac_mask) | (std::uint64_t{1} << frac_bits);
            shift = static_cast<unsigned>(static_cast<int>(field) + shift_base);
        } else {
            m = (bits & frac_mask) | (std::uint64_t{field != 0} << frac_bits);
            // A zero (m = 0) may lie below field_lo: any shift of 0 is 0, so the shift is taken mod 128.
            shift = static_cast<unsigned>(static_cast<int>(field | (field == 0)) + shift_base) & 127u;
        }
        u128 word;
        if constexpr (kind == block_kind::narrow)  // 1 <= shift <= 63 (count_bits >= 1)
            word = (u128{(m >> 1) >> (63 - shift)} << 64) | ((m << shift) | 1u);
        else
            word = (u128{m} << shift) | 1u;
        parts[2 * t + ((bits >> sign_shift) & 1u)] += word;
    };
    const auto origin = reinterpret_cast<std::uintptr_t>(parts);
    const std::size_t ahead_stop = std::min(stop, end - std::min(end, dense_prefetch_distance));
    std::size_t i = start;
    for (; i < ahead_stop; ++i) {
        const std::size_t ahead = target(i + dense_prefetch_distance);
        __builtin_prefetch(reinterpret_cast<const void*>(origin + sizeof(dense_element) * ahead), 1);
        add(i);
    }
    for (; i < stop; ++i) add(i);
    return bad;
}

// The result of scatter_range: the first out-of-range position (or none); restart: a guessed window (Step D5) met
// a term outside it and the window of every term does not fit the dense parts, so nothing was added to the cells
// and the scatter must run again with plan_dense's plan (`plan`).
struct range_result {
    std::size_t bad = none;
    bool restart = false;
    dense_plan plan;
};

// As scatter_in_order over positions begin .. end-1, with values = value(i) for every i, through the dense array
// (Steps D2, D3) when plan.use, block by block: each block's magnitude range (one vectorized pass over 1024 values,
// which then stay in L1 for the additions) says whether it holds an Inf or a NaN (then it is added one by one,
// scatter_in_order), whether every term is normal (add_dense_block's cheaper decode) and, for a guessed plan
// (Step D5), whether it lies in the window. A block outside a guessed window: the window of every term (the blocks
// seen, a pass over the rest, the initial values) joined to the guess gives a new plan; if it is usable, the dense
// parts are folded at the guess's unit and the scatter goes on with it (Step D4 holds for the joined window),
// otherwise it returns restart with nothing added to the cells.
template <floating_format T, class Target, class Value>
range_result scatter_range(cell* base, std::size_t cells, std::size_t begin, std::size_t end, Target& target,
                           Value& value, std::span<const T> values, dense_plan plan, const spill_list& spills,
                           std::span<const T> initial = {}) {
    range_result result;
    if (!plan.use) {
        tally(one_by_one_ranges);
        result.bad = scatter_in_order(base, cells, begin, end, target, value, spills);
        return result;
    }
    tally(plan.guessed ? guessed_ranges : dense_ranges);
    using wb = window_bits<T>;
    dense_storage storage(cells);
    const std::span<dense_element> dense = storage.elements();
    u128* const parts = &dense.data()->part[0];
    std::size_t& bad = result.bad;
    std::size_t since_fold = 0;
    term_window seen;  // of the blocks added so far (for a guessed plan)
    for (std::size_t start = begin; start < end;) {
        const std::size_t block = std::min(dense_block, plan.batch);  // a block never holds more words than a batch
        const std::size_t stop = std::min(end, start + block);
        const auto r = range_any(static_cast<const void*>(values.data() + start), stop - start, wb::mask);
        const bool special = r.top >= wb::special;
        if (plan.guessed) {
            const term_window w = special ? term_window{} : wb::of(r);
            if (special || (w.any && (w.field_lo < plan.field_lo || w.field_hi > plan.field_hi))) {
                // Step D5's exit: the window of every term, joined to the guess.
                term_window all = seen;
                all |= window_of(values.subspan(start, end - start));
                if (!initial.empty()) all |= window_of(initial);
                term_window joined = all;
                joined.field_lo = std::min(all.field_lo, plan.field_lo);
                joined.field_hi = std::max(all.field_hi, plan.field_hi);
                const dense_plan wider = plan_for<T>(joined, values.size(), cells);
                if (!wider.use) {
                    tally(guesses_restarted);
                    result.restart = true;
                    result.plan = plan_for<T>(all, values.size(), cells);
                    return result;
                }
                tally(guesses_widened);
                fold_dense(base, dense, plan, spills, true);
                plan = wider;
                since_fold = 0;
                continue;  // this block again, under the wider plan
            }
            seen |= w;
        }
        if (special) {
            tally(special_blocks);
            const std::size_t b = scatter_in_order(base, cells, start, stop, target, value, spills);
            if (bad == none) bad = b;
            start = stop;
            continue;
        }
        if (since_fold + (stop - start) > plan.batch) {
            fold_dense(base, dense, plan, spills, true);
            since_fold = 0;
        }
        since_fold += stop - start;
        const int shift_base = static_cast<int>(plan.count_bits) - plan.field_lo;
        const int top_shift = shift_base + std::max(1, static_cast<int>(r.top >> wb::frac_bits));
        if (r.least >= wb::least_normal && top_shift <= 63) {
            tally(narrow_blocks);
            bad = add_dense_block<T, block_kind::narrow>(parts, cells, start, stop, end, target, values.data(),
                                                         shift_base, bad);
        } else if (r.least >= wb::least_normal) {
            tally(normal_blocks);
            bad = add_dense_block<T, block_kind::all_normal>(parts, cells, start, stop, end, target, values.data(),
                                                             shift_base, bad);
        } else
            bad = add_dense_block<T, block_kind::general>(parts, cells, start, stop, end, target, values.data(),
                                                          shift_base, bad);
        start = stop;
    }
    fold_dense(base, dense, plan, spills, false);  // the last: the dense parts are dropped after it
    return result;
}

// The input-chunk scatter (Step T3 of docs/algorithms/compact-reference-array.md): thread k adds the terms of the
// k-th contiguous chunk of positions into its own array of partial cells; then every cell of `out` takes its partial
// cells merged (merge_cell), threads over ranges of cells. Each thread reads only its chunk; T partial arrays of
// out.size() cells are the cost, so scatter_terms takes this path only when there are many terms per cell.
template <floating_format T, class Target, class Value>
std::size_t scatter_by_chunks(compact_reference_array& out, std::size_t n, std::size_t chunks, Target& target,
                              Value& value, std::span<const T> values, const dense_plan& plan) {
    const std::size_t cells = out.size();
    const std::size_t length = detail::chunk_length(n, chunks, 1), used = (n + length - 1) / length;
    std::vector<compact_reference_array::cell_vector> partial(used);
    std::vector<std::vector<compact_reference_array::spill>> partial_pairs(used), own(used);
    std::vector<std::size_t> bad(used, none);
    std::vector<compact_reference_array::spill>& shared = out.spills();
    cell* const base = out.cells().data();
    const std::size_t width = detail::chunk_length(cells, used, 1);
    std::exception_ptr error;
    auto keep = [&error] {
#pragma omp critical(exactref_scatter_error)
        if (!error) error = std::current_exception();
    };
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used))
    for (std::size_t k = 0; k < used; ++k) {
        try {
            partial[k].assign(cells, cell{});
            const spill_list pairs{&partial_pairs[k], &partial_pairs[k]};
            bad[k] = scatter_range<T>(partial[k].data(), cells, k * length, std::min(n, (k + 1) * length), target,
                                      value, values, plan, pairs)
                         .bad;
        } catch (...) {
            keep();
        }
    }
    if (error) std::rethrow_exception(error);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used))
    for (std::size_t r = 0; r < used; ++r) {
        try {
            const spill_list spills{&shared, &own[r], (r + 1) << 48};
            for (std::size_t i = std::min(cells, r * width); i < std::min(cells, (r + 1) * width); ++i)
                for (std::size_t k = 0; k < used; ++k) {
                    const cell& from = partial[k][i];
                    merge_cell(base[i], from, (from.state & cell_spilled) ? &partial_pairs[k][from.sum_lo] : nullptr,
                               spills);
                }
        } catch (...) {
            keep();
        }
    }
    if (error) std::rethrow_exception(error);
    finish_cells(out, own, static_cast<unsigned>(used));
    for (std::size_t b : bad)
        if (b != none) return b;  // chunks in input order: the first chunk's first
    return none;
}

// Adds value(i) to element target(i) of `out` for i = 0 .. n-1, in input order, on up to `threads` threads, and
// finishes the array. target(i) is pure and does not throw; a result >= out.size() is out of range: reject(i) is then
// called with the first such position in input order, once, after the scatter, and must throw (naming it) or return
// to drop every such value. The one scatter loop of segment_sum, bincount, add_at and rank-1 scatter_add and
// index_add. With at least 8 terms per cell, threads take contiguous chunks of the input into partial cells merged
// at the end (scatter_by_chunks); otherwise ranges of the output (run_partitioned). Either way every cell ends as
// one thread would leave it. It is bound by the work per term (add_part) and the cell accesses: a radix partition of
// the input by target (each bucket's cells within L2) measured slower at 10^5 cells and ~8% faster at 10^6
// (docs/scatter.md).
template <floating_format T, class Target, class Value, class Reject>
void scatter_terms(compact_reference_array& out, std::size_t n, Target target, Value value, Reject reject,
                   unsigned threads, std::span<const T> values = {}, std::span<const T> initial = {}) {
    const std::size_t cells = out.size();
    const bool dense = n != 0 && values.size() == n;  // the terms are values[0 .. n-1]: Step D may apply
    constexpr std::size_t min_terms_per_cell = 8;  // so that the T partial arrays cost little beside the terms
    const std::size_t chunks = detail::chunk_count(n, threads);
    if (chunks > 1 && cells <= n / min_terms_per_cell) {
        const dense_plan plan = dense ? plan_dense(values, initial, cells) : dense_plan{};
        if (const std::size_t bad = scatter_by_chunks<T>(out, n, chunks, target, value, values, plan); bad != none)
            reject(bad);
        return;
    }
    std::atomic<std::size_t> first_bad{none};
    run_partitioned(out, n, threads, 1, [&](cell* base, std::size_t lo, std::size_t hi, const spill_list& spills) {
        std::size_t bad = none;
        if (lo == 0 && hi == cells) {  // one thread: every target in range is its own
            // Step D5: a window guessed from the first block, checked block by block; else (or when the guess
            // fails and the window of every term does not fit it) the window of every term, read first.
            const dense_plan guess = dense ? plan_guessed(values, initial, cells) : dense_plan{};
            range_result r = guess.use ? scatter_range<T>(base, cells, 0, n, target, value, values, guess, spills,
                                                          initial)
                                       : range_result{none, true, dense ? plan_dense(values, initial, cells)
                                                                        : dense_plan{}};
            if (r.restart) r = scatter_range<T>(base, cells, 0, n, target, value, values, r.plan, spills);
            bad = r.bad;
        } else {
            // Several threads: which terms are this thread's is a coin flip per term on random ids, so a branch on
            // it would mispredict half the time. Each block of positions is first compacted without a branch into
            // the list of this thread's (position, target), then added as on one thread.
            const std::size_t width = hi - lo;  // a target t is this thread's when t - lo < width (unsigned)
            constexpr std::size_t block = 1024;
            std::size_t own_position[block], own_target[block];
            for (std::size_t start = 0; start < n; start += block) {
                const std::size_t end = std::min(n, start + block);
                std::size_t owned = 0;
                for (std::size_t i = start; i < end; ++i) {
                    const std::size_t t = target(i);
                    own_position[owned] = i;
                    own_target[owned] = t;
                    owned += t - lo < width ? 1 : 0;
                    if (t >= cells && bad == none) [[unlikely]] bad = i;
                }
                for (std::size_t k = 0; k < owned; ++k) {
                    if (k + prefetch_distance < owned) prefetch_cell(base, own_target[k + prefetch_distance]);
                    add_term(base, own_target[k], value(own_position[k]), spills);
                }
            }
        }
        if (lo == 0) first_bad.store(bad, std::memory_order_relaxed);  // every range sees the same first position
    });
    if (const std::size_t bad = first_bad.load(std::memory_order_relaxed); bad != none) reject(bad);
}

// initial[i] as the first term of element i, on the calling thread (builder form; a run_partitioned finishes it).
template <floating_format T>
void add_initial(compact_reference_array& out, std::span<const T> initial) {
    cell* cells = out.cells().data();
    const spill_list spills{&out.spills(), &out.spills()};
    for (std::size_t i = 0; i < initial.size(); ++i) add_term(cells, i, initial[i], spills);
}

template <floating_format T>
compact_reference_array with_initial(const char* function, std::span<const T> initial, const array_shape& shape) {
    const std::size_t n = elements_of(function, "initial", shape);
    check_length(function, "initial", initial.size(), n, "its shape " + shape_text(shape));
    compact_reference_array out(shape, format_traits<T>::info.id);
    add_initial(out, initial);
    return out;
}

}  // namespace

template <floating_format T, index_type I>
compact_reference_array segment_sum(std::span<const T> values, std::span<const I> segment_ids,
                                    std::size_t num_segments, std::span<const T> initial, out_of_range ids,
                                    unsigned threads) {
    const char* fn = "segment_sum";
    const unsigned workers = detail::resolve_threads(threads);
    check_length(fn, "segment_ids", segment_ids.size(), values.size(), "one segment id per value");
    if (!initial.empty()) check_length(fn, "initial", initial.size(), num_segments, "one initial value per segment");
    compact_reference_array out({num_segments}, format_traits<T>::info.id);
    add_initial(out, initial);
    scatter_terms<T>(
        out, values.size(), [&](std::size_t i) { return cell_index(segment_ids[i]); },
        [&](std::size_t i) { return values[i]; },
        [&](std::size_t i) {
            if (ids == out_of_range::drop) return;
            bad_index(fn, "segment_ids", i, segment_ids[i], num_segments,
                      "pass num_segments > the largest id, or drop such values (out_of_range::drop)");
        },
        workers, values, initial);
    return out;
}

template <floating_format T, index_type I>
compact_reference_array scatter_add(std::span<const T> initial, const array_shape& initial_shape, int dim,
                                    std::span<const I> index, const array_shape& index_shape,
                                    std::span<const T> src, const array_shape& src_shape, unsigned threads) {
    const char* fn = "scatter_add";
    const unsigned workers = detail::resolve_threads(threads);
    compact_reference_array out = with_initial(fn, initial, initial_shape);
    const std::size_t ni = elements_of(fn, "index", index_shape);
    const std::size_t ns = elements_of(fn, "src", src_shape);
    check_length(fn, "index", index.size(), ni, "its shape " + shape_text(index_shape));
    check_length(fn, "src", src.size(), ns, "its shape " + shape_text(src_shape));
    const std::size_t rank = initial_shape.size();
    if (index_shape.size() != rank || src_shape.size() != rank)
        throw std::invalid_argument(std::string(fn) + ": initial, index and src must have the same rank (got " +
                                    shape_text(initial_shape) + ", " + shape_text(index_shape) + ", " +
                                    shape_text(src_shape) + ")");
    if (dim < 0) dim += static_cast<int>(rank);
    if (dim < 0 || dim >= static_cast<int>(rank))
        throw std::invalid_argument(std::string(fn) + ": dim out of range for rank " + std::to_string(rank));
    for (std::size_t d = 0; d < rank; ++d) {
        if (index_shape[d] > src_shape[d] || (static_cast<int>(d) != dim && index_shape[d] > initial_shape[d]))
            throw std::invalid_argument(std::string(fn) + ": index " + shape_text(index_shape) +
                                        " may not be larger than src " + shape_text(src_shape) +
                                        " in any dimension, nor than initial " + shape_text(initial_shape) +
                                        " outside dim " + std::to_string(dim) + " (torch's rule)");
    }
    const std::size_t rows = rank == 2 ? index_shape[0] : 1;
    const std::size_t cols = rank == 2 ? index_shape[1] : index_shape[0];
    const std::size_t src_cols = rank == 2 ? src_shape[1] : src_shape[0];
    const std::size_t out_cols = rank == 2 ? initial_shape[1] : initial_shape[0];
    const std::size_t extent = initial_shape[static_cast<std::size_t>(dim)];
    if (rank == 1) {
        scatter_terms<T>(
            out, cols, [&](std::size_t j) { return cell_index(index[j]); }, [&](std::size_t j) { return src[j]; },
            [&](std::size_t j) {
                bad_index(fn, "index", j, index[j], extent, "every index must address an element of initial along dim");
            },
            workers, src.first(cols), initial);
        return out;
    }
    for (std::size_t position = 0; position < index.size(); ++position)
        if (index[position] < 0 || static_cast<std::uint64_t>(index[position]) >= extent)
            bad_index(fn, "index", position, index[position], extent,
                      "every index must address an element of initial along dim");
    run_partitioned(out, index.size(), workers, 1,
                    [&](cell* cells, std::size_t lo, std::size_t hi, const spill_list& spills) {
                        for (std::size_t i = 0; i < rows; ++i)
                            for (std::size_t j = 0; j < cols; ++j) {
                                const auto k = static_cast<std::size_t>(index[i * cols + j]);  // checked above
                                const std::size_t target = dim == 0 ? k * out_cols + j : i * out_cols + k;
                                if (target - lo < hi - lo) add_term(cells, target, src[i * src_cols + j], spills);
                            }
                    });
    return out;
}

template <floating_format T, index_type I>
compact_reference_array index_add(std::span<const T> initial, const array_shape& initial_shape, int dim,
                                  std::span<const I> index, std::span<const T> source,
                                  const array_shape& source_shape, unsigned threads) {
    const char* fn = "index_add";
    const unsigned workers = detail::resolve_threads(threads);
    compact_reference_array out = with_initial(fn, initial, initial_shape);
    const std::size_t ns = elements_of(fn, "source", source_shape);
    check_length(fn, "source", source.size(), ns, "its shape " + shape_text(source_shape));
    const std::size_t rank = initial_shape.size();
    if (source_shape.size() != rank)
        throw std::invalid_argument(std::string(fn) + ": source " + shape_text(source_shape) + " and initial " +
                                    shape_text(initial_shape) + " must have the same rank");
    if (dim < 0) dim += static_cast<int>(rank);
    if (dim < 0 || dim >= static_cast<int>(rank))
        throw std::invalid_argument(std::string(fn) + ": dim out of range for rank " + std::to_string(rank));
    const auto d = static_cast<std::size_t>(dim);
    check_length(fn, "index", index.size(), source_shape[d], "one index per slice of source along dim");
    if (rank == 2 && source_shape[1 - d] != initial_shape[1 - d])
        throw std::invalid_argument(std::string(fn) + ": source " + shape_text(source_shape) + " and initial " +
                                    shape_text(initial_shape) + " must agree outside dim " + std::to_string(dim));
    const std::size_t extent = initial_shape[d];
    for (std::size_t p = 0; p < index.size(); ++p)
        if (index[p] < 0 || static_cast<std::uint64_t>(index[p]) >= extent)
            bad_index(fn, "index", p, index[p], extent, "every index must address a slice of initial along dim");
    if (rank == 1) {
        scatter_terms<T>(
            out, index.size(), [&](std::size_t p) { return static_cast<std::size_t>(index[p]); },  // checked above
            [&](std::size_t p) { return source[p]; }, [](std::size_t) {}, workers, source.first(index.size()), initial);
        return out;
    }
    const std::size_t rows = source_shape[0], cols = source_shape[1], out_cols = initial_shape[1];
    run_partitioned(out, ns, workers, 1, [&](cell* cells, std::size_t lo, std::size_t hi, const spill_list& spills) {
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                const std::size_t target = d == 0 ? static_cast<std::size_t>(index[i]) * out_cols + j
                                                  : i * out_cols + static_cast<std::size_t>(index[j]);
                if (target - lo < hi - lo) add_term(cells, target, source[i * cols + j], spills);
            }
    });
    return out;
}

template <floating_format T, index_type I>
compact_reference_array add_at(std::span<const T> initial, std::span<const I> indices, std::span<const T> values,
                               unsigned threads) {
    const char* fn = "add_at";
    const unsigned workers = detail::resolve_threads(threads);
    if (values.size() != indices.size() && values.size() != 1)
        throw std::invalid_argument(std::string(fn) + ": values has " + std::to_string(values.size()) +
                                    " elements for " + std::to_string(indices.size()) +
                                    " indices; pass one value per index, or one value for all");
    compact_reference_array out = with_initial(fn, initial, array_shape{initial.size()});
    const auto n = static_cast<std::int64_t>(initial.size());
    const bool broadcast = values.size() == 1;
    scatter_terms<T>(
        out, indices.size(),
        [&](std::size_t i) {
            const std::int64_t k = indices[i];
            return cell_index(k < 0 ? k + n : k);  // numpy: negative indices count from the end
        },
        [&](std::size_t i) { return values[broadcast ? 0 : i]; },
        [&](std::size_t i) {
            throw std::invalid_argument(std::string(fn) + ": indices[" + std::to_string(i) + "] = " +
                                        std::to_string(indices[i]) + " is out of bounds for an array of " +
                                        std::to_string(n) + " elements (numpy accepts -" + std::to_string(n) +
                                        " .. " + std::to_string(n - 1) + ")");
        },
        workers, broadcast ? std::span<const T>{} : values, initial);
    return out;
}

template <floating_format T, index_type I>
compact_reference_array bincount(std::span<const I> x, std::span<const T> weights, std::size_t minlength,
                                 unsigned threads) {
    const char* fn = "bincount";
    const unsigned workers = detail::resolve_threads(threads);
    check_length(fn, "weights", weights.size(), x.size(), "one weight per element of x");
    // min(x) and max(x) in one vectorized pass; a negative x is then looked up to be named.
    const auto [least, largest] = index_range(x.data(), x.size());
    if (least < 0) {
        const auto first = std::find_if(x.begin(), x.end(), [](I v) { return v < 0; });
        const auto i = static_cast<std::size_t>(first - x.begin());
        throw std::invalid_argument(std::string(fn) + ": x[" + std::to_string(i) + "] = " + std::to_string(x[i]) +
                                    " is negative; bincount counts non-negative integers (as numpy)");
    }
    const std::size_t length = x.empty() ? minlength : std::max(minlength, static_cast<std::size_t>(largest) + 1);
    compact_reference_array out({length}, format_traits<T>::info.id);
    scatter_terms<T>(
        out, x.size(), [&](std::size_t i) { return static_cast<std::size_t>(x[i]); },  // checked above
        [&](std::size_t i) { return weights[i]; }, [](std::size_t) {}, workers, weights);
    return out;
}

template <floating_format T, index_type I>
compact_reference_array embedding_bag_sum(std::span<const T> weight, std::size_t num_embeddings, std::size_t dim,
                                          std::span<const I> indices, std::span<const I> offsets,
                                          bool include_last_offset, unsigned threads) {
    const char* fn = "embedding_bag_sum";
    const unsigned workers = detail::resolve_threads(threads);
    if (dim != 0 && num_embeddings > std::numeric_limits<std::size_t>::max() / dim)
        throw std::invalid_argument(std::string(fn) + ": weight's shape overflows");
    check_length(fn, "weight", weight.size(), num_embeddings * dim, "num_embeddings x dim");
    if (include_last_offset && offsets.empty())
        throw std::invalid_argument(std::string(fn) + ": include_last_offset needs at least one offset");
    const std::size_t bags = include_last_offset ? offsets.size() - 1 : offsets.size();
    for (std::size_t b = 0; b < offsets.size(); ++b) {
        const bool first_bad = b == 0 && offsets[0] != 0;
        const bool decreasing = b > 0 && offsets[b] < offsets[b - 1];
        const bool beyond = offsets[b] < 0 || static_cast<std::uint64_t>(offsets[b]) > indices.size();
        if (first_bad || decreasing || beyond)
            throw std::invalid_argument(std::string(fn) + ": offsets[" + std::to_string(b) + "] = " +
                                        std::to_string(offsets[b]) +
                                        (first_bad ? " must be 0 (the first bag starts at the first index)"
                                                   : decreasing ? " is below offsets[" + std::to_string(b - 1) +
                                                                      "]: offsets must not decrease"
                                                                : " lies beyond the " +
                                                                      std::to_string(indices.size()) + " indices"));
    }
    for (std::size_t k = 0; k < indices.size(); ++k)
        if (indices[k] < 0 || static_cast<std::uint64_t>(indices[k]) >= num_embeddings)
            bad_index(fn, "indices", k, indices[k], num_embeddings, "every index must name a row of weight");
    compact_reference_array out({bags, dim}, format_traits<T>::info.id);
    // Ranges of whole bags (multiples of dim cells): a thread reads only its bags' rows.
    const std::size_t terms = dim != 0 && indices.size() > std::numeric_limits<std::size_t>::max() / dim
                                  ? std::numeric_limits<std::size_t>::max()
                                  : indices.size() * dim;
    run_partitioned(out, terms, workers, dim, [&](cell* cells, std::size_t lo, std::size_t hi, const spill_list& spills) {
        for (std::size_t b = lo / std::max<std::size_t>(dim, 1); dim != 0 && b < hi / dim; ++b) {
            const auto begin = static_cast<std::size_t>(offsets[b]);
            const std::size_t end = b + 1 < offsets.size() ? static_cast<std::size_t>(offsets[b + 1]) : indices.size();
            for (std::size_t k = begin; k < end; ++k) {
                const T* row = weight.data() + static_cast<std::size_t>(indices[k]) * dim;
                for (std::size_t d = 0; d < dim; ++d) add_term(cells, b * dim + d, row[d], spills);
            }
        }
    });
    return out;
}

namespace {

// One pass along each line: the terms copied as they are, and the running state kept at every scan_block-th
// position (the state before that element). An element is its line's checkpoint plus at most scan_block terms.
template <floating_format T>
compact_reference_array scan(const char* fn, std::span<const T> values, const array_shape& shape, int axis,
                             bool inclusive) {
    using tr = format_traits<T>;
    const std::size_t n = elements_of(fn, "values", shape);
    check_length(fn, "values", values.size(), n, "its shape " + shape_text(shape));
    const int rank = static_cast<int>(shape.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
        throw std::invalid_argument(std::string(fn) + ": axis out of range for rank " + std::to_string(rank));
    auto sc = std::make_unique<compact_reference_array::scan_storage>();
    const std::size_t rows = rank == 2 ? shape[0] : 1;
    sc->cols = rank == 2 ? shape[1] : shape[0];
    sc->inclusive = inclusive;
    sc->along_rows = rank == 1 || axis == 1;  // lines: rows along axis 1 (or rank 1), else columns
    sc->lines = sc->along_rows ? rows : sc->cols;
    sc->length = sc->along_rows ? sc->cols : rows;
    constexpr std::size_t block = compact_reference_array::scan_block;
    sc->blocks = (sc->length + block - 1) / block;
    sc->terms.resize(n * sizeof(T));
    if (n != 0) std::memcpy(sc->terms.data(), values.data(), n * sizeof(T));
    sc->checkpoints.resize(sc->lines * sc->blocks);
    running_state running;  // the slow path's state (a spilled line)
    for (std::size_t line = 0; line < sc->lines; ++line) {
        running.assign(cell{}, nullptr);
        cell state{};  // the running state in a local, so the compiler keeps it in registers
        const std::size_t start = sc->along_rows ? line * sc->cols : line;
        const std::size_t stride = sc->along_rows ? 1 : sc->cols;
        for (std::size_t k = 0; k < sc->length; ++k) {
            if (k % block == 0) {
                cell& cp = sc->checkpoints[line * sc->blocks + k / block];
                cp = state;
                if (state.state & cell_spilled) {
                    sc->pairs.push_back(*running.pair);
                    cp.sum_lo = sc->pairs.size() - 1;
                }
            }
            const std::uint64_t bits = tr::to_bits(values[start + k * stride]);
            if ((state.state & cell_spilled) == 0 && try_add(state, bits, tr::info)) continue;
            running.c = state;  // an Inf, a NaN, a span too wide, or a spilled line: the pair takes it
            running.add(bits, tr::info);
            state = running.c;
        }
    }
    compact_reference_array out;
    out.set_scan(shape, tr::info.id, std::move(sc));
    return out;
}

}  // namespace

template <floating_format T>
compact_reference_array inclusive_scan(std::span<const T> values, const array_shape& shape, int axis) {
    return scan("inclusive_scan", values, shape, axis, true);
}
template <floating_format T>
compact_reference_array exclusive_scan(std::span<const T> values, const array_shape& shape, int axis) {
    return scan("exclusive_scan", values, shape, axis, false);
}

// ---- cell entries for src/axis_sums.cpp (src/compact_cells.h) --------------------------------------------------

namespace detail {

dense_scatter_counts take_dense_scatter_counts() noexcept {
    auto take = [](std::atomic<std::uint64_t>& c) { return c.exchange(0, std::memory_order_relaxed); };
    return {take(dense_ranges), take(one_by_one_ranges), take(dense_folds), take(special_blocks), take(guessed_ranges),
            take(guesses_widened), take(guesses_restarted), take(normal_blocks), take(narrow_blocks)};
}

template <floating_format T>
void add_terms_to_cell(compact_reference_array& out, std::size_t i, std::span<const T> terms) {
    using tr = format_traits<T>;
    cell& target = out.cells()[i];
    cell c = target;  // in a local, so the compiler keeps it in registers
    std::size_t k = 0;
    if ((c.state & cell_spilled) == 0)
        for (; k < terms.size(); ++k)
            if (!try_add(c, tr::to_bits(terms[k]), tr::info)) break;
    target = c;
    for (; k < terms.size(); ++k) out.add_bits(i, tr::to_bits(terms[k]));  // spills, or adds to the pair
}

namespace {

// The finite part of a superaccumulator as ±magnitude·2^exponent, magnitude in little-endian 32-bit words with no
// zero word at either end (as exactref::dyadic, without the heap): read straight from the chunks when the non-zero
// ones span at most five (every sum a cell can hold, and more), through to_dyadic otherwise.
struct finite_part {
    bool negative = false;
    int exponent = 0;
    std::size_t size = 0;  // 0: zero
    std::array<std::uint32_t, 8> words{};
    std::vector<std::uint32_t> spilled;  // the words when they are more than 8 (to_dyadic)
    std::span<const std::uint32_t> magnitude() const noexcept {
        return spilled.empty() ? std::span<const std::uint32_t>(words.data(), size) : std::span(spilled);
    }
};

finite_part finite_part_of(const superaccumulator& acc) {
    constexpr int max_span = 5;  // chunks: |Σ c_k·2^(32(k-b))| < 2^(63 + 32·4 + 1), inside 256 signed bits
    const auto& chunks = acc.chunks();
    int b = 0, t = superaccumulator::chunk_count - 1;
    while (b <= t && chunks[static_cast<std::size_t>(b)] == 0) ++b;
    finite_part out;
    if (b > t) return out;
    while (chunks[static_cast<std::size_t>(t)] == 0) --t;
    if (t - b >= max_span) {
        const dyadic d = acc.to_dyadic();
        out.negative = d.negative;
        out.exponent = d.exponent;
        out.size = d.magnitude.size();
        if (out.size <= out.words.size()) std::copy(d.magnitude.begin(), d.magnitude.end(), out.words.begin());
        else out.spilled = d.magnitude;
        return out;
    }
    // v = Σ c_k·2^(32(k-b)) in 256-bit two's complement (four 64-bit limbs), each chunk sign-extended.
    std::uint64_t v[4] = {0, 0, 0, 0};
    for (int k = b; k <= t; ++k) {
        const std::int64_t c = chunks[static_cast<std::size_t>(k)];
        const int shift = 32 * (k - b), limb = shift / 64, bits = shift % 64;
        const std::uint64_t extension = c < 0 ? ~std::uint64_t{0} : 0;
        std::uint64_t add[4] = {0, 0, 0, 0};
        add[limb] = static_cast<std::uint64_t>(c) << bits;
        if (limb + 1 < 4)
            add[limb + 1] = bits == 0 ? extension : static_cast<std::uint64_t>(c >> (64 - bits));
        for (int l = limb + 2; l < 4; ++l) add[l] = extension;
        std::uint64_t carry = 0;
        for (int l = 0; l < 4; ++l) {
            const std::uint64_t sum = v[l] + add[l];
            const std::uint64_t c1 = sum < v[l] ? 1 : 0;
            v[l] = sum + carry;
            carry = c1 | (v[l] < sum ? 1 : 0);
        }
    }
    if ((v[0] | v[1] | v[2] | v[3]) == 0) return out;  // chunks that cancel (they need not be normalized)
    out.negative = (v[3] >> 63) != 0;
    if (out.negative) {  // the magnitude: two's complement negation
        std::uint64_t carry = 1;
        for (std::uint64_t& limb : v) {
            limb = ~limb + carry;
            carry = (carry != 0 && limb == 0) ? 1 : 0;
        }
    }
    std::array<std::uint32_t, 8> all{};
    for (int w = 0; w < 8; ++w) all[static_cast<std::size_t>(w)] = static_cast<std::uint32_t>(v[w / 2] >> (32 * (w % 2)));
    int low = 0, high = 7;
    while (all[static_cast<std::size_t>(low)] == 0) ++low;  // v != 0
    while (all[static_cast<std::size_t>(high)] == 0) --high;
    out.exponent = superaccumulator::lsb_exponent + 32 * (b + low);
    out.size = static_cast<std::size_t>(high - low + 1);
    std::copy(all.begin() + low, all.begin() + high + 1, out.words.begin());
    return out;
}

// d's magnitude / 2^low as a 128-bit integer; every set bit of d lies in [low, low + 128) (the caller checked).
u128 magnitude_over(const finite_part& d, int low) noexcept {
    u128 m = 0;
    const std::span<const std::uint32_t> words = d.magnitude();
    for (std::size_t k = 0; k < words.size(); ++k) {
        const int position = d.exponent + 32 * static_cast<int>(k) - low;  // > -32: only zero bits fall off
        const u128 word = words[k];
        m |= position >= 0 ? word << position : word >> -position;
    }
    return m;
}
int lowest_bit(const finite_part& d) noexcept { return d.exponent + std::countr_zero(d.magnitude().front()); }
int top_bit_end(const finite_part& d) noexcept {  // one above the highest set bit
    return d.exponent + 32 * static_cast<int>(d.size - 1) + std::bit_width(d.magnitude().back());
}
}  // namespace

// Step 4 of docs/algorithms/compact-reference-array.md: the cell's own pair (rebuild) merged with the new one, then
// stored back over the lowest set bit of Σt and Σ|t| when Σ|t| stays below 2^126 there (invariant C), else spilled.
void merge_pair_into_cell(compact_reference_array& out, std::size_t i, superaccumulator& sum,
                          superaccumulator& abs_sum, std::uint64_t count) {
    cell& c = out.cells()[i];
    if (c.state & cell_spilled) {
        compact_reference_array::spill& sp = out.spills()[c.sum_lo];
        sp.sum.merge(sum);
        sp.abs_sum.merge(abs_sum);
        c.count += count;
        return;
    }
    if (c.count > 0) rebuild(c, sum, abs_sum);  // adds the cell's value, terms and flags to the pair
    cell merged{};
    merged.count = c.count + count;
    if (merged.count > 0) {
        merged.state |= sum.all_negative_zero() ? 0u : cell_saw_not_negative_zero;
        merged.state |= sum.all_positive_zero() ? 0u : cell_saw_not_positive_zero;
    }
    const bool special = sum.has_nan() || sum.positive_inf_count() > 0 || sum.negative_inf_count() > 0 ||
                         abs_sum.has_nan() || abs_sum.positive_inf_count() > 0;
    bool fits = !special;
    if (fits) {
        const finite_part s = finite_part_of(sum), a = finite_part_of(abs_sum);
        if (a.size != 0) {  // else every term was ±0.0 (and Σt = 0): the empty value, flags and count set above
            const int low = s.size == 0 ? lowest_bit(a) : std::min(lowest_bit(a), lowest_bit(s));
            fits = top_bit_end(a) - low <= headroom_bits;  // |Σt| <= Σ|t|: Σt fits where Σ|t| does
            if (fits) {
                const u128 ms = s.size == 0 ? 0 : magnitude_over(s, low);
                store(merged, magnitude_over(a, low), s.negative ? -static_cast<i128>(ms) : static_cast<i128>(ms));
                merged.exponent = low;
                merged.state |= cell_saw_nonzero;
            }
        }
    }
    if (!fits) {
        merged.state |= cell_spilled;
        out.spills().push_back(compact_reference_array::spill{sum, abs_sum});
        merged.sum_lo = out.spills().size() - 1;
    }
    c = merged;
}

#define EXACTREF_CELL_ENTRIES(T) \
    template void add_terms_to_cell<T>(compact_reference_array&, std::size_t, std::span<const T>);
EXACTREF_CELL_ENTRIES(double)
EXACTREF_CELL_ENTRIES(float)
EXACTREF_CELL_ENTRIES(float16)
EXACTREF_CELL_ENTRIES(bfloat16)
#undef EXACTREF_CELL_ENTRIES

}  // namespace detail

#define EXACTREF_SCATTER_INDEX(T, I)                                                                                \
    template compact_reference_array segment_sum<T, I>(std::span<const T>, std::span<const I>, std::size_t,         \
                                                       std::span<const T>, out_of_range, unsigned);                 \
    template compact_reference_array scatter_add<T, I>(std::span<const T>, const array_shape&, int,                 \
                                                       std::span<const I>, const array_shape&, std::span<const T>,  \
                                                       const array_shape&, unsigned);                               \
    template compact_reference_array index_add<T, I>(std::span<const T>, const array_shape&, int,                   \
                                                     std::span<const I>, std::span<const T>, const array_shape&,    \
                                                     unsigned);                                                     \
    template compact_reference_array add_at<T, I>(std::span<const T>, std::span<const I>, std::span<const T>,       \
                                                  unsigned);                                                        \
    template compact_reference_array bincount<T, I>(std::span<const I>, std::span<const T>, std::size_t, unsigned); \
    template compact_reference_array embedding_bag_sum<T, I>(std::span<const T>, std::size_t, std::size_t,          \
                                                             std::span<const I>, std::span<const I>, bool,      \
                                                             unsigned);
#define EXACTREF_SCATTER(T)                                                                                        \
    EXACTREF_SCATTER_INDEX(T, std::int32_t)                                                                        \
    EXACTREF_SCATTER_INDEX(T, std::int64_t)                                                                        \
    template compact_reference_array inclusive_scan<T>(std::span<const T>, const array_shape&, int);               \
    template compact_reference_array exclusive_scan<T>(std::span<const T>, const array_shape&, int);
EXACTREF_SCATTER(double)
EXACTREF_SCATTER(float)
EXACTREF_SCATTER(float16)
EXACTREF_SCATTER(bfloat16)
#undef EXACTREF_SCATTER
#undef EXACTREF_SCATTER_INDEX

}  // namespace exactref

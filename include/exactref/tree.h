// exactref/tree.h — deterministic tree reductions: fixed shapes, fixed bits, on any number of threads.
//
// A reduction whose order of operations is fixed by the data's length alone gives the same bits on every machine,
// for every thread count, and (for sums) the same bits as the device trees of include/exactref/cuda/. Two shapes
// (a contract: these shapes, these bits; docs/same-bits.md explains them with pictures):
//
//   halving(L = 256), the canonical tree. The data is cut, in order, into leaves of L elements (the last may be
//     shorter). Inside a leaf, slot t is combined with slot t + L/2, then with t + L/4, ..., then with t + 1 — the
//     shape a 256-thread CUDA block uses in shared memory. A slot past the end of the data is absent, not a zero:
//     "combined with an absent slot" leaves the slot unchanged, so a lone -0.0 stays -0.0.
//   fold(L = 16). Leaves of L elements, each folded left to right starting from the op's identity
//     (((id ∘ x0) ∘ x1) ∘ ...); for a sum the identity is +0.0, so a leaf of -0.0 gives +0.0. With a mask, masked-out
//     elements are skipped, and a leaf with no kept element is absent.
//
//   Both then combine leaf results in pairs (0,1), (2,3), ...; an odd last node, or a node whose partner is absent,
//   is carried up unchanged; repeat to one value. Equivalently, the node at level k, index i, is the reduction of
//   the aligned leaves [i·2^k, (i+1)·2^k): so a run of L·2^q elements starting at a multiple of L·2^q is one subtree
//   (reduce_chunked relies on this).
//
//   e.g. halving(4) over [a, b, c, d, e]:  leaf 0 = (a + c) + (b + d), leaf 1 = e;  result = leaf 0 + leaf 1
//        fold(2) over [a, b, c]:           leaf 0 = (0 + a) + b,    leaf 1 = 0 + c;  result = leaf 0 + leaf 1
//
// Ops: sum, product, min, max, any, all. Element and accumulation types (tree_accumulation below):
//   double, float, float16, bfloat16 each accumulated in its own format: every operation is rounded to that format
//     (round to nearest, ties to even). For float16 and bfloat16 an addition or multiplication is made exactly in
//     binary64 — or, for a bfloat16 addition whose operands' exponents differ by more than 44, rounded once in
//     binary64, which is innocuous since 53 >= 2·8 + 2 (S. A. Figueroa, "When is double rounding innocuous?",
//     SIGNUM Newsletter 30(3), 1995) — and then rounded once to the format with integer operations
//     (round_double_to). So those results are correctly rounded operation by operation, as on hardware.
//   float16 and bfloat16 accumulated in float (Acc = float): elements are widened exactly, the reduction runs in
//     float, and the float result is returned (round it once with float16(float) for mixed(float32, float16)).
//   the integer types: sum and product wrap around (two's complement, modulo 2^bits — associative, so the shape does
//     not change the result) unless tree_options::check_overflow asks for overflow to be decided in tree order.
//
// min and max are IEEE 754-2019 minimum and maximum (§9.6): a NaN operand gives NaN, and -0.0 < +0.0; compared on
// the encodings, so they are associative and commutative and every shape gives the same value — except which NaN:
// with several NaN elements the result is one of them, which one may depend on the shape (IEEE 754 leaves the payload
// of an operation on several NaNs open, §6.2.3), and a signaling NaN element is returned as it is, not quieted.
// NaN results of float16/bfloat16 sums and products are the format's default quiet NaN (no payload). any and all return
// 1 or 0 in the accumulation type; an element counts as true when it is not ±0 (NaN counts as true, as in numpy).
//
// Determinism promised: for a given (shape, op, element type, accumulation type, data, mask) the result bits are the
// same for every OMP_NUM_THREADS, every run, every chunking reduce_chunked accepts, and every floating-point
// environment of the caller: each call computes in the default one (round to nearest even, no FTZ/DAZ) on the calling
// thread and on every OpenMP thread that helps, and gives each thread its own environment back on return
// (detail/fp_environment.h). So a caller's fesetround(FE_UPWARD) or FTZ/DAZ changes neither a sum nor its subnormals.
// Nothing promised for orders this header does not implement (atomics, block-iterated shapes).
//
// Error bound: a tree of height h (at most h roundings on a root-to-leaf path; tree_height) has
// |result - s| <= γ_h·Σ|x_i|, γ_h = h·u/(1 - h·u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// §4.2); covers(result, sum(xs), tree(tree_height(shape, n))) checks it exactly.
//
// Memory: O(n / L) leaf or block results beyond the input (in practice far less), plus L/2 accumulators per thread
// for halving leaves. Compiled without floating-point contraction or reassociation (src/tree*.cpp refuse
// -ffast-math), so the bits do not depend on the compiler either.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "exactref/format.h"

namespace exactref {

// ---- shapes ---------------------------------------------------------------------------------------------------------

/// The two leaf shapes (docs/same-bits.md).
enum class tree_kind { halving, fold };

/// A tree shape: the leaf kind and the leaf size L (a power of two, 2 <= L <= 2^30).
struct tree_shape {
    tree_kind kind = tree_kind::halving;
    std::size_t leaf = 256;

    /// "halving256", "fold16": the spelling parse_tree_shape reads and the Python face uses.
    std::string name() const;
    friend constexpr bool operator==(const tree_shape&, const tree_shape&) = default;
};

namespace detail {
[[noreturn]] void throw_bad_leaf(std::string_view kind, std::size_t leaf);
}  // namespace detail

/// The canonical tree: halving leaves of L elements (default 256). Throws std::invalid_argument unless L is a power of
/// two with 2 <= L <= 2^30.
constexpr tree_shape halving(std::size_t leaf = 256) {
    if (leaf < 2 || leaf > (std::size_t{1} << 30) || (leaf & (leaf - 1)) != 0) detail::throw_bad_leaf("halving", leaf);
    return tree_shape{tree_kind::halving, leaf};
}

/// Fold leaves of L elements (default 16), each folded left to right from the op's identity. Same L rule as halving.
constexpr tree_shape fold(std::size_t leaf = 16) {
    if (leaf < 2 || leaf > (std::size_t{1} << 30) || (leaf & (leaf - 1)) != 0) detail::throw_bad_leaf("fold", leaf);
    return tree_shape{tree_kind::fold, leaf};
}

/// Parses "halving256", "halving" (= halving256), "fold16", "fold" (= fold16), also with a colon ("fold:32").
/// Throws std::invalid_argument naming the accepted spellings.
tree_shape parse_tree_shape(std::string_view text);

/// The number of leaves over n elements: ceil(n / L).
constexpr std::uint64_t leaf_count(const tree_shape& shape, std::uint64_t n) noexcept {
    return n / shape.leaf + (n % shape.leaf != 0);
}

/// The height of the tree over n elements: the largest number of rounded operations on a path from an element to
/// the root, for use with tree(h) (standard.h). halving: ceil(log2 min(n, L)) + ceil(log2 m); fold:
/// (min(n, L) - 1) + ceil(log2 m), m = leaf_count (fold's first step, identity ∘ x0, is exact). 0 for n <= 1.
/// A mask can only shorten paths, so the height over n elements bounds every masked tree too.
///   tree_height(halving(), 1000)  // -> 8 + 2 = 10        tree_height(fold(), 1000)  // -> 15 + 6 = 21
std::uint64_t tree_height(const tree_shape& shape, std::uint64_t n) noexcept;

// ---- ops and options ------------------------------------------------------------------------------------------------

enum class reduce_op { sum, product, min, max, any, all };

/// "sum", "product", "min", "max", "any", "all".
std::string_view to_string(reduce_op op) noexcept;
/// Parses the names to_string gives. Throws std::invalid_argument listing them.
reduce_op parse_reduce_op(std::string_view text);

/// Options of tree_reduce.
struct tree_options {
    /// fold shapes only: element i takes part iff mask[i]; size must equal the data's. Empty: every element.
    std::span<const bool> mask{};
    /// Integer sum and product only: decide overflow in tree order and throw tree_overflow_error naming the node.
    bool check_overflow = false;
};

/// Options of reduce_chunked: one mask per chunk (fold only; each the size of its chunk), and the overflow check.
struct chunk_options {
    std::span<const std::span<const bool>> masks{};
    bool check_overflow = false;
};

/// Thrown by an integer sum or product with check_overflow when an operation of the tree overflows. The node named is
/// the first overflowing one in level order (lowest level, then lowest index), among nodes whose inputs did not
/// overflow: level 0 is inside leaf `index` (the message says which element or halving step); level k >= 1 is the
/// pairwise node `index` of level k, covering leaves [index·2^k, (index+1)·2^k).
class tree_overflow_error : public std::overflow_error {
public:
    tree_overflow_error(const std::string& what, std::uint64_t level, std::uint64_t index)
        : std::overflow_error(what), level_(level), index_(index) {}
    std::uint64_t level() const noexcept { return level_; }
    std::uint64_t index() const noexcept { return index_; }

private:
    std::uint64_t level_;
    std::uint64_t index_;
};

// ---- element and accumulation types ---------------------------------------------------------------------------------

/// The integer element types: the standard signed and unsigned integer types (int8_t .. int64_t, uint8_t ..
/// uint64_t, long long, ...); not bool and not the character types.
template <class T>
concept tree_integer =
    std::is_same_v<T, signed char> || std::is_same_v<T, short> || std::is_same_v<T, int> ||
    std::is_same_v<T, long> || std::is_same_v<T, long long> || std::is_same_v<T, unsigned char> ||
    std::is_same_v<T, unsigned short> || std::is_same_v<T, unsigned> || std::is_same_v<T, unsigned long> ||
    std::is_same_v<T, unsigned long long>;

/// The supported (element, accumulation) pairs: (T, T) for the four float formats and the integer types, and
/// (float16, float), (bfloat16, float).
template <class T, class Acc>
concept tree_accumulation =
    (std::is_same_v<T, Acc> && (floating_format<T> || tree_integer<T>)) ||
    (std::is_same_v<Acc, float> && (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>));

/// Tag for "accumulate in the element's own format": the default Acc of every reduction here and in orders.h.
struct same_as_input {};

/// The accumulation type: T when Acc is same_as_input, else Acc.
template <class Acc, class T>
using accumulation_t = std::conditional_t<std::is_same_v<Acc, same_as_input>, T, Acc>;

namespace detail {
// Defined in src/tree_*.cpp and instantiated there for every tree_accumulation pair (compiled without contraction).
template <class T, class Acc>
Acc tree_reduce(std::span<const T> xs, reduce_op op, const tree_shape& shape, const tree_options& options);
template <class T, class Acc>
Acc reduce_chunked(std::span<const std::span<const T>> chunks, reduce_op op, const tree_shape& shape,
                   const chunk_options& options);
}  // namespace detail

// ---- reductions -----------------------------------------------------------------------------------------------------

/// Reduces xs with `op` over the tree `shape`, accumulating in Acc (default: xs's own format).
///
///   xs       n elements of T (any n, 0 included), contiguous
///   op       sum | product | min | max | any | all
///   shape    halving(L) (default halving(256)) or fold(L)
///   options  mask (fold only), check_overflow (integer sum/product)
///
/// Returns the root's value; for n = 0 (or every element masked out) the op's identity: 0 for sum (+0.0), 1 for
/// product, +Inf (largest integer) for min, -Inf (lowest integer) for max, 0 for any, 1 for all.
/// Deterministic: the same bits for every thread count (OpenMP; parallel above a few thousand elements).
/// Error bound: γ_h·Σ|x_i| with h = tree_height(shape, n) (Higham §4.2). Special values: as the op's IEEE operations
/// give them (a NaN element makes a sum NaN; +Inf and -Inf make NaN), -0.0 as the shape decides (above).
/// Throws std::invalid_argument for a mask with a halving shape, a mask of the wrong size, or check_overflow with an
/// op or type it does not apply to; tree_overflow_error for a checked integer overflow.
///
///   std::vector<double> xs(1000, 0.1);
///   exactref::tree_reduce(std::span<const double>(xs));                       // halving(256) sum
///   exactref::tree_reduce(std::span<const double>(xs), reduce_op::max, fold());  // -> 0.1
///   exactref::tree_reduce<float>(std::span<const float16>(hs));               // float16 data, float accumulation
template <class Acc = same_as_input, class T>
    requires tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> tree_reduce(std::span<const T> xs, reduce_op op = reduce_op::sum,
                                   const tree_shape& shape = halving(), const tree_options& options = {}) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(xs, op, shape, options);
}

/// tree_reduce over any contiguous range (std::vector, std::array, ...).
template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> tree_reduce(const R& xs, reduce_op op = reduce_op::sum, const tree_shape& shape = halving(),
                                   const tree_options& options = {}) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(
        std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)), op, shape, options);
}

/// The tree sum: tree_reduce(xs, reduce_op::sum, shape).
///   exactref::tree_sum(std::vector<double>{-0.0});           // -> -0.0 (halving: the absent slots are not zeros)
///   exactref::tree_sum(std::vector<double>{-0.0}, fold());   // -> +0.0 (fold starts from +0.0)
template <class Acc = same_as_input, class T>
    requires tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> tree_sum(std::span<const T> xs, const tree_shape& shape = halving()) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(xs, reduce_op::sum, shape, {});
}
template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> tree_sum(const R& xs, const tree_shape& shape = halving()) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(
        std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)), reduce_op::sum, shape, {});
}

/// The same reduction as tree_reduce over the concatenation of `chunks`, computed chunk by chunk: each chunk is one
/// subtree, and the chunk results are combined pairwise ((0,1), (2,3), ..., odd last carried up). Same bits as
/// tree_reduce over the whole data, for chunks held in different places (threads, devices, files, ranks).
///
///   chunks   k chunks; every chunk but the last has exactly c = L·2^q elements (q >= 0, the same for all), and the
///            last has 1..c elements. A single chunk may have any size.
///   options  per-chunk masks (fold only), check_overflow (overflow nodes are named in the whole tree's numbering)
///
/// Throws std::invalid_argument, naming the chunk and the sizes that would be accepted, for any other chunking:
/// chunk results of other sizes are not subtrees of the tree, so combining them would change the bits.
///   // 3 chunks of 512 = 256·2 elements and a last one of 100: the bits of tree_reduce over all 1636
///   exactref::reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum);
template <class Acc = same_as_input, class T>
    requires tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> reduce_chunked(std::span<const std::span<const T>> chunks, reduce_op op = reduce_op::sum,
                                      const tree_shape& shape = halving(), const chunk_options& options = {}) {
    return detail::reduce_chunked<T, accumulation_t<Acc, T>>(chunks, op, shape, options);
}

}  // namespace exactref

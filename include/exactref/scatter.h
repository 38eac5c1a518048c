// exactref/scatter.h — exact references of scatter-adds and scans: segment sums, scatter_add / index_add, np.add.at,
// weighted bincount, embedding-bag sums, inclusive and exclusive scans (cumsum), and row sums, in compact reference
// arrays.
//
// Why: the nondeterministic kernels after full reductions and GEMM are atomic scatter-adds (every output element a sum
// of the updates that hit it, in whatever order the atomics landed) and scans. Their references have many output
// elements, so a full superaccumulator pair per element (~2.3 KB, reference.h) does not scale: 10^6 segments would
// need 2.3 GB. A compact_reference_array keeps each element's exact Σt and Σ|t| as two 128-bit integers over one
// shared exponent (48 bytes); an element whose terms span more than ~125 binades, or that meets Inf/NaN, moves to a
// full superaccumulator pair of its own ("spills"). Exact on any data (docs/scatter.md, "Compact reference arrays").
//
// Standards apply per element (covers.h: covers(results, compact_reference_array, model)): each element is a sum of
// its own n_i terms (its updates, plus the initial value when there is one), so any_order's bound is
// (n_i - 1)·u·S_i — the atomics model. exact, faithful, tree:H, split_k:S, mixed, directed and ftz apply per element
// as to any reference; a structured (levels:) standard takes its flat bound per element unless the array keeps that
// structure's data bound per element (keep_structures; sum_rows_compact with structures).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <array>  // the kept structured bounds
#include <atomic>  // the kept filter summaries
#include <bit>  // std::bit_cast
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>  // the kept filter summaries
#include <utility>  // std::pair
#include <span>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace exactref {

/// Exact references of many sums, a few words each (see the file comment). Row-major over shape().
///
/// Element i: exact s_i = Σ t, exact S_i = Σ|t| over the finite terms, n_i = count(i) terms (zeros, specials and an
/// initial value included), the special-value state (NaN, ±Inf, all terms -0.0) of a superaccumulator.
/// Memory: 48 bytes per element, plus ~2.3 KB for each spilled element (spilled()), plus 24 bytes per element kept
/// after the first covers() under a bound standard (filter_summaries(); dropped when the array changes).
/// Thread safety: const member functions may be called concurrently; add() needs exclusive access.
///
///   exactref::compact_reference_array r({3}, exactref::dtype::float32);
///   r.add(0, 0.1f); r.add(0, 0.2f); r.add(2, -1.0f);
///   r.exact(0);            // -> "0.300000004470348358154296875"
///   r.nearest<float>(1);   // -> 0.0f (no terms: +0.0)
class compact_reference_array {
public:
    compact_reference_array() = default;
    /// Every element empty (no terms: s = +0.0). Throws std::invalid_argument for a shape of rank other than 1 or 2
    /// or whose product overflows.
    compact_reference_array(std::vector<std::size_t> shape, dtype term_format);

    const std::vector<std::size_t>& shape() const noexcept { return shape_; }
    std::size_t size() const noexcept { return size_; }
    dtype term_format() const noexcept { return term_format_; }
    /// True for the references of a scan (inclusive_scan, exclusive_scan): stored as the terms and one checkpoint
    /// per scan_block elements of each line, so ~sizeof(T) + 2 bytes per element; an element's state is rebuilt
    /// from its checkpoint (at most scan_block exact additions). Such an array takes no add().
    bool is_scan() const noexcept { return scan_ != nullptr; }
    static constexpr std::size_t scan_block = 32;

    /// Adds one term of term_format() (raw bits) to element i exactly. Throws std::out_of_range for i >= size(),
    /// std::logic_error for a scan's array.
    void add_bits(std::size_t i, std::uint64_t bits);
    /// Adds x to element i. Throws std::invalid_argument when T is not term_format(), std::out_of_range as add_bits.
    template <floating_format T>
    void add(std::size_t i, T x) {
        check_format(format_traits<T>::info);
        add_bits(i, format_traits<T>::to_bits(x));
    }

    /// Adds terms[0], terms[1], ... to element i exactly, as add(i, terms[k]) for each k would (the same element
    /// state), in one call: a run shorter than kernel_terms goes term by term through the cell update of the
    /// builders; a longer one is summed by the superaccumulator's one-pass kernel (add_sum_and_abs) and the pair
    /// merged into the cell exactly (merge below). An empty run changes nothing. Throws std::invalid_argument when T
    /// is not term_format(), std::out_of_range for i >= size(), std::logic_error for a scan's array.
    ///   r.add(0, std::span<const float>(row));   // row = {0.5f, -0.25f}: exact(0) -> "0.25", count(0) -> 2
    template <floating_format T>
    void add(std::size_t i, std::span<const T> terms);
    /// Runs of at least this many terms take the superaccumulator's kernel in add(i, terms): per term it is ~8x
    /// faster than the cell update (~0.6 against ~5 ns), but it pays ~0.2 us per run to clear and read two
    /// superaccumulators, so the two meet near 50 terms (bench_scatter axis_sum_pieces, docs/scatter.md "Axis sums").
    static constexpr std::size_t kernel_terms = 64;
    /// Adds the terms a sum reference stands for (exactref::sum, reference.h: s, S, n, the special state) to element
    /// i exactly: the element then answers what a reference of its old terms and part's terms together would. The
    /// cell takes the merged value when it fits (s and S over one exponent within ~125 binades, no Inf or NaN), else
    /// the element spills to the merged pair. part.largest and part.structures are not kept.
    /// Throws std::invalid_argument when part.term_format is not term_format() or part is a dot product (is_dot),
    /// std::out_of_range for i >= size(), std::logic_error for a scan's array.
    void merge(std::size_t i, const reference& part);

    /// Structured data bounds kept per element (standard.h, levels:...; reference.h structure_bound): after
    /// keep_structures(models), element i carries, for each of the models' structures, the bound of its own terms
    /// — what exactref::sum(terms, {model}) would hold — so covers() under such a standard decides against
    /// min(flat bound, data bound) exactly as for the full reference, at the compact arrays' speed. Each element
    /// starts at +inf (no data bound: the flat bound decides) until set_structure_bound gives it one. Memory: 8 bytes
    /// per element, structure and (accumulation format, rounding) pair that can hold term_format() exactly (binary64
    /// terms 16 bytes, binary32 32, binary16 and bfloat16 48). Once kept, the array takes no more terms (add, merge:
    /// std::logic_error), since a bound describes the terms it was computed over. Calling it again replaces the set.
    /// Throws std::invalid_argument for a standard that is not structured, std::logic_error for a scan's array.
    void keep_structures(const std::vector<standard>& models);
    /// Element i's data bound of b.structure, one of the kept structures (b as structured_bound gives it for the
    /// element's terms). Throws std::invalid_argument when b.structure is not kept or b.leaves differs from
    /// count(i), std::out_of_range for i >= size().
    void set_structure_bound(std::size_t i, const structure_bound& b);
    /// The kept structures, in the order keep_structures took them ("levels:fold:8,any"; empty: none kept).
    const std::vector<std::string>& structures() const noexcept { return structures_.names; }
    /// Internal (covers.cpp): the kept bounds of `structure` for accumulation format `acc` and rounding, one double
    /// per element (structure_bound::error_for of each element's bound), or nullptr when not kept.
    const double* structure_bounds(const std::string& structure, dtype acc, bool directed) const noexcept;
    /// Internal (element()): element i's kept bounds appended to out.structures (out.count set).
    void append_structures(std::size_t i, reference& out) const;

    /// n_i. Throws std::out_of_range for i >= size() (as every accessor below).
    std::uint64_t count(std::size_t i) const;
    /// The smallest and largest n_i ({0, 0} when empty): O(1) for a scan or while filter summaries are kept, one pass
    /// over the cells otherwise.
    std::pair<std::uint64_t, std::uint64_t> count_range() const noexcept;
    /// The full reference of element i (its superaccumulators built on demand, ~2.3 KB), equal to what
    /// exactref::sum would give for the same terms, except `largest` (NaN: not kept).
    reference element(std::size_t i) const;
    void element(std::size_t i, reference& out) const;
    /// Element i as covers() judges it under `model`: for a structured (levels:) standard its kept data bound when
    /// the array keeps that structure (keep_structures); no bound of it when the array keeps others (covers() then
    /// refuses the standard, as for a reference built without it); else, when the array keeps none, the structure
    /// with an infinite data bound, so bound() and covers() take the structure's flat bound over n_i. Otherwise
    /// element(i), which carries every kept structure's bound.
    void element(std::size_t i, const standard& model, reference& out) const;
    reference element(std::size_t i, const standard& model) const {
        reference r;
        element(i, model, r);
        return r;
    }
    /// Elements index[0], index[1], ... (any order, repeats allowed) as a new rank-1 array of compact cells (a scan's
    /// elements rebuilt from their checkpoints). Throws std::out_of_range for an index >= size().
    compact_reference_array gather(std::span<const std::size_t> index) const;
    /// Every element as a reference_array (1 x size() for rank 1, rows x cols for rank 2); ~2.3 KB each.
    reference_array to_array() const;
    /// s_i correctly rounded to format f in `mode` (IEEE 754-2019 §4.3), raw bits; the superaccumulator's rules for
    /// specials and the sign of zero (accumulator.h). O(1) for a compact element.
    std::uint64_t nearest_bits(std::size_t i, const format_info& f, rounding mode = rounding::to_nearest_even) const;
    template <floating_format T>
    T nearest(std::size_t i, rounding mode = rounding::to_nearest_even) const {
        using tr = format_traits<T>;
        return tr::from_bits(static_cast<typename tr::bits_type>(nearest_bits(i, tr::info, mode)));
    }
    /// s_i as an exact decimal string (superaccumulator::to_decimal).
    std::string exact(std::size_t i) const;

    /// Bytes held: the cells (or a scan's terms and checkpoints) and the spilled elements' accumulators.
    std::size_t memory_bytes() const noexcept;
    /// Elements (a scan: checkpoints) that needed a full superaccumulator pair (terms spanning > ~125 binades, Inf or
    /// NaN).
    std::size_t spilled() const noexcept;

    /// One element's state: Σt = sum·2^exponent, Σ|t| = abs·2^exponent (two's complement 128-bit words, low first),
    /// or, when spilled, a superaccumulator pair. Internal (src/scatter.cpp, src/covers.cpp). Every finished array
    /// holds this form; only while a builder of src/scatter.cpp runs do its cells hold the positive and negative parts
    /// of the terms instead (docs/algorithms/compact-reference-array.md, "Builder form").
    struct cell {
        std::uint64_t abs_lo = 0, abs_hi = 0;  // Σ|t| / 2^exponent, < 2^126
        std::uint64_t sum_lo = 0, sum_hi = 0;  // Σt / 2^exponent (or the spill index when spilled)
        std::uint64_t count = 0;
        std::int32_t exponent = 0;
        std::uint32_t state = 0;               // cell_state bits (src/scatter.cpp)
    };
    static_assert(sizeof(cell) == 48, "48 bytes per element");
    struct spill {
        superaccumulator sum, abs_sum;
    };
    /// Storage of the cells: large arrays are backed by transparent huge pages where the kernel offers them
    /// (madvise), since first-touch page faults otherwise cost more than building the references.
    template <class T>
    struct large_array_allocator {
        using value_type = T;
        large_array_allocator() noexcept = default;
        template <class U>
        large_array_allocator(const large_array_allocator<U>&) noexcept {}
        T* allocate(std::size_t n);
        void deallocate(T* p, std::size_t n) noexcept;
        template <class U>
        bool operator==(const large_array_allocator<U>&) const noexcept { return true; }
    };
    using cell_vector = std::vector<cell, large_array_allocator<cell>>;

    /// Internal (covers.cpp): what the binary64 filter of covers() reads of one element. usable = false sends the
    /// element to the exact path (spilled elements: specials, or enclosures beyond binary64's range).
    struct filter_facts {
        bool usable = false;
        std::uint64_t count = 0;
        double s_lo = 0, s_hi = 0;  // RD and RU of s in binary64
        double w_lo = 0, w_hi = 0;  // RD and RU of S in binary64
    };
    /// Internal: element states in any order, O(1) per element when the order follows a scan's lines (covers()
    /// reads elements in order); one reader per thread.
    class reader {
    public:
        /// follow_lines: keep a cursor per line of a scan (up to 2^16 lines), for reading many elements in order;
        /// without it one cursor serves every query (a single element: no per-line allocation).
        explicit reader(const compact_reference_array& refs, bool follow_lines = true);
        ~reader();
        reader(const reader&) = delete;
        reader& operator=(const reader&) = delete;
        /// Element i's state; when it is spilled, pair(state) is its superaccumulator pair. Valid until the next call.
        const cell& state(std::size_t i);
        const spill& pair(const cell& c) const;
        filter_facts facts(std::size_t i);
        /// |r - s_i| enclosed in binary64 (RD and RU of the exact difference), from the cell's exact sum with
        /// integer operations only (covers.cpp: the ratio of a candidate for the worst element). False for a
        /// spilled element, a non-finite r, or when r and s_i over their common exponent need more than 125 bits.
        bool error_enclosure(std::size_t i, double r, double& lo, double& hi);
        /// As compact_reference_array::nearest_bits.
        std::uint64_t nearest_bits(std::size_t i, const format_info& f, rounding mode);

    private:
        struct cursor;
        const compact_reference_array& refs_;
        cursor* last_ = nullptr;  // the cursor whose state state() returned last (scans)
        std::size_t last_index_ = 0, last_line_ = 0, last_position_ = 0;
        std::vector<cursor> cursors_;  // a scan's lines (up to a limit), each at its last element
        std::unique_ptr<cursor> scratch_;
    };

    /// Internal (covers.cpp): element i's filter_facts in 24 bytes, for a covers() pass that streams them instead
    /// of the cells. s_lo and w_lo are RD of s and S in binary64; RU is the next double up when the matching
    /// inexact bit is set, else the same value (RD and RU of a real number are equal or adjacent doubles).
    struct filter_summary {
        double s_lo = 0, w_lo = 0;
        std::uint64_t word = 0;  // count | s_inexact | w_inexact | unusable (bits below)
        static constexpr std::uint64_t s_inexact = std::uint64_t{1} << 61;
        static constexpr std::uint64_t w_inexact = std::uint64_t{1} << 62;
        static constexpr std::uint64_t unusable = std::uint64_t{1} << 63;  // the exact path decides (spilled)
        static constexpr std::uint64_t count_mask = s_inexact - 1;
        /// RU from RD and the inexact bit, without a branch: the next encoding away from zero for lo >= +0.0, toward
        /// zero for lo < 0 (the builder checks each element against this and marks misfits unusable).
        static double upper(double lo, std::uint64_t inexact) noexcept {
            const auto b = std::bit_cast<std::uint64_t>(lo);
            const std::uint64_t negative = b >> 63;
            return std::bit_cast<double>(b + inexact - 2 * negative * inexact);
        }
    };
    static_assert(sizeof(filter_summary) == 24, "24 bytes per element");
    /// Internal (covers.cpp): size() summaries, computed from the finished array on the first call and kept until
    /// the array changes (add_bits, cells(), spills(), set_scan). Const calls may race: one computes, the others
    /// wait for it. 24 bytes per element more while kept.
    const filter_summary* filter_summaries() const;

    /// Internal, for the builders in src/scatter.cpp (non-const access drops the kept filter summaries).
    cell_vector& cells() noexcept {
        summaries_.reset();
        return cells_;
    }
    std::vector<spill>& spills() noexcept {
        summaries_.reset();
        return spills_;
    }
    struct scan_storage;
    void set_scan(std::vector<std::size_t> shape, dtype term_format, std::unique_ptr<scan_storage> scan);

private:
    void check_format(const format_info& f) const;
    void check_index(std::size_t i) const;
    std::vector<std::size_t> shape_;
    std::size_t size_ = 0;
    dtype term_format_ = dtype::float64;
    cell_vector cells_;
    std::vector<spill> spills_;
    std::shared_ptr<const scan_storage> scan_;  // immutable once built: copies share it
    // keep_structures (src/axis_sums.cpp): bounds[(structure·columns + column)·size + i], column column_of[slot] for
    // structure_bound::error[slot] (-1: that format cannot hold the terms, +inf); column-major, so a covers() pass
    // under one standard streams 8 bytes per element.
    struct kept_structures {
        std::vector<std::string> names;
        std::array<std::int8_t, 8> column_of{};
        std::size_t columns = 0;
        std::vector<double> bounds;
    };
    kept_structures structures_;
    void check_no_structures() const;
    // The filter summaries, built once per state of the array; a copy or a moved-to array starts without them.
    struct summary_slot {
        summary_slot() = default;
        summary_slot(const summary_slot&) noexcept {}
        summary_slot& operator=(const summary_slot&) noexcept {
            reset();
            return *this;
        }
        void reset() noexcept {
            ready.store(nullptr, std::memory_order_relaxed);
            data.reset();
        }
        std::mutex mutex;
        std::atomic<const filter_summary*> ready{nullptr};
        std::unique_ptr<filter_summary[]> data;
        std::pair<std::uint64_t, std::uint64_t> counts{0, 0};  // count_range() of the same state
    };
    mutable summary_slot summaries_;
};
using CompactReferenceArray = compact_reference_array;

/// Index types the builders take (torch int64, numpy intp, int32 indices of jax/TF).
template <class I>
concept index_type = std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>;

/// Threads of every builder below (threads = 0: exactref/threads.h's resolve_threads, EXACTREF_NUM_THREADS, else
/// OMP_NUM_THREADS, else every core; or that many), the same bits for every count (values, counts, flags, spills):
///   - the one-dimensional scatters with >= 8 terms per element: each thread adds a contiguous chunk of the input
///     into its own partial cells (48 bytes per element more per thread), merged exactly at the end; an element's
///     compact state depends only on its terms, not their order (docs/algorithms/compact-reference-array.md, T3);
///   - otherwise: the output is cut into contiguous ranges of elements, one per thread; each thread reads every index
///     and adds, in input order, the terms of its own elements (a heavy element, every id equal, is one thread's).
/// Fewer than 2 x detail::min_chunk_terms terms (65536) run on the calling thread, with no parallel region. Errors
/// name the same first offending position for every count. Throws std::invalid_argument, naming the variable,
/// for a bad EXACTREF_NUM_THREADS / OMP_NUM_THREADS when threads == 0.
///
/// What a builder does with an index outside the output: refuse it (std::invalid_argument naming the argument and
/// its first offending position) or drop the update (jax.ops.segment_sum, tf.math.unsorted_segment_sum with
/// negative ids).
enum class out_of_range { error, drop };

/// Segment sums (jax.ops.segment_sum, tf.math.unsorted_segment_sum, torch_scatter.segment_coo):
///   out[k] = initial[k] + Σ_{i: segment_ids[i] = k} values[i],   k = 0 .. num_segments - 1
///   values       n terms of format T;  segment_ids  n indices (sorted or not)
///   initial      empty, or num_segments values (one more term of each element, like beta = 1)
/// O(n + num_segments) time: one vectorized pass for the binades of the terms, then one pass adding them — when they
/// lie in a window narrow enough that no cell can spill and num_segments <= 2^18, through dense 32-byte parts with
/// one 128-bit addition per term (32 bytes per segment more while building; the 1-D scatters below do the same:
/// docs/algorithms/compact-reference-array.md, Step D). A segment with no terms is +0.0 (n_k = 0) or its initial.
/// Throws std::invalid_argument for mismatched lengths, and for an id outside [0, num_segments) unless ids = drop.
///   values {1, 2, 3, 4}, ids {0, 2, 0, 2}, num_segments 3  ->  exact [4, 0, 6]
template <floating_format T, index_type I>
compact_reference_array segment_sum(std::span<const T> values, std::span<const I> segment_ids,
                                    std::size_t num_segments, std::span<const T> initial = {},
                                    out_of_range ids = out_of_range::error, unsigned threads = 0);

/// A shape of rank 1 ({n}) or 2 ({rows, cols}), row-major.
using array_shape = std::vector<std::size_t>;

/// torch.Tensor.scatter_add_(dim, index, src) onto `initial` (rank 1 or 2; index and src of the same rank):
///   dim 0:  out[index[i][j]][j] += src[i][j];   dim 1:  out[i][index[i][j]] += src[i][j]   (rank 1: out[index[i]])
/// for every position (i, j) of index, whose extents must not exceed src's, nor initial's in the other dimension
/// (torch's rules). Every element of out has initial as one of its terms. Index values must lie in
/// [0, initial.shape[dim]) (torch rejects others). Throws std::invalid_argument naming the argument and position.
template <floating_format T, index_type I>
compact_reference_array scatter_add(std::span<const T> initial, const array_shape& initial_shape, int dim,
                                    std::span<const I> index, const array_shape& index_shape,
                                    std::span<const T> src, const array_shape& src_shape, unsigned threads = 0);

/// torch.Tensor.index_add_(dim, index, source) onto `initial` (rank 1 or 2):
///   dim 0:  out[index[i], :] += source[i, :];   dim 1:  out[:, index[j]] += source[:, j]
/// index has source.shape[dim] entries in [0, initial.shape[dim]); source's other extent equals initial's.
template <floating_format T, index_type I>
compact_reference_array index_add(std::span<const T> initial, const array_shape& initial_shape, int dim,
                                  std::span<const I> index, std::span<const T> source, const array_shape& source_shape,
                                  unsigned threads = 0);

/// np.add.at(a, indices, values) on a 1-D `initial`: out[indices[i]] += values[i] (values.size() == indices.size(),
/// or one value broadcast to every index). Negative indices count from the end, as numpy's; others outside
/// [-n, n) are refused.
template <floating_format T, index_type I>
compact_reference_array add_at(std::span<const T> initial, std::span<const I> indices, std::span<const T> values,
                               unsigned threads = 0);

/// np.bincount(x, weights, minlength): out[k] = Σ_{i: x[i] = k} weights[i], length max(max(x) + 1, minlength).
/// Negative x refused (numpy's ValueError). An empty x gives minlength elements with no terms.
template <floating_format T, index_type I>
compact_reference_array bincount(std::span<const I> x, std::span<const T> weights, std::size_t minlength = 0,
                                 unsigned threads = 0);

/// torch.nn.functional.embedding_bag(input, weight, offsets, mode="sum"): weight is num_embeddings x dim;
/// bag b holds indices[offsets[b] .. offsets[b+1]) (the last bag runs to the end, or with include_last_offset the
/// last offset closes the last bag); out[b][d] = Σ_{k in bag b} weight[indices[k]][d]. An empty bag has no terms.
/// offsets must start at 0 and not decrease; indices must lie in [0, num_embeddings).
template <floating_format T, index_type I>
compact_reference_array embedding_bag_sum(std::span<const T> weight, std::size_t num_embeddings, std::size_t dim,
                                          std::span<const I> indices, std::span<const I> offsets,
                                          bool include_last_offset = false, unsigned threads = 0);

/// Scans (np.cumsum, torch.cumsum, CUB/thrust inclusive_scan and exclusive_scan) along `axis` of a rank-1 or rank-2
/// row-major array: inclusive out[i] = Σ_{k <= i} x[k], exclusive out[i] = Σ_{k < i} x[k] (out[0] has no terms,
/// +0.0). n_i = i + 1 (inclusive) or i terms. O(n) time, one pass; 48 bytes per element on typical data.
/// Row sums of a row-major rows x cols matrix (np.sum(x, axis=1), torch.sum(x, dim=1)) into a rank-1 array of `rows`
/// compact cells: element i = Σ_j data[i·cols + j], n_i = cols terms (zeros, Inf and NaN included, as exactref::sum
/// counts them). The same references as sum_rows (reference.h) in 48 bytes per row instead of ~2.3 KB, element by
/// element: exact s_i and S_i, the special state, every rounding (element(i) equals sum_rows's reference except
/// `largest`, which is not kept). A row whose terms span more than ~125 binades, or that holds Inf or NaN, spills
/// (spilled()). Rows of at least kernel_terms terms are summed by the superaccumulator's kernel, shorter rows term by
/// term (compact_reference_array::add). cols = 0 gives `rows` elements with no terms (+0.0); rows = 0 an empty array.
/// Deterministic; one thread. Throws std::invalid_argument when data.size() != rows * cols.
///   data {1, 2, 3, 4, 5, 6}, rows 2, cols 3  ->  exact [6, 15], count [3, 3]
template <floating_format T>
compact_reference_array sum_rows_compact(std::span<const T> data, std::size_t rows, std::size_t cols);
/// The same, with each row's data bounds of the structured standards `structures` kept (keep_structures): covers()
/// under one of them judges row i against min(flat bound, the bound of row i's terms), as sum_rows's reference of
/// that row built with exactref::sum(row, structures) would be judged, with the same verdicts and worst element.
/// One more pass over each row per structure (structured_bound). Throws std::invalid_argument as sum_rows_compact,
/// and for a standard that is not structured or whose groups do not fit cols terms.
///   sum_rows_compact(data, 1000000, 10, {parse_standard("levels:fold:8,any")})  // 48 + 32 bytes per float32 row
template <floating_format T>
compact_reference_array sum_rows_compact(std::span<const T> data, std::size_t rows, std::size_t cols,
                                         const std::vector<standard>& structures);

template <floating_format T>
compact_reference_array inclusive_scan(std::span<const T> values, const array_shape& shape, int axis = 0);
template <floating_format T>
compact_reference_array exclusive_scan(std::span<const T> values, const array_shape& shape, int axis = 0);

}  // namespace exactref

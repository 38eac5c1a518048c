// Exact references from Python arrays, and the per-element queries behind exactref.Reference (references.h).
//
// Sums read the input in place: a contiguous block goes to the superaccumulator's blocked fast path as one span
// (no copy); a block whose innermost axis is contiguous goes row by row; anything else is gathered into a small
// fixed buffer (8192 elements) and added buffer by buffer, so memory stays O(1) in the input size. Structured
// standards (levels:..., reference.h structured_bound) need each block as one span in C order: a contiguous block is
// passed in place, any other is copied into one buffer of the block's size first. Without structured standards the
// references of a sum over axes go into a compact_reference_array (scatter.h, 48 bytes per element) with each
// element's largest term beside it; with them, one full reference per element (they carry per-element data bounds).
//
// Pickling (exactref.Reference.__reduce__) exports every field of each reference, the accumulators as their exact
// value, counts and flags, the largest term and the structured bounds, and rebuilds them with the accumulator's own
// operations, checking that each reads back the same state.
#include "references.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>  // std::memcpy: strided results gathered as raw bytes
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "arrays.h"
#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/io.h"
#include "exactref/standard.h"
#include "exactref/threads.h"
#include "exactref/ulp.h"

namespace exactref::python {

namespace {

using index_array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

constexpr std::size_t gather_size = 8192;

// ---- sums over trailing axes ----------------------------------------------------------------------------------------

// Adds xs to r in one pass (s, S and max|x_i| at once: detail::add_sum_abs_largest), on `threads` threads (already
// resolved) when xs is long enough for several chunks (exactref::sum with sum_options, merged exactly).
template <class T>
void add_span(reference& r, std::span<const T> xs, unsigned threads) {
    if (detail::chunk_count(xs.size(), threads) > 1) {
        const reference part = sum(xs, sum_options{threads});
        r.sum.merge(part.sum);
        r.abs_sum.merge(part.abs_sum);
        r.largest = std::max(r.largest, part.largest);
        return;
    }
    std::uint64_t largest = 0;
    detail::add_sum_abs_largest(xs, r.sum, r.abs_sum, largest);
    r.largest = std::max(r.largest, to_double_exact(format_traits<T>::info, largest));  // max |x_i|, finite terms
}

// The k-dimensional block at `base` as one C-order buffer (for structured_bound, which reads one span).
template <class T>
std::vector<T> gather_block(const T* base, const std::int64_t* shape, const std::int64_t* strides, std::size_t k) {
    std::size_t count = 1;
    for (std::size_t d = 0; d < k; ++d) count *= static_cast<std::size_t>(shape[d]);
    std::vector<T> out;
    out.reserve(count);
    if (count == 0) return out;
    std::vector<std::int64_t> idx(k, 0);
    std::int64_t offset = 0;
    for (;;) {
        out.push_back(base[offset]);
        std::size_t d = k;
        for (; d > 0; --d) {
            const std::size_t axis = d - 1;
            if (++idx[axis] < shape[axis]) {
                offset += strides[axis];
                break;
            }
            offset -= (shape[axis] - 1) * strides[axis];
            idx[axis] = 0;
        }
        if (d == 0) break;
    }
    return out;
}

bool is_c_contiguous(const std::int64_t* shape, const std::int64_t* strides, std::size_t k) {
    std::int64_t expected = 1;
    for (std::size_t d = k; d-- > 0;) {
        if (shape[d] != 1 && strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

// The structured bounds of one block (each standard's data bound, one pass over the block per standard), given to
// keep(bound) one by one: the block in place when it is C-contiguous, else copied into `copy` first.
template <class T, class Keep>
void for_each_structure(const T* base, const std::int64_t* shape, const std::int64_t* strides, std::size_t k,
                        const std::vector<standard>& structures, std::vector<T>& copy, Keep&& keep) {
    if (structures.empty()) return;
    std::size_t count = 1;
    for (std::size_t d = 0; d < k; ++d) count *= static_cast<std::size_t>(shape[d]);
    std::span<const T> xs(base, count);
    if (count > 0 && !is_c_contiguous(shape, strides, k)) {
        copy = gather_block(base, shape, strides, k);
        xs = std::span<const T>(copy);
    }
    for (const standard& m : structures) keep(structured_bound(xs, m));
}

// Passes the k-dimensional block at `base` (shape, strides in elements) to add(span, threads) as runs of its terms in
// C order: the whole block when it is contiguous, else its rows in place (innermost axis contiguous) or gathered
// buffers (threads = 1 for those).
template <class T, class Add>
void for_each_run(const T* base, const std::int64_t* shape, const std::int64_t* strides, std::size_t k,
                  std::vector<T>& buffer, unsigned threads, Add&& add) {
    std::size_t count = 1;
    for (std::size_t d = 0; d < k; ++d) count *= static_cast<std::size_t>(shape[d]);
    if (count == 0) return;
    // C-contiguous (axes of length 1 may have any stride): one span, the fast path, no copy.
    if (is_c_contiguous(shape, strides, k)) {
        add(std::span<const T>(base, count), threads);
        return;
    }
    const bool rows = strides[k - 1] == 1;   // innermost axis contiguous: add row spans in place
    const std::size_t outer_dims = rows ? k - 1 : k;
    const std::size_t row_length = rows ? static_cast<std::size_t>(shape[k - 1]) : 1;
    std::vector<std::int64_t> idx(outer_dims, 0);
    std::int64_t offset = 0;
    buffer.clear();
    for (;;) {
        if (rows) {
            add(std::span<const T>(base + offset, row_length), threads);
        } else {
            buffer.push_back(base[offset]);
            if (buffer.size() == gather_size) {
                add(std::span<const T>(buffer), 1u);
                buffer.clear();
            }
        }
        // Odometer over the outer_dims axes, last fastest (C order); done when every axis wrapped.
        std::size_t d = outer_dims;
        for (; d > 0; --d) {
            const std::size_t axis = d - 1;
            if (++idx[axis] < shape[axis]) {
                offset += strides[axis];
                break;
            }
            offset -= (shape[axis] - 1) * strides[axis];
            idx[axis] = 0;
        }
        if (d == 0) break;
    }
    if (!buffer.empty()) add(std::span<const T>(buffer), 1u);
}

// Calls block(i, offset) for each output element i of x summed over its last `reduce` axes, in C order, with
// `offset` (in elements) the position of its block.
template <class Block>
void for_each_output(const host_view& v, std::size_t reduce, std::size_t outputs, Block&& block) {
    const std::size_t keep = v.shape.size() - reduce;
    std::vector<std::int64_t> idx(keep, 0);
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < outputs; ++i) {
        block(i, offset);
        for (std::size_t d = keep; d-- > 0;) {
            if (++idx[d] < v.shape[d]) {
                offset += v.strides[d];
                break;
            }
            offset -= (v.shape[d] - 1) * v.strides[d];
            idx[d] = 0;
        }
    }
}

std::size_t outputs_of(const host_view& v, std::size_t reduce) {
    std::size_t outputs = 1;
    for (std::size_t d = 0; d + reduce < v.shape.size(); ++d) outputs *= static_cast<std::size_t>(v.shape[d]);
    return outputs;
}

// One full reference per output element (~2.3 KB each), with the data bounds of `structures`.
template <class T>
void sum_trailing_typed(const host_view& v, std::size_t reduce, const std::vector<standard>& structures,
                        unsigned threads, reference_list& out) {
    const std::size_t keep = v.shape.size() - reduce;
    out.items.assign(outputs_of(v, reduce), reference{});
    for (reference& r : out.items) {
        r.term_format = format_traits<T>::info.id;
        r.largest = 0;  // as exactref::sum: 0 for no finite term
    }
    const T* base = reinterpret_cast<const T*>(v.data);
    std::vector<T> buffer;
    for_each_output(v, reduce, out.items.size(), [&](std::size_t i, std::int64_t offset) {
        reference& r = out.items[i];
        for_each_run(base + offset, v.shape.data() + keep, v.strides.data() + keep, reduce, buffer, threads,
                     [&](std::span<const T> xs, unsigned t) {
                         r.count += xs.size();
                         add_span(r, xs, t);
                     });
        for_each_structure<T>(base + offset, v.shape.data() + keep, v.strides.data() + keep, reduce, structures, buffer,
                              [&](structure_bound b) { r.structures.push_back(std::move(b)); });
        r.cache_enclosures();  // for covers() over arrays (reference.h)
    });
}

// The same references in a compact_reference_array (scatter.h: 48 bytes per element, a spill where one needs it)
// and max|x_i| per element beside it (8 bytes), filled run by run: compact_reference_array::add (the cell update for
// short runs, the superaccumulator kernel from kernel_terms on), or a run long enough for several threads summed by
// exactref::sum on them and merged. Each element answers what its full reference would (tests/python/test_sum.py).
// With structures, each element's data bounds are kept beside (keep_structures: 8 bytes per element, structure and
// accumulation format and rounding that hold the terms), computed over the block in a second pass.
template <class T>
void sum_trailing_compact_typed(const host_view& v, std::size_t reduce, const std::vector<standard>& structures,
                                unsigned threads, reference_list& out) {
    const std::size_t keep = v.shape.size() - reduce;
    const std::size_t outputs = outputs_of(v, reduce);
    compact_reference_array refs({outputs}, format_traits<T>::info.id);
    std::vector<double> largest(outputs, 0.0);  // as exactref::sum: 0 for no finite term
    const T* base = reinterpret_cast<const T*>(v.data);
    std::vector<T> buffer;
    for_each_output(v, reduce, outputs, [&](std::size_t i, std::int64_t offset) {
        for_each_run(base + offset, v.shape.data() + keep, v.strides.data() + keep, reduce, buffer, threads,
                     [&](std::span<const T> xs, unsigned t) {
                         if (detail::chunk_count(xs.size(), t) > 1) {
                             const reference part = sum(xs, sum_options{t});
                             refs.merge(i, part);
                             largest[i] = std::max(largest[i], part.largest);
                             return;
                         }
                         refs.add(i, xs);
                         largest[i] = std::max(largest[i], largest_magnitude(xs));
                     });
    });
    if (!structures.empty()) {
        refs.keep_structures(structures);
        for_each_output(v, reduce, outputs, [&](std::size_t i, std::int64_t offset) {
            for_each_structure<T>(base + offset, v.shape.data() + keep, v.strides.data() + keep, reduce, structures,
                                  buffer, [&](const structure_bound& b) { refs.set_structure_bound(i, b); });
        });
    }
    out.compact = std::make_shared<const compact_reference_array>(std::move(refs));
    out.largest = std::make_shared<const std::vector<double>>(std::move(largest));
}

reference_list sum_trailing(const any_array& a, const std::optional<std::string>& as_dtype, std::size_t reduce,
                            const std::vector<standard>& structures, unsigned threads, bool compact) {
    const unsigned workers = detail::resolve_threads(threads);  // std::invalid_argument (ValueError) for a bad variable
    const host_view v = view_of(a, as_dtype, "x");
    if (reduce > v.shape.size())
        throw nb::value_error(("sum: cannot reduce " + std::to_string(reduce) + " axes of a " +
                               std::to_string(v.shape.size()) + "-dimensional array")
                                  .c_str());
    reference_list out;
    out.term_format = v.type;
    nb::gil_scoped_release release;
    with_storage(v.type, [&](auto tag) {
        using T = decltype(tag);
        if (compact) sum_trailing_compact_typed<T>(v, reduce, structures, workers, out);
        else sum_trailing_typed<T>(v, reduce, structures, workers, out);
    });
    return out;
}

// The fast path of er.sum(x) for a C-contiguous, native, aligned float64/32/16 numpy array summed whole: the buffer
// protocol (no DLPack capsule, no view object), one exactref::sum over the memory in place (no copy), the GIL released
// only when the work outweighs its cost. None when x is anything else; the general path (sum_trailing) then decides.
constexpr std::size_t release_gil_terms = 1u << 14;

nb::object sum_contiguous(nb::handle x, unsigned threads) {
    Py_buffer view;
    if (PyObject_GetBuffer(x.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
        PyErr_Clear();
        return nb::none();
    }
    struct release_buffer {
        Py_buffer* v;
        ~release_buffer() { PyBuffer_Release(v); }
    } guard{&view};
    const std::string_view format = view.format != nullptr ? view.format : "";
    std::optional<dtype> type;
    if (format == "d" && view.itemsize == 8) type = dtype::float64;
    else if (format == "f" && view.itemsize == 4) type = dtype::float32;
    else if (format == "e" && view.itemsize == 2) type = dtype::float16;
    if (!type || !PyBuffer_IsContiguous(&view, 'C') ||
        reinterpret_cast<std::uintptr_t>(view.buf) % static_cast<std::uintptr_t>(view.itemsize) != 0)
        return nb::none();
    const auto n = static_cast<std::size_t>(view.len / view.itemsize);
    const unsigned workers = detail::resolve_threads(threads);
    reference_list out;
    out.term_format = *type;
    out.items.reserve(1);
    auto run = [&] {
        with_storage(*type, [&](auto tag) {
            using T = decltype(tag);
            out.items.push_back(sum(std::span<const T>(static_cast<const T*>(view.buf), n), sum_options{workers}));
        });
    };
    if (n >= release_gil_terms) {
        nb::gil_scoped_release release;
        run();
    } else {
        run();
    }
    return nb::cast(std::move(out));
}

// ---- per-element queries ----------------------------------------------------------------------------------------------

}  // namespace

void reference_list::check(std::int64_t i) const {
    if (i < 0 || static_cast<std::size_t>(i) >= size())
        throw nb::index_error(("reference index " + std::to_string(i) + " out of range for " +
                               std::to_string(size()) + " references")
                                  .c_str());
}

const reference& reference_list::get(std::int64_t i, reference& scratch) const {
    check(i);
    const std::size_t k = static_cast<std::size_t>(i);
    if (compact) {
        compact->element(k, scratch);
        if (largest) scratch.largest = (*largest)[k];
        return scratch;
    }
    if (products.empty()) return items[k];
    const bool lone = products.size() == 1;  // one product, or a batch sharing one (rows stacked)
    const product_reference& p = lone ? *products[0] : *products[k / block];
    const std::size_t e = lone ? k : k % block;
    p.element(e / p.cols(), e % p.cols(), scratch);
    return scratch;
}

const reference& reference_list::get(std::int64_t i, reference& scratch, const standard& model) const {
    if (!compact) return get(i, scratch);
    check(i);
    compact->element(static_cast<std::size_t>(i), model, scratch);
    if (largest) scratch.largest = (*largest)[static_cast<std::size_t>(i)];
    return scratch;
}

namespace {

rounding parse_rounding(const std::string& name) {
    if (name == "nearest" || name == "to_nearest_even" || name == "rn") return rounding::to_nearest_even;
    if (name == "toward_zero" || name == "rz") return rounding::toward_zero;
    if (name == "upward" || name == "ru") return rounding::upward;
    if (name == "downward" || name == "rd") return rounding::downward;
    throw nb::value_error(("rounding='" + name +
                           "': expected 'nearest' (ties to even), 'toward_zero', 'upward' or 'downward'")
                              .c_str());
}

// The exact finite part of an accumulator as (negative, magnitude little-endian bytes, exponent), with the special
// state first: "nan", "inf", "-inf" or "finite" (superaccumulator rules, accumulator.h).
std::tuple<std::string, bool, nb::bytes, int> exact_parts(const superaccumulator& acc) {
    std::string state = "finite";
    const bool pos = acc.positive_inf_count() > 0, neg = acc.negative_inf_count() > 0;
    if (acc.has_nan() || (pos && neg)) state = "nan";
    else if (pos) state = "inf";
    else if (neg) state = "-inf";
    const dyadic d = acc.to_dyadic();
    std::string bytes;
    bytes.reserve(d.magnitude.size() * 4);
    for (std::uint32_t w : d.magnitude)
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((w >> (8 * b)) & 0xffu));
    return {state, d.negative, nb::bytes(bytes.data(), bytes.size()), d.exponent};
}

struct results_view {
    host_view view;
    const format_info* format;
};

results_view results_of(const any_array& results, const std::optional<std::string>& as_dtype) {
    results_view r{view_of(results, as_dtype, "result"), nullptr};
    if (r.view.shape.size() != 1)
        throw nb::value_error("internal: results must be passed as a one-dimensional array");
    r.format = &info(r.view.type);
    return r;
}


void check_lengths(const index_array& index, const results_view& r) {
    if (static_cast<std::size_t>(r.view.shape[0]) != index.shape(0))
        throw nb::value_error("internal: index and results differ in length");
}


// Results in runs of `run` elements in element order (a whole Reference: r.shape, or a stack of runs), each run cut
// into `blocks` (offset, size): judge(bytes, at, size) gets every block's raw bytes — in place when the results are
// contiguous, else gathered one block at a time — and its first flat position.
template <class Judge>
void judge_runs(const host_view& results, std::size_t run, const format_info& format,
                std::span<const std::pair<std::size_t, std::size_t>> blocks, Judge&& judge) {
    const std::size_t n = results.size();
    if (n == 0) return;
    if (run == 0 || n % run != 0) throw nb::value_error("internal: results are not whole runs of the references");
    const std::size_t width = static_cast<std::size_t>(format.storage_bits / 8);
    const bool contiguous = results.strides.empty() || results.strides[0] == 1;
    std::vector<std::byte> gathered;
    for (std::size_t start = 0; start < n; start += run)
        for (const auto& [offset, size] : blocks) {
            const std::size_t at = start + offset;
            if (contiguous) {
                judge(std::span<const std::byte>(results.data + at * width, size * width), at, size);
                continue;
            }
            gathered.resize(size * width);
            for (std::size_t k = 0; k < size; ++k) {
                const std::uint64_t bits = bits_at(results, at + k);
                std::memcpy(gathered.data() + k * width, &bits, width);  // the low bytes (little-endian)
            }
            judge(std::span<const std::byte>(gathered), at, size);
        }
}

// covers() of a compact reference array over runs of results in element order, read in place when they are
// contiguous: no index, no copy of the results.
void covers_compact_runs(const compact_reference_array& refs, const host_view& results, const format_info& format,
                         const standard& model, std::vector<std::uint8_t>& covered) {
    const std::pair<std::size_t, std::size_t> whole{0, refs.size()};
    judge_runs(results, refs.size(), format, std::span(&whole, 1),
               [&](std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
                   detail::covers_flags(format, bytes, refs, model, std::span<std::uint8_t>(covered).subspan(at, size));
               });
}

// True when index is 0, 1, ..., size - 1, repeated (one run per element, or a stack of runs).
bool is_tiled_identity(const index_array& index, std::size_t size) {
    const std::size_t n = index.shape(0);
    if (size == 0 || n % size != 0) return false;
    for (std::size_t k = 0; k < n; ++k)
        if (static_cast<std::size_t>(index(k)) != k % size) return false;
    return true;
}

// covers() of a compact reference array: its own filter (covers_flags, compact overload) over each run of results
// in element order, or over the indexed elements gathered into an array of their own (48 bytes each: r[mask],
// broadcast results) — never a full reference per element.
void covers_compact(const compact_reference_array& refs, const index_array& index, const host_view& results,
                    const format_info& format, const standard& model, std::vector<std::uint8_t>& covered) {
    const std::size_t n = index.shape(0);
    if (n == 0) return;
    if (is_tiled_identity(index, refs.size())) return covers_compact_runs(refs, results, format, model, covered);
    std::vector<std::uint64_t> bits(n);
    for (std::size_t k = 0; k < n; ++k) bits[k] = bits_at(results, k);
    std::vector<std::size_t> positions(n);
    for (std::size_t k = 0; k < n; ++k) positions[k] = static_cast<std::size_t>(index(k));
    const compact_reference_array picked = refs.gather(positions);
    detail::covers_flags(format, bits, picked, model, std::span<std::uint8_t>(covered));
}

// covers() of exact matrix products over runs of results in element order (a whole er.matmul Reference): each
// product judges its block of each run in place (detail::covers_flags over the product, no reference per element).
void covers_product_runs(const reference_list& refs, const host_view& results, const format_info& format,
                         const standard& model, std::vector<std::uint8_t>& covered) {
    std::vector<std::pair<std::size_t, std::size_t>> blocks;
    for (std::size_t p = 0; p < refs.products.size(); ++p)
        blocks.emplace_back(p * refs.block, refs.products[p]->rows() * refs.products[p]->cols());
    judge_runs(results, refs.size(), format, blocks, [&](std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
        const std::size_t p = refs.products.size() == 1 ? 0 : (at % refs.size()) / refs.block;
        detail::covers_flags(format, bytes, *refs.products[p], model, std::span<std::uint8_t>(covered).subspan(at, size));
    });
}

// covers() of a whole compact Reference or er.matmul Reference (Python's Reference over every element in order): runs
// of results, no index.
nb::object covers_whole(const reference_list& refs, const any_array& results, const std::optional<std::string>& as_dtype,
                        const standard& model) {
    if (!refs.compact && refs.products.empty())
        throw nb::value_error("internal: covers_whole takes a compact or matrix-product reference list");
    const results_view r = results_of(results, as_dtype);
    std::vector<std::uint8_t> covered(r.view.size());
    {
        nb::gil_scoped_release release;
        if (refs.compact) covers_compact_runs(*refs.compact, r.view, *r.format, model, covered);
        else covers_product_runs(refs, r.view, *r.format, model, covered);
    }
    return numpy_from(std::move(covered));
}

nb::object covers_detail(const reference_list& refs, const index_array& index, const any_array& results,
                         const std::optional<std::string>& as_dtype, const standard& model, bool with_numbers) {
    const results_view r = results_of(results, as_dtype);
    check_lengths(index, r);
    const std::size_t n = index.shape(0);
    for (std::size_t i = 0; i < n; ++i) refs.check(index(i));
    std::vector<std::uint8_t> covered(n);
    if (!with_numbers && refs.compact) {
        {
            nb::gil_scoped_release release;
            covers_compact(*refs.compact, index, r.view, *r.format, model, covered);
        }
        return numpy_from(std::move(covered));
    }
    if (!with_numbers) {
        // covers(): the array engine (binary64 filter, exact path where it cannot decide), GIL released, in
        // batches so that matrix-product elements are built into a bounded scratch (references.h).
        {
            nb::gil_scoped_release release;
            constexpr std::size_t batch = 4096;
            std::vector<std::uint64_t> bits;
            std::vector<const reference*> owners;
            std::vector<reference> scratch(refs.products.empty() ? 0 : std::min(batch, n));
            for (std::size_t start = 0; start < n; start += batch) {
                const std::size_t len = std::min(batch, n - start);
                bits.resize(len);
                owners.resize(len);
                for (std::size_t k = 0; k < len; ++k) {
                    bits[k] = bits_at(r.view, start + k);
                    if (refs.products.empty()) {
                        owners[k] = &refs.items[static_cast<std::size_t>(index(start + k))];
                    } else {
                        const std::int64_t at = index(start + k);
                        const bool repeated = k > 0 && index(start + k - 1) == at;  // a stack of runs, or broadcasting
                        owners[k] = repeated ? owners[k - 1] : &refs.get(at, scratch[k]);
                    }
                }
                detail::covers_flags(*r.format, bits, owners, model, std::span<std::uint8_t>(covered.data() + start, len));
            }
        }  // the GIL is back: numpy_from makes a Python object
        return numpy_from(std::move(covered));
    }
    std::vector<double> ratio(n), error(n), ulps(n);
    {
        nb::gil_scoped_release release;
        reference scratch;
        for (std::size_t i = 0; i < n; ++i) {
            const decision v = decide_bits(*r.format, bits_at(r.view, i), refs.get(index(i), scratch, model), model);
            covered[i] = v.covered ? 1 : 0;
            if (with_numbers) {
                ratio[i] = v.ratio;
                error[i] = v.error;
                ulps[i] = v.ulps;
            }
        }
    }
    if (!with_numbers) return numpy_from(std::move(covered));
    return nb::make_tuple(numpy_from(std::move(covered)), numpy_from(std::move(ratio)),
                          numpy_from(std::move(error)), numpy_from(std::move(ulps)));
}

// ---- pickling: the exact state of a reference ------------------------------------------------------------------------

// Everything a superaccumulator holds that anyone can observe: the exact finite value (as to_dyadic gives it), the
// term count, the special-value state (NaN seen, +Inf and -Inf counts) and the signed-zero state.
struct accumulator_state {
    bool negative = false;
    std::vector<std::uint32_t> words;  // magnitude, little-endian, no leading zero word (dyadic)
    int exponent = 0;
    std::uint64_t terms = 0, positive_inf = 0, negative_inf = 0;
    bool nan = false, all_negative_zero = false, all_positive_zero = false;
    bool operator==(const accumulator_state&) const = default;
};

// Python form: (negative, magnitude bytes little-endian, exponent, terms, +Inf count, -Inf count, NaN seen,
// all terms -0.0, all terms +0.0).
using accumulator_tuple =
    std::tuple<bool, nb::bytes, int, std::uint64_t, std::uint64_t, std::uint64_t, bool, bool, bool>;
// One structured bound: (structure, the 8 bounds error[2·dtype + directed], leaves) (reference.h, structure_bound).
using structure_tuple = std::tuple<std::string, std::vector<double>, std::uint64_t>;
// (n, term dtype, is_dot, product_may_underflow, min_product_exponent, has_initial, s, S, largest term (None when
// unknown: dots, GEMM), structured bounds): every field of exactref::reference (reference.h).
using reference_tuple = std::tuple<std::uint64_t, std::string, bool, bool, int, bool, accumulator_tuple,
                                   accumulator_tuple, std::optional<double>, std::vector<structure_tuple>>;

accumulator_state state_of(const superaccumulator& acc) {
    dyadic d = acc.to_dyadic();
    return {d.negative,           std::move(d.magnitude),   d.exponent,
            acc.term_count(),     acc.positive_inf_count(), acc.negative_inf_count(),
            acc.has_nan(),        acc.all_negative_zero(),  acc.all_positive_zero()};
}

[[noreturn]] void not_a_state(const std::string& why) {
    throw nb::value_error(("not the pickled state of an exactref reference: " + why).c_str());
}

// Rebuilds an accumulator from its state with the accumulator's own operations (the value word by word, then the
// specials, then the other terms with their signed-zero flags) and checks that it reads back the same state.
superaccumulator accumulator_from(const accumulator_state& st) {
    constexpr int lsb = superaccumulator::lsb_exponent;
    constexpr int top = lsb + superaccumulator::chunk_bits * superaccumulator::chunk_count;
    if (!st.words.empty() &&
        (st.exponent < lsb || st.exponent >= top || (st.exponent - lsb) % superaccumulator::chunk_bits != 0 ||
         static_cast<std::size_t>((st.exponent - lsb) / superaccumulator::chunk_bits) + st.words.size() >
             static_cast<std::size_t>(superaccumulator::chunk_count)))
        not_a_state("a magnitude outside the accumulator's range");
    if (st.positive_inf > st.terms || st.negative_inf > st.terms - st.positive_inf ||
        (st.nan ? 1u : 0u) > st.terms - st.positive_inf - st.negative_inf)
        not_a_state("more special terms than terms");
    if (st.all_negative_zero && st.all_positive_zero) not_a_state("every term both -0.0 and +0.0");
    // Every producer that adds a non-zero finite term notes it as neither -0.0 nor +0.0.
    if (!st.words.empty() && (st.all_negative_zero || st.all_positive_zero))
        not_a_state("every term a signed zero, but a non-zero value");
    const std::uint64_t specials = st.positive_inf + st.negative_inf + (st.nan ? 1u : 0u);
    superaccumulator acc;
    for (std::size_t k = 0; k < st.words.size(); ++k) {
        const auto w = static_cast<std::int64_t>(st.words[k]);
        if (w != 0)
            acc.add_lane_sum(st.negative ? -w : w,
                             st.exponent + superaccumulator::chunk_bits * static_cast<int>(k));
    }
    if (st.nan) acc.note_special(true, false);
    exactref::detail::add_infinities(acc, st.positive_inf, false);
    exactref::detail::add_infinities(acc, st.negative_inf, true);
    const bool any = st.terms > 0;
    acc.note_terms(st.terms - specials, any && !st.all_negative_zero, any && !st.all_positive_zero);
    if (!(state_of(acc) == st)) not_a_state("it does not read back the same (a non-canonical magnitude, or a "
                                            "signed-zero state that contradicts the value)");
    return acc;
}

accumulator_tuple to_tuple(const accumulator_state& st) {
    std::string bytes;
    bytes.reserve(st.words.size() * 4);
    for (std::uint32_t w : st.words)
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((w >> (8 * b)) & 0xffu));
    return {st.negative,     nb::bytes(bytes.data(), bytes.size()), st.exponent, st.terms, st.positive_inf,
            st.negative_inf, st.nan, st.all_negative_zero, st.all_positive_zero};
}

accumulator_state from_tuple(const accumulator_tuple& t) {
    accumulator_state st;
    const nb::bytes& bytes = std::get<1>(t);
    if (bytes.size() % 4 != 0) not_a_state("a magnitude of " + std::to_string(bytes.size()) + " bytes");
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.c_str());
    st.words.resize(bytes.size() / 4);
    for (std::size_t k = 0; k < st.words.size(); ++k)
        for (int b = 0; b < 4; ++b) st.words[k] |= static_cast<std::uint32_t>(p[4 * k + b]) << (8 * b);
    st.negative = std::get<0>(t);
    st.exponent = std::get<2>(t);
    st.terms = std::get<3>(t);
    st.positive_inf = std::get<4>(t);
    st.negative_inf = std::get<5>(t);
    st.nan = std::get<6>(t);
    st.all_negative_zero = std::get<7>(t);
    st.all_positive_zero = std::get<8>(t);
    return st;
}

reference_tuple reference_state(const reference& r) {
    std::vector<structure_tuple> structures;
    for (const structure_bound& b : r.structures)
        structures.emplace_back(b.structure, std::vector<double>(b.error.begin(), b.error.end()), b.leaves);
    return {r.count,
            std::string(info(r.term_format).name),
            r.is_dot,
            r.product_may_underflow,
            r.min_product_exponent,
            r.has_initial,
            to_tuple(state_of(r.sum)),
            to_tuple(state_of(r.abs_sum)),
            std::isnan(r.largest) ? std::nullopt : std::optional<double>(r.largest),
            std::move(structures)};
}

// A structured bound as exactref wrote it: a structure that parses to itself, 8 bounds that are not NaN or
// negative, over the reference's terms (without an initial C).
structure_bound structure_from(const structure_tuple& t, const reference& r) {
    const auto& [name, error, leaves] = t;
    structure_bound b;
    standard m;
    try {
        m = parse_standard(name);
    } catch (const std::invalid_argument&) {
        not_a_state("a structure '" + name + "' that does not parse");
    }
    if (!m.structured || m.structure() != name) not_a_state("a structure '" + name + "' that is not canonical");
    if (error.size() != b.error.size()) not_a_state("a structured bound with " + std::to_string(error.size()) +
                                                    " entries instead of " + std::to_string(b.error.size()));
    for (std::size_t k = 0; k < error.size(); ++k) {
        if (!(error[k] >= 0)) not_a_state("a structured bound that is negative or NaN");
        b.error[k] = error[k];
    }
    if (leaves != r.count - (r.has_initial ? 1 : 0))
        not_a_state("a structured bound over " + std::to_string(leaves) + " terms of a reference of " +
                    std::to_string(r.count));
    b.structure = name;
    b.leaves = leaves;
    return b;
}

// compact: the list was a compact_reference_array (export_states of scatter-adds, scans, axis sums): the elements go
// back into one (48 bytes each, compact_reference_array::merge into empty cells is exact), with the largest terms
// beside when every state has one (axis sums) and the structured bounds kept (keep_structures) when every state has
// the same structures (axis sums with structure=); states of dot products, or with differing structures, which a
// compact array cannot hold, give one full reference per element, as without compact.
reference_list references_from_states(const std::string& term_dtype, bool is_dot,
                                      const std::vector<reference_tuple>& states, bool compact) {
    reference_list out;
    out.term_format = parse_dtype(term_dtype);
    out.is_dot = is_dot;
    std::vector<std::string> names;  // the structures of the first state, which every state must have
    if (!states.empty())
        for (const structure_tuple& st : std::get<9>(states.front())) names.push_back(std::get<0>(st));
    compact = compact && !is_dot && std::all_of(states.begin(), states.end(), [&](const reference_tuple& t) {
        const std::vector<structure_tuple>& kept = std::get<9>(t);
        if (kept.size() != names.size()) return false;
        for (std::size_t k = 0; k < kept.size(); ++k)
            if (std::get<0>(kept[k]) != names[k]) return false;
        return true;
    });
    if (!compact) out.items.reserve(states.size());
    std::shared_ptr<compact_reference_array> cells;
    std::vector<double> largest;
    bool every_largest = true;
    if (compact) {
        cells = std::make_shared<compact_reference_array>(std::vector<std::size_t>{states.size()}, out.term_format);
        largest.reserve(states.size());
    }
    for (const reference_tuple& t : states) {
        reference r;
        r.count = std::get<0>(t);
        r.term_format = parse_dtype(std::get<1>(t));
        r.is_dot = std::get<2>(t);
        r.product_may_underflow = std::get<3>(t);
        r.min_product_exponent = std::get<4>(t);
        r.has_initial = std::get<5>(t);
        if (r.term_format != out.term_format || r.is_dot != is_dot)
            not_a_state("an element of another dtype or kind than its list");
        r.sum = accumulator_from(from_tuple(std::get<6>(t)));
        r.abs_sum = accumulator_from(from_tuple(std::get<7>(t)));
        if (const std::optional<double>& largest = std::get<8>(t)) {
            if (!(*largest >= 0) || std::isinf(*largest)) not_a_state("a largest term that is not finite and >= 0");
            r.largest = *largest;
        }
        for (const structure_tuple& st : std::get<9>(t)) r.structures.push_back(structure_from(st, r));
        if (cells) {
            cells->merge(largest.size(), r);
            every_largest = every_largest && !std::isnan(r.largest);
            largest.push_back(r.largest);
            continue;
        }
        r.cache_enclosures();
        out.items.push_back(std::move(r));
    }
    if (cells && !names.empty()) {  // the bounds, once every element holds its terms (validated above)
        std::vector<standard> models;
        for (const std::string& name : names) models.push_back(parse_standard(name));
        cells->keep_structures(models);
        for (std::size_t i = 0; i < states.size(); ++i) {
            reference key;  // what structure_from checks a bound against
            key.count = std::get<0>(states[i]);
            key.has_initial = std::get<5>(states[i]);
            for (const structure_tuple& st : std::get<9>(states[i])) cells->set_structure_bound(i, structure_from(st, key));
        }
    }
    if (cells) {
        out.compact = std::move(cells);
        if (every_largest) out.largest = std::make_shared<const std::vector<double>>(std::move(largest));
    }
    return out;
}

}  // namespace

void bind_references(nb::module_& m) {
    nb::class_<reference_list>(m, "ReferenceList",
                               "Internal: a flat list of exact references (use exactref.Reference).")
        .def("__len__", [](const reference_list& l) { return l.size(); })
        .def_prop_ro("term_dtype", [](const reference_list& l) { return std::string(info(l.term_format).name); })
        .def_prop_ro("is_dot", [](const reference_list& l) { return l.is_dot; })
        .def("counts",
             [](const reference_list& l, const index_array& index) {
                 std::vector<std::uint64_t> out(index.shape(0));
                 reference scratch;
                 for (std::size_t i = 0; i < out.size(); ++i) {
                     if (l.compact) {
                         l.check(index(i));
                         out[i] = l.compact->count(static_cast<std::size_t>(index(i)));
                     } else {
                         out[i] = l.get(index(i), scratch).count;
                     }
                 }
                 return numpy_from(std::move(out));
             }, nb::arg("index"))
        .def("exact_parts",
             [](const reference_list& l, std::int64_t i) {
                 reference scratch;
                 return exact_parts(l.get(i, scratch).sum);
             }, nb::arg("i"))
        .def("abs_sum_parts",
             [](const reference_list& l, std::int64_t i) {
                 reference scratch;
                 return exact_parts(l.get(i, scratch).abs_sum);
             }, nb::arg("i"))
        .def("structures",
             [](const reference_list& l, std::int64_t i) {
                 reference scratch;
                 std::vector<std::string> out;
                 for (const structure_bound& b : l.get(i, scratch).structures) out.push_back(b.structure);
                 return out;
             }, nb::arg("i"))
        .def("exact_decimal",
             [](const reference_list& l, std::int64_t i) {
                 if (l.compact) {
                     l.check(i);
                     return l.compact->exact(static_cast<std::size_t>(i));
                 }
                 reference scratch;
                 return l.get(i, scratch).exact();
             }, nb::arg("i"))
        .def("nearest_value",
             [](const reference_list& l, std::int64_t i, const std::string& type, const std::string& mode) {
                 // s rounded to `type`, as the binary64 number equal to it (exact: every value of the four formats
                 // is one), for the 0-d fast path of Reference.nearest.
                 const format_info& f = info(parse_dtype(type));
                 const rounding rm = parse_rounding(mode);
                 if (l.compact) {
                     l.check(i);
                     return to_double_exact(f, l.compact->nearest_bits(static_cast<std::size_t>(i), f, rm));
                 }
                 if (l.products.empty() && i >= 0 && static_cast<std::size_t>(i) < l.items.size())
                     return to_double_exact(f, l.items[static_cast<std::size_t>(i)].sum.round_bits(f, rm));
                 reference scratch;  // a matrix product's element, built on demand (or the index error)
                 return to_double_exact(f, l.get(i, scratch).sum.round_bits(f, rm));
             }, nb::arg("i"), nb::arg("dtype"), nb::arg("rounding"))
        .def("nearest_bits",
             [](const reference_list& l, const index_array& index, const std::string& type, const std::string& mode) {
                 const format_info& f = info(parse_dtype(type));
                 const rounding rm = parse_rounding(mode);
                 std::vector<std::uint64_t> out(index.shape(0));
                 if (l.compact) {  // rounded from the cells (a scan's: followed line by line), no reference built
                     compact_reference_array::reader reader(*l.compact);
                     for (std::size_t i = 0; i < out.size(); ++i) {
                         l.check(index(i));
                         out[i] = reader.nearest_bits(static_cast<std::size_t>(index(i)), f, rm);
                     }
                     return numpy_from(std::move(out));
                 }
                 reference scratch;
                 for (std::size_t i = 0; i < out.size(); ++i) out[i] = l.get(index(i), scratch).sum.round_bits(f, rm);
                 return numpy_from(std::move(out));
             }, nb::arg("index"), nb::arg("dtype"), nb::arg("rounding"))
        .def("bound",
             [](const reference_list& l, const index_array& index, const standard& model, const std::string& type) {
                 const format_info& f = info(parse_dtype(type));
                 std::vector<double> out(index.shape(0));
                 reference scratch;
                 for (std::size_t i = 0; i < out.size(); ++i)
                     out[i] = exactref::bound(l.get(index(i), scratch, model), model, f);
                 return numpy_from(std::move(out));
             }, nb::arg("index"), nb::arg("standard"), nb::arg("dtype"))
        .def("covers",
             [](const reference_list& l, const index_array& index, const any_array& results,
                const std::optional<std::string>& as_dtype, const standard& model) {
                 return covers_detail(l, index, results, as_dtype, model, false);
             }, nb::arg("index"), nb::arg("results"), nb::arg("as_dtype").none(), nb::arg("standard"))
        .def_prop_ro("is_compact", [](const reference_list& l) { return l.compact != nullptr; })
        .def_prop_ro("judges_whole",  // covers_whole applies: a compact array, or exact matrix products
                     [](const reference_list& l) { return l.compact != nullptr || !l.products.empty(); })
        .def("covers_whole", &covers_whole, nb::arg("results"), nb::arg("as_dtype").none(), nb::arg("standard"))
        .def("covers_detail",
             [](const reference_list& l, const index_array& index, const any_array& results,
                const std::optional<std::string>& as_dtype, const standard& model) {
                 return covers_detail(l, index, results, as_dtype, model, true);
             }, nb::arg("index"), nb::arg("results"), nb::arg("as_dtype").none(), nb::arg("standard"))
        .def("verdict",
             [](const reference_list& l, std::int64_t i, const any_array& results, std::size_t j,
                const std::optional<std::string>& as_dtype, const standard& model) {
                 const results_view r = results_of(results, as_dtype);
                 if (j >= static_cast<std::size_t>(r.view.shape[0])) throw nb::index_error("result index out of range");
                 reference scratch;
                 return covers_bits(*r.format, bits_at(r.view, j), l.get(i, scratch, model), model);
             }, nb::arg("i"), nb::arg("results"), nb::arg("j"), nb::arg("as_dtype").none(), nb::arg("standard"))
        .def("explain",
             [](const reference_list& l, std::int64_t i, const any_array& results, std::size_t j,
                const std::optional<std::string>& as_dtype, bool any_zero_sign) {
                 const results_view r = results_of(results, as_dtype);
                 if (j >= static_cast<std::size_t>(r.view.shape[0])) throw nb::index_error("result index out of range");
                 reference scratch;
                 return explain_bits(*r.format, bits_at(r.view, j), l.get(i, scratch), any_zero_sign);
             }, nb::arg("i"), nb::arg("results"), nb::arg("j"), nb::arg("as_dtype").none(),
             nb::arg("any_zero_sign") = false)
        .def("ulp_error",
             [](const reference_list& l, const index_array& index, const any_array& results,
                const std::optional<std::string>& as_dtype) {
                 const results_view r = results_of(results, as_dtype);
                 check_lengths(index, r);
                 std::vector<double> out(index.shape(0));
                 reference scratch;
                 for (std::size_t i = 0; i < out.size(); ++i)
                     out[i] = ulp_error_bits(*r.format, bits_at(r.view, i), l.get(index(i), scratch));
                 return numpy_from(std::move(out));
             }, nb::arg("index"), nb::arg("results"), nb::arg("as_dtype").none())
        .def("export_states",
             [](const reference_list& l, const index_array& index) {
                 std::vector<reference_tuple> out;
                 out.reserve(index.shape(0));
                 reference scratch;
                 for (std::size_t i = 0; i < index.shape(0); ++i) out.push_back(reference_state(l.get(index(i), scratch)));
                 return out;
             }, nb::arg("index"),
             "Internal (pickling): the exact state of each indexed reference, every field.");

    m.def("references_from_states", &references_from_states, nb::arg("term_dtype"), nb::arg("is_dot"),
          nb::arg("states"), nb::arg("compact") = false,
          "Internal (unpickling): rebuilds references from export_states(); ValueError for a state that does not "
          "read back the same. compact: into a compact_reference_array (48 bytes per element), as the pickled list "
          "was, where every state fits one (sums without structured bounds).");

    m.def("sum", &sum_trailing, nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("reduce"), nb::arg("structures"),
          nb::arg("threads"), nb::arg("compact") = true,
          "Internal: exact references of x summed over its last `reduce` axes (one per remaining element, C order), "
          "each with the data bounds of the structured standards `structures`; contiguous blocks on up to `threads` "
          "threads (0: EXACTREF_NUM_THREADS, OMP_NUM_THREADS, every core). Without structures and with compact "
          "(the default) they are kept in a compact_reference_array (~56 bytes per element), else as full "
          "references (~2.3 KB each; tests and benchmarks compare the two).");
    m.def("sum_contiguous", &sum_contiguous, nb::arg("x"), nb::arg("threads"),
          "Internal: the exact reference of a whole C-contiguous native float64/32/16 array read in place, or None "
          "for any other input (er.sum's fast path).");

    m.def("host_view",
          [](const any_array& a, const std::optional<std::string>& as_dtype, const std::string& what) {
              // A numpy view of a host array given by any DLPack producer: same memory, same strides. bfloat16
              // comes back as uint16 storage, named in the second element.
              const host_view v = view_of(a, as_dtype, what);
              auto* keep = new any_array(a);
              nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<any_array*>(p); });
              std::vector<std::size_t> shape(v.shape.begin(), v.shape.end());
              nb::dlpack::dtype t = a.dtype();
              if (v.type == dtype::bfloat16) t = nb::dtype<std::uint16_t>();
              nb::ndarray<nb::numpy, nb::ro> out(a.data(), shape.size(), shape.data(), owner, v.strides.data(), t,
                                                     nb::device::cpu::value);
              return std::make_tuple(nb::cast(out), std::string(info(v.type).name));
          },
          nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("what"));
}

}  // namespace exactref::python

// Bindings of the scatter-add and scan builders (exactref/scatter.h): er.segment_sum, er.scatter_add, er.index_add,
// er.add_at, er.bincount, er.embedding_bag and er.cumsum (python/exactref/_scatter.py).
//
// The Python layer passes every array flat: float arrays one-dimensional and C-contiguous (their shapes as lists),
// index arrays one-dimensional, C-contiguous int32 or int64, every float array of one format. What it returns is a
// reference_list holding the compact_reference_array (references.h), so exactref.Reference answers its queries
// without building a full reference per element for covers() and nearest(). The builders' std::invalid_argument
// (the argument and its first offending position) reaches Python as ValueError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "exactref/scatter.h"
#include "exactref/threads.h"  // detail::resolve_threads
#include "references.h"

namespace exactref::python {

namespace {

using index_input = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// The elements of a one-dimensional, contiguous float array of format T (the Python layer made it so).
template <class T>
std::span<const T> span_of(const host_view& v, const char* what) {
    if (v.shape.size() != 1 || (v.shape[0] > 1 && v.strides[0] != 1))
        throw nb::value_error((std::string("internal: ") + what + " must be one-dimensional and contiguous").c_str());
    if (v.type != format_traits<T>::info.id)
        throw nb::type_error((std::string("internal: ") + what + " is " + std::string(info(v.type).name) +
                              ", expected " + std::string(format_traits<T>::info.name))
                                 .c_str());
    return {reinterpret_cast<const T*>(v.data), static_cast<std::size_t>(v.shape[0])};
}

template <class I>
std::span<const I> indices_of(const index_input& a) {
    return {static_cast<const I*>(a.data()), a.shape(0)};
}

bool is_int(const index_input& a, std::uint8_t bits) {
    return a.dtype().code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) && a.dtype().bits == bits &&
           a.dtype().lanes == 1;
}

// Calls f(I{}) for the index type of `a` (int32 or int64); `others` must have the same type.
template <class F>
decltype(auto) with_index_type(const index_input& a, const char* what, F&& f,
                               std::initializer_list<const index_input*> others = {}) {
    const bool wide = is_int(a, 64);
    if (!wide && !is_int(a, 32))
        throw nb::type_error((std::string("internal: ") + what + " must be int32 or int64").c_str());
    for (const index_input* o : others)
        if (!is_int(*o, wide ? 64 : 32))
            throw nb::type_error((std::string("internal: the index arrays must share one type, as ") + what).c_str());
    if (wide) return f(std::int64_t{});
    return f(std::int32_t{});
}

reference_list list_of(compact_reference_array&& a) {
    reference_list out;
    out.term_format = a.term_format();
    out.compact = std::make_shared<const compact_reference_array>(std::move(a));
    return out;
}

// Runs build(T{}, I{}) without the GIL for the float format of `values` and the index type of `index`.
template <class F>
reference_list build_typed(const host_view& values, const index_input& index, const char* what, F&& build,
                           std::initializer_list<const index_input*> others = {}) {
    return with_index_type(index, what, [&](auto index_tag) {
        return with_storage(values.type, [&](auto value_tag) {
            nb::gil_scoped_release release;
            return list_of(build(value_tag, index_tag));
        });
    }, others);
}

reference_list segment_sum_py(const any_array& values, const index_input& ids, std::size_t num_segments,
                              const std::optional<any_array>& initial, const std::optional<std::string>& as_dtype,
                              unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);  // ValueError naming a bad variable
    const host_view v = view_of(values, as_dtype, "values");
    std::optional<host_view> c;
    if (initial) c = view_of(*initial, as_dtype, "initial");
    return build_typed(v, ids, "segment_ids", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        const std::span<const T> init = c ? span_of<T>(*c, "initial") : std::span<const T>();
        return segment_sum<T, I>(span_of<T>(v, "values"), indices_of<I>(ids), num_segments, init,
                                 out_of_range::drop, workers);  // jax.ops.segment_sum drops such ids
    });
}

reference_list scatter_add_py(const any_array& initial, const array_shape& initial_shape, int dim,
                              const index_input& index, const array_shape& index_shape, const any_array& src,
                              const array_shape& src_shape, const std::optional<std::string>& as_dtype,
                              unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);
    const host_view c = view_of(initial, as_dtype, "initial"), s = view_of(src, as_dtype, "src");
    return build_typed(c, index, "index", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        return scatter_add<T, I>(span_of<T>(c, "initial"), initial_shape, dim, indices_of<I>(index), index_shape,
                                 span_of<T>(s, "src"), src_shape, workers);
    });
}

reference_list index_add_py(const any_array& initial, const array_shape& initial_shape, int dim,
                            const index_input& index, const any_array& source, const array_shape& source_shape,
                            const std::optional<std::string>& as_dtype, unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);
    const host_view c = view_of(initial, as_dtype, "initial"), s = view_of(source, as_dtype, "source");
    return build_typed(c, index, "index", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        return index_add<T, I>(span_of<T>(c, "initial"), initial_shape, dim, indices_of<I>(index),
                               span_of<T>(s, "source"), source_shape, workers);
    });
}

reference_list add_at_py(const any_array& initial, const index_input& indices, const any_array& values,
                         const std::optional<std::string>& as_dtype, unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);
    const host_view c = view_of(initial, as_dtype, "initial"), v = view_of(values, as_dtype, "values");
    return build_typed(c, indices, "indices", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        return add_at<T, I>(span_of<T>(c, "initial"), indices_of<I>(indices), span_of<T>(v, "values"), workers);
    });
}

reference_list bincount_py(const index_input& x, const any_array& weights, std::size_t minlength,
                           const std::optional<std::string>& as_dtype, unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);
    const host_view w = view_of(weights, as_dtype, "weights");
    return build_typed(w, x, "x", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        return bincount<T, I>(indices_of<I>(x), span_of<T>(w, "weights"), minlength, workers);
    });
}

reference_list embedding_bag_py(const any_array& weight, std::size_t num_embeddings, std::size_t dim,
                                const index_input& indices, const index_input& offsets, bool include_last_offset,
                                const std::optional<std::string>& as_dtype, unsigned threads) {
    const unsigned workers = detail::resolve_threads(threads);
    const host_view w = view_of(weight, as_dtype, "weight");
    return build_typed(w, indices, "indices", [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        return embedding_bag_sum<T, I>(span_of<T>(w, "weight"), num_embeddings, dim, indices_of<I>(indices),
                                       indices_of<I>(offsets), include_last_offset, workers);
    }, {&offsets});
}

reference_list scan_py(const any_array& values, const array_shape& shape, int axis, bool inclusive,
                       const std::optional<std::string>& as_dtype) {
    const host_view v = view_of(values, as_dtype, "x");
    return with_storage(v.type, [&](auto t) {
        using T = decltype(t);
        const std::span<const T> xs = span_of<T>(v, "x");
        nb::gil_scoped_release release;
        return list_of(inclusive ? inclusive_scan<T>(xs, shape, axis) : exclusive_scan<T>(xs, shape, axis));
    });
}

}  // namespace

void bind_scatter(nb::module_& m) {
    m.def("segment_sum", &segment_sum_py, nb::arg("values"), nb::arg("segment_ids"), nb::arg("num_segments"),
          nb::arg("initial").none(), nb::arg("as_dtype").none(), nb::arg("threads") = 0u,
          "Internal: exactref::segment_sum (ids outside [0, num_segments) dropped, as jax.ops.segment_sum).");
    m.def("scatter_add", &scatter_add_py, nb::arg("initial"), nb::arg("initial_shape"), nb::arg("dim"),
          nb::arg("index"), nb::arg("index_shape"), nb::arg("src"), nb::arg("src_shape"), nb::arg("as_dtype").none(),
          nb::arg("threads") = 0u,
          "Internal: exactref::scatter_add (torch.Tensor.scatter_add_).");
    m.def("index_add", &index_add_py, nb::arg("initial"), nb::arg("initial_shape"), nb::arg("dim"), nb::arg("index"),
          nb::arg("source"), nb::arg("source_shape"), nb::arg("as_dtype").none(), nb::arg("threads") = 0u,
          "Internal: exactref::index_add (torch.Tensor.index_add_).");
    m.def("add_at", &add_at_py, nb::arg("initial"), nb::arg("indices"), nb::arg("values"), nb::arg("as_dtype").none(),
          nb::arg("threads") = 0u, "Internal: exactref::add_at (np.add.at on a 1-D array).");
    m.def("bincount", &bincount_py, nb::arg("x"), nb::arg("weights"), nb::arg("minlength"), nb::arg("as_dtype").none(),
          nb::arg("threads") = 0u, "Internal: exactref::bincount (np.bincount with weights).");
    m.def("embedding_bag", &embedding_bag_py, nb::arg("weight"), nb::arg("num_embeddings"), nb::arg("dim"),
          nb::arg("indices"), nb::arg("offsets"), nb::arg("include_last_offset"), nb::arg("as_dtype").none(),
          nb::arg("threads") = 0u, "Internal: exactref::embedding_bag_sum (torch.nn.functional.embedding_bag, mode='sum').");
    m.def("scan", &scan_py, nb::arg("x"), nb::arg("shape"), nb::arg("axis"), nb::arg("inclusive"),
          nb::arg("as_dtype").none(), "Internal: exactref::inclusive_scan / exclusive_scan along axis.");
}

}  // namespace exactref::python

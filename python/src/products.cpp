// Bindings of the exact dot product (dot.h) and matrix product (gemm.h): exactref.dot and exactref.matmul.
// Strided input is read in place: dot_strided takes element increments, matrix_view row and column strides. The
// structured bounds of a dot product (structured_dot_bound) read spans: strided x and y are copied for them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.h"
#include "exactref/dot.h"
#include "exactref/gemm.h"
#include "exactref/standard.h"
#include "exactref/threads.h"
#include "references.h"

namespace exactref::python {

namespace {

void same_format(const host_view& a, const host_view& b, const char* what, const char* name_a, const char* name_b) {
    if (a.type != b.type)
        throw nb::type_error((std::string(what) + ": " + name_a + " is " + std::string(info(a.type).name) + " but " +
                              name_b + " is " + std::string(info(b.type).name) +
                              ": pass both in the format the product was computed in")
                                 .c_str());
}

template <class T>
std::vector<T> copy_strided(const T* p, std::int64_t stride, std::size_t n) {
    std::vector<T> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = p[static_cast<std::int64_t>(i) * stride];
    return out;
}

reference_list dot_py(const any_array& x, const any_array& y, const std::optional<std::string>& as_dtype,
                      const std::optional<any_array>& initial, const std::vector<standard>& structures,
                      unsigned threads) {
    const dot_options options{detail::resolve_threads(threads)};  // ValueError for a bad variable
    const host_view vx = view_of(x, as_dtype, "x");
    const host_view vy = view_of(y, as_dtype, "y");
    same_format(vx, vy, "dot", "x", "y");
    if (vx.shape.size() != 1 || vy.shape.size() != 1)
        throw nb::value_error("internal: dot takes one-dimensional x and y");
    if (vx.shape[0] != vy.shape[0])
        throw nb::value_error(("dot: x has " + std::to_string(vx.shape[0]) + " elements and y " +
                               std::to_string(vy.shape[0]) + ": pass two vectors of the same length")
                                  .c_str());
    std::optional<host_view> vc;
    if (initial) {
        vc = view_of(*initial, as_dtype, "initial");
        same_format(vx, *vc, "dot", "x", "initial");
        if (!vc->shape.empty() && vc->size() != 1)
            throw nb::value_error("dot: initial must be a single value (the existing output accumulated into)");
        if (!structures.empty())
            throw nb::value_error("dot: structured standards (structure=) describe the reduction of the products "
                                  "alone and take no initial value: accumulate into the existing output separately, "
                                  "or leave out structure=");
    }
    reference_list out;
    out.term_format = vx.type;
    out.is_dot = true;
    nb::gil_scoped_release release;
    with_storage(vx.type, [&](auto tag) {
        using T = decltype(tag);
        std::optional<T> init;
        if (vc) init = *reinterpret_cast<const T*>(vc->data);
        const T* px = reinterpret_cast<const T*>(vx.data);
        const T* py = reinterpret_cast<const T*>(vy.data);
        const std::size_t n = static_cast<std::size_t>(vx.shape[0]);
        out.items.push_back(dot_strided<T>(px, vx.strides[0], py, vy.strides[0], n, init, options));
        if (structures.empty()) return;
        std::vector<T> cx, cy;
        if (n > 0 && vx.strides[0] != 1) px = (cx = copy_strided(px, vx.strides[0], n)).data();
        if (n > 0 && vy.strides[0] != 1) py = (cy = copy_strided(py, vy.strides[0], n)).data();
        for (const standard& m : structures)
            out.items.back().structures.push_back(
                structured_dot_bound(std::span<const T>(px, n), std::span<const T>(py, n), m));
    });
    return out;
}

template <class T>
matrix_view<T> matrix_of(const host_view& v) {
    return matrix_view<T>{reinterpret_cast<const T*>(v.data), static_cast<std::size_t>(v.shape[0]),
                          static_cast<std::size_t>(v.shape[1]), v.strides[0], v.strides[1]};
}

using operands = std::tuple<any_array, any_array, std::optional<any_array>>;

// One exact product per batch element; every product has the same shape (the Python layer broadcasts the batch).
reference_list matmul_py(const std::vector<operands>& batch, const std::optional<std::string>& as_dtype,
                         const std::string& method, unsigned threads) {
    matmul_options options;
    options.threads = detail::resolve_threads(threads);
    if (method == "automatic") options.method = matmul_method::automatic;
    else if (method == "sliced") options.method = matmul_method::sliced;
    else if (method == "per_element") options.method = matmul_method::per_element;
    else
        throw nb::value_error(("method='" + method + "': expected 'automatic', 'sliced' or 'per_element'").c_str());
    struct views {
        host_view a, b;
        std::optional<host_view> c;
    };
    std::vector<views> vs;
    for (const auto& [a, b, c] : batch) {
        views v{view_of(a, as_dtype, "a"), view_of(b, as_dtype, "b"), std::nullopt};
        same_format(v.a, v.b, "matmul", "a", "b");
        if (v.a.shape.size() != 2 || v.b.shape.size() != 2)
            throw nb::value_error("internal: matmul takes two-dimensional operands");
        if (c) {
            v.c = view_of(*c, as_dtype, "c");
            same_format(v.a, *v.c, "matmul", "a", "c");
            if (v.c->shape.size() != 2) throw nb::value_error("internal: matmul takes a two-dimensional c");
        }
        vs.push_back(std::move(v));
    }
    reference_list out;
    out.is_dot = true;
    if (vs.empty()) return out;
    out.term_format = vs[0].a.type;
    out.block = static_cast<std::size_t>(vs[0].a.shape[0] * vs[0].b.shape[1]);
    nb::gil_scoped_release release;
    for (const views& v : vs) {
        with_storage(v.a.type, [&](auto tag) {
            using T = decltype(tag);
            const matrix_view<T> a = matrix_of<T>(v.a), b = matrix_of<T>(v.b);
            std::optional<matrix_view<T>> c;
            if (v.c) c = matrix_of<T>(*v.c);
            out.products.push_back(std::make_shared<const product_reference>(
                exact_matmul<T>(a, b, c ? &*c : nullptr, options)));
        });
    }
    return out;
}

}  // namespace

void bind_products(nb::module_& m) {
    m.def("dot", &dot_py, nb::arg("x"), nb::arg("y"), nb::arg("as_dtype").none(), nb::arg("initial").none(),
          nb::arg("structures"), nb::arg("threads"));
    m.def("matmul", &matmul_py, nb::arg("batch"), nb::arg("as_dtype").none(), nb::arg("method"),
          nb::arg("threads"));
}

}  // namespace exactref::python

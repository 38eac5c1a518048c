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

// The exact products of a batch: a (*batch, m, K), b (*batch, K, n) and c (*batch, m, n) with the same batch axes
// (the Python layer broadcasts them; broadcast axes keep stride 0, nothing is copied here), any strides. Small
// products share one per-element product_reference (exact_matmul_batched); flat index (b·m + i)·n + j either way.
reference_list matmul_py(const any_array& a, const any_array& b, const std::optional<any_array>& c,
                         const std::optional<std::string>& as_dtype, const std::string& method, unsigned threads) {
    matmul_options options;
    options.threads = detail::resolve_threads(threads);
    if (method == "automatic") options.method = matmul_method::automatic;
    else if (method == "sliced") options.method = matmul_method::sliced;
    else if (method == "per_element") options.method = matmul_method::per_element;
    else
        throw nb::value_error(("method='" + method + "': expected 'automatic', 'sliced' or 'per_element'").c_str());
    const host_view va = view_of(a, as_dtype, "a"), vb = view_of(b, as_dtype, "b");
    same_format(va, vb, "matmul", "a", "b");
    std::optional<host_view> vc;
    if (c) {
        vc = view_of(*c, as_dtype, "c");
        same_format(va, *vc, "matmul", "a", "c");
    }
    const std::size_t nd = va.shape.size();
    auto batch_axes_match = [&](const host_view& v) {
        return v.shape.size() == nd && std::equal(v.shape.begin(), v.shape.end() - 2, va.shape.begin());
    };
    if (nd < 2 || !batch_axes_match(vb) || (vc && !batch_axes_match(*vc)))
        throw nb::value_error("internal: matmul takes operands with the same batch axes and two matrix axes");
    const std::size_t batch_dims = nd - 2;
    std::size_t count = 1;
    for (std::size_t d = 0; d < batch_dims; ++d) count *= static_cast<std::size_t>(va.shape[d]);
    reference_list out;
    out.is_dot = true;
    out.term_format = va.type;
    out.block = static_cast<std::size_t>(va.shape[nd - 2] * vb.shape[nd - 1]);
    if (count == 0) return out;
    nb::gil_scoped_release release;
    with_storage(va.type, [&](auto tag) {
        using T = decltype(tag);
        // Points `out` at the matrix at element `offset` of v (field by field: a whole-struct copy per product
        // measured 20% of a batch of 1 x 2 x 1 products as `rep movs`).
        auto matrix = [&](const host_view& v, std::int64_t offset, matrix_view<T>& out) {
            out.data = reinterpret_cast<const T*>(v.data) + offset;
            out.rows = static_cast<std::size_t>(v.shape[nd - 2]);
            out.cols = static_cast<std::size_t>(v.shape[nd - 1]);
            out.row_stride = v.strides[nd - 2];
            out.col_stride = v.strides[nd - 1];
        };
        // The batch positions in C order, one step at a time (p = 0, 1, ...): the element offsets of the three
        // matrices (broadcast axes have stride 0).
        struct walk {
            const host_view *a, *b, *c;
            std::vector<std::int64_t> idx;
            std::int64_t oa = 0, ob = 0, oc = 0;
            std::size_t next = 0;
            void to(std::size_t p) {  // p is next (every caller walks in order); a restart goes back to 0
                if (p != next) {
                    std::fill(idx.begin(), idx.end(), 0);
                    oa = ob = oc = 0;
                    next = 0;
                    while (next < p) step();
                }
            }
            void step() {
                ++next;
                for (std::size_t d = idx.size(); d-- > 0;) {
                    if (++idx[d] < a->shape[d]) {
                        oa += a->strides[d];
                        ob += b->strides[d];
                        if (c != nullptr) oc += c->strides[d];
                        return;
                    }
                    oa -= (a->shape[d] - 1) * a->strides[d];
                    ob -= (b->shape[d] - 1) * b->strides[d];
                    if (c != nullptr) oc -= (c->shape[d] - 1) * c->strides[d];
                    idx[d] = 0;
                }
            }
        } w{&va, &vb, vc ? &*vc : nullptr, std::vector<std::int64_t>(batch_dims, 0)};
        auto views = [&](std::size_t p, matrix_view<T>& ma, matrix_view<T>& mb, matrix_view<T>& mc) {
            w.to(p);
            matrix(*w.a, w.oa, ma);
            matrix(*w.b, w.ob, mb);
            if (w.c != nullptr) matrix(*w.c, w.oc, mc);
            w.step();
        };
        const std::size_t m = static_cast<std::size_t>(va.shape[nd - 2]), k = static_cast<std::size_t>(va.shape[nd - 1]),
                          n = static_cast<std::size_t>(vb.shape[nd - 1]);
        if (detail::batch_shares_reference(count, m, k, n, format_traits<T>::info, options)) {
            detail::batch_item<T> item = [](const void* context, std::size_t p, matrix_view<T>& ma, matrix_view<T>& mb,
                                            matrix_view<T>& mc) { (*static_cast<const decltype(views)*>(context))(p, ma, mb, mc); };
            out.products.push_back(std::make_shared<const product_reference>(
                detail::shared_batch_reference<T>(count, m, k, n, vc.has_value(), item, &views)));
            return;
        }
        matrix_view<T> ma, mb, mc;
        for (std::size_t p = 0; p < count; ++p) {
            views(p, ma, mb, mc);
            out.products.push_back(
                std::make_shared<const product_reference>(exact_matmul<T>(ma, mb, vc ? &mc : nullptr, options)));
        }
    });
    return out;
}

}  // namespace

void bind_products(nb::module_& m) {
    m.def("dot", &dot_py, nb::arg("x"), nb::arg("y"), nb::arg("as_dtype").none(), nb::arg("initial").none(),
          nb::arg("structures"), nb::arg("threads"));
    m.def("matmul", &matmul_py, nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("as_dtype").none(),
          nb::arg("method"), nb::arg("threads"));
    m.def("matmul_engine", &exactref::matmul_engine);
}

}  // namespace exactref::python

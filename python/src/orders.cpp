// Bindings of the deterministic trees (tree.h) and the comparison orders (orders.h): the computed results that
// exactref.tree_sum, fold_sum, kahan_sum and pairwise_sum return. Each result comes back as raw bits and the name
// of its format; the Python layer turns them into a numpy scalar.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>

#include "arrays.h"
#include "exactref/orders.h"
#include "exactref/tree.h"
#include "references.h"

namespace exactref::python {

namespace {

using bits_and_format = std::tuple<std::uint64_t, std::string>;
using mask_array = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T>
std::span<const T> contiguous(const host_view& v) {
    if (v.shape.size() != 1 || (v.shape[0] > 1 && v.strides[0] != 1))
        throw nb::value_error("internal: orders take a one-dimensional contiguous array");
    return {reinterpret_cast<const T*>(v.data), static_cast<std::size_t>(v.shape[0])};
}

template <class A>
bits_and_format result_of(A value) {
    return {format_traits<A>::to_bits(value), std::string(format_traits<A>::info.name)};
}

// True when the caller asked for float32 accumulation of float16/bfloat16 data; false for the data's own format.
bool widen(const std::optional<std::string>& acc, dtype input) {
    if (!acc) return false;
    const dtype a = parse_dtype(*acc);
    if (a == input) return false;
    if (a == dtype::float32 && (input == dtype::float16 || input == dtype::bfloat16)) return true;
    throw nb::value_error(("acc='" + *acc + "' for " + std::string(info(input).name) +
                           " data: the orders accumulate in the data's own format, or float16 and bfloat16 in "
                           "float32 (acc='float32')")
                              .c_str());
}

// Calls f(T{}, Acc{}) for the data's storage type T and the accumulation type Acc.
template <class F>
bits_and_format dispatch(const host_view& v, const std::optional<std::string>& acc, F&& f) {
    const bool wide = widen(acc, v.type);
    return with_storage(v.type, [&](auto tag) -> bits_and_format {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            if (wide) return f(T{}, float{});
        }
        return f(T{}, T{});
    });
}

bits_and_format tree_reduce_py(const any_array& x, const std::optional<std::string>& as_dtype, const std::string& op,
                               const std::string& shape, const std::optional<std::string>& acc,
                               const std::optional<mask_array>& mask) {
    const host_view v = view_of(x, as_dtype, "x");
    const reduce_op rop = parse_reduce_op(op);
    const tree_shape ts = parse_tree_shape(shape);
    tree_options options;
    if (mask) options.mask = std::span<const bool>(mask->data(), mask->shape(0));
    return dispatch(v, acc, [&](auto t, auto a) {
        using T = decltype(t);
        using A = decltype(a);
        const std::span<const T> xs = contiguous<T>(v);
        nb::gil_scoped_release release;
        return result_of(exactref::tree_reduce<A>(xs, rop, ts, options));
    });
}

template <class Order>
bits_and_format order_py(const any_array& x, const std::optional<std::string>& as_dtype,
                         const std::optional<std::string>& acc, Order order) {
    const host_view v = view_of(x, as_dtype, "x");
    return dispatch(v, acc, [&](auto t, auto a) {
        using T = decltype(t);
        using A = decltype(a);
        const std::span<const T> xs = contiguous<T>(v);
        nb::gil_scoped_release release;
        return result_of(order.template operator()<A>(xs));
    });
}

}  // namespace

void bind_orders(nb::module_& m) {
    m.def("tree_reduce", &tree_reduce_py, nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("op"), nb::arg("shape"),
          nb::arg("acc").none(), nb::arg("mask").none());
    m.def("tree_height",
          [](const std::string& shape, std::uint64_t n) { return tree_height(parse_tree_shape(shape), n); },
          nb::arg("shape"), nb::arg("n"));
    m.def("tree_shape_name", [](const std::string& shape) { return parse_tree_shape(shape).name(); },
          nb::arg("shape"));
    m.def("fold_sum",
          [](const any_array& x, const std::optional<std::string>& as_dtype, const std::optional<std::string>& acc) {
              return order_py(x, as_dtype, acc, []<class A, class T>(std::span<const T> xs) {
                  return exactref::fold_sum<A>(xs);
              });
          },
          nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("acc").none());
    m.def("kahan_sum",
          [](const any_array& x, const std::optional<std::string>& as_dtype, const std::optional<std::string>& acc) {
              return order_py(x, as_dtype, acc, []<class A, class T>(std::span<const T> xs) {
                  return exactref::kahan_sum<A>(xs);
              });
          },
          nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("acc").none());
    m.def("pairwise_sum",
          [](const any_array& x, const std::optional<std::string>& as_dtype, const std::optional<std::string>& acc) {
              return order_py(x, as_dtype, acc, []<class A, class T>(std::span<const T> xs) {
                  return exactref::pairwise_sum<A>(xs);
              });
          },
          nb::arg("x"), nb::arg("as_dtype").none(), nb::arg("acc").none());
}

}  // namespace exactref::python

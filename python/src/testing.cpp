// Binding of the order-free test data (exactref/testing.h) behind exactref.testing.order_free: the terms come back
// as a one-dimensional numpy array of their raw bits (uint64, uint32, uint16), which the Python layer views as the
// dtype (bfloat16 through ml_dtypes). Generation runs without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "exactref/format.h"
#include "exactref/standard.h"
#include "exactref/testing.h"
#include "references.h"

namespace exactref::python {

namespace {

// n order-free terms of storage type T, written into a numpy-owned buffer of T's raw bits.
template <class T>
nb::object order_free_bits(std::uint64_t n, std::uint64_t seed, const standard* structure) {
    using bits = typename format_traits<T>::bits_type;
    static_assert(sizeof(bits) == sizeof(T), "the storage of T is its bits");
    auto* owned = new T[n];
    nb::capsule owner(owned, [](void* p) noexcept { delete[] static_cast<T*>(p); });
    {
        nb::gil_scoped_release release;
        exactref::testing::fill_order_free(std::span<T>(owned, n), seed, structure);
    }
    const std::size_t shape[1] = {static_cast<std::size_t>(n)};
    return nb::cast(nb::ndarray<nb::numpy, bits, nb::ndim<1>>(reinterpret_cast<bits*>(owned), 1, shape, owner));
}

nb::object order_free_py(std::uint64_t n, const std::string& dtype_name, std::uint64_t seed,
                         const standard* structure) {
    switch (parse_dtype(dtype_name)) {
        case dtype::float64: return order_free_bits<double>(n, seed, structure);
        case dtype::float32: return order_free_bits<float>(n, seed, structure);
        case dtype::float16: return order_free_bits<float16>(n, seed, structure);
        case dtype::bfloat16: return order_free_bits<bfloat16>(n, seed, structure);
    }
    return nb::none();
}

}  // namespace

void bind_testing(nb::module_& m) {
    m.def("order_free", &order_free_py, nb::arg("n"), nb::arg("dtype"), nb::arg("seed"),
          nb::arg("structure").none(),
          "Order-free terms (exactref/testing.h) as raw bits: uint64/uint32/uint16 for float64/float32/float16 "
          "and bfloat16.");
    m.def(
        "order_free_max_terms",
        [](const std::string& dtype_name) { return exactref::testing::order_free_max_terms(parse_dtype(dtype_name)); },
        nb::arg("dtype"));
}

}  // namespace exactref::python

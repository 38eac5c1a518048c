// python/src/arrays.h — reading Python arrays (numpy, any DLPack producer) as typed host views, and making numpy
// arrays from C++ buffers. Internal to the extension exactref._core.
//
// Every array that reaches the library passes through host_view(): it checks the device (host memory only), the
// element type (float16/32/64, bfloat16) and keeps the DLPack shape and strides (in elements) so that strided input
// is read in place. Nothing is copied here.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exactref/format.h"

namespace exactref::python {

namespace nb = nanobind;

/// Any array, read-only, any dtype, any device (checked by host_view).
using any_array = nb::ndarray<nb::ro>;

/// A typed, strided view of host memory: element (i0, i1, ...) lives at data + Σ i_k·strides[k]·itemsize.
struct host_view {
    const std::byte* data = nullptr;
    dtype type = dtype::float64;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;  // in elements, may be negative or zero
    std::size_t size() const noexcept;
};

/// Checks `a` and returns its view. `as_dtype` reinterprets 16-bit unsigned storage as "bfloat16" (numpy arrays of
/// ml_dtypes.bfloat16 are passed as uint16 views). `what` names the argument in error messages.
/// Throws nb::value_error for device memory, nb::type_error for an element type the library does not take.
host_view view_of(const any_array& a, const std::optional<std::string>& as_dtype, std::string_view what);

/// Reads the raw bits of element i of a one-dimensional view (any stride).
std::uint64_t bits_at(const host_view& v, std::size_t i) noexcept;

/// A numpy array that owns `values` (moved in), one-dimensional.
template <class T>
nb::object numpy_from(std::vector<T>&& values);

/// Calls f(T{}) with T the storage type of d (double, float, float16, bfloat16).
template <class F>
decltype(auto) with_storage(dtype d, F&& f) {
    switch (d) {
        case dtype::float64: return f(double{});
        case dtype::float32: return f(float{});
        case dtype::float16: return f(float16{});
        case dtype::bfloat16: return f(bfloat16{});
    }
    return f(double{});
}

/// The dtype name of a DLPack element type ("float32", "int64", "complex128", ...) for messages.
std::string dlpack_type_name(nb::dlpack::dtype t);

/// "cuda:0" etc. for a DLPack device type.
std::string device_name(int device_type, int device_id);

}  // namespace exactref::python

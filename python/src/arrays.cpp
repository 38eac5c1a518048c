// Host views of Python arrays: device and dtype checks, strides kept as they are (arrays.h).
#include "arrays.h"

#include <cstring>  // std::memcpy
#include <string>

namespace exactref::python {

std::size_t host_view::size() const noexcept {
    std::size_t n = 1;
    for (std::int64_t s : shape) n *= static_cast<std::size_t>(s);
    return n;
}

std::string dlpack_type_name(nb::dlpack::dtype t) {
    using code = nb::dlpack::dtype_code;
    std::string base;
    switch (static_cast<code>(t.code)) {
        case code::Int: base = "int"; break;
        case code::UInt: base = "uint"; break;
        case code::Float: base = "float"; break;
        case code::Bfloat: base = "bfloat"; break;
        case code::Complex: base = "complex"; break;
        case code::Bool: return "bool";
        default: base = "dlpack-type-" + std::to_string(t.code) + "-"; break;
    }
    std::string name = base + std::to_string(t.bits);
    if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
    return name;
}

std::string device_name(int device_type, int device_id) {
    std::string name;
    switch (device_type) {
        case nb::device::cpu::value: name = "cpu"; break;
        case nb::device::cuda::value: name = "cuda"; break;
        case nb::device::cuda_host::value: name = "cuda_host"; break;
        case nb::device::opencl::value: name = "opencl"; break;
        case nb::device::vulkan::value: name = "vulkan"; break;
        case nb::device::metal::value: name = "metal"; break;
        case nb::device::rocm::value: name = "rocm"; break;
        case nb::device::rocm_host::value: name = "rocm_host"; break;
        case nb::device::cuda_managed::value: name = "cuda_managed"; break;
        case nb::device::oneapi::value: name = "oneapi"; break;
        default: name = "device-type-" + std::to_string(device_type); break;
    }
    return name + ":" + std::to_string(device_id);
}

namespace {

// Memory the host can read directly: CPU, pinned host memory and managed memory.
bool host_readable(int device_type) {
    return device_type == nb::device::cpu::value || device_type == nb::device::cuda_host::value ||
           device_type == nb::device::rocm_host::value || device_type == nb::device::cuda_managed::value;
}

}  // namespace

host_view view_of(const any_array& a, const std::optional<std::string>& as_dtype, std::string_view what) {
    if (!host_readable(a.device_type()))
        throw nb::value_error((std::string(what) + " lives in device memory (" +
                               device_name(a.device_type(), a.device_id()) +
                               "); exactref reads host memory: copy it to the host first (tensor.cpu(), "
                               "cupy.asnumpy(a), jax.device_get(a))")
                                  .c_str());
    using code = nb::dlpack::dtype_code;
    const nb::dlpack::dtype t = a.dtype();
    std::optional<dtype> type;
    if (t.lanes == 1) {
        if (t.code == static_cast<std::uint8_t>(code::Float)) {
            if (t.bits == 64) type = dtype::float64;
            else if (t.bits == 32) type = dtype::float32;
            else if (t.bits == 16) type = dtype::float16;
        } else if (t.code == static_cast<std::uint8_t>(code::Bfloat) && t.bits == 16) {
            type = dtype::bfloat16;
        } else if (t.code == static_cast<std::uint8_t>(code::UInt) && t.bits == 16 && as_dtype &&
                   *as_dtype == "bfloat16") {
            type = dtype::bfloat16;
        }
    }
    if (!type)
        throw nb::type_error((std::string(what) + ": expected an array of float16, float32, float64 or bfloat16 "
                                                  "elements, got " +
                              dlpack_type_name(t) + ": convert it to the floating-point type it was computed in")
                                 .c_str());
    host_view v;
    v.type = *type;
    v.data = static_cast<const std::byte*>(a.data());
    v.shape.resize(a.ndim());
    v.strides.resize(a.ndim());
    for (std::size_t k = 0; k < a.ndim(); ++k) {
        v.shape[k] = static_cast<std::int64_t>(a.shape(k));
        v.strides[k] = a.stride(k);
    }
    return v;
}

std::uint64_t bits_at(const host_view& v, std::size_t i) noexcept {
    const std::int64_t stride = v.strides.empty() ? 1 : v.strides[0];
    const std::size_t width = static_cast<std::size_t>(info(v.type).storage_bits / 8);
    const std::byte* p = v.data + static_cast<std::int64_t>(i) * stride * static_cast<std::int64_t>(width);
    switch (width) {
        case 8: { std::uint64_t b; std::memcpy(&b, p, 8); return b; }
        case 4: { std::uint32_t b; std::memcpy(&b, p, 4); return b; }
        default: { std::uint16_t b; std::memcpy(&b, p, 2); return b; }
    }
}

template <class T>
nb::object numpy_from(std::vector<T>&& values) {
    auto* owned = new std::vector<T>(std::move(values));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    const std::size_t shape[1] = {owned->size()};
    return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

template nb::object numpy_from<std::uint8_t>(std::vector<std::uint8_t>&&);
template nb::object numpy_from<std::uint64_t>(std::vector<std::uint64_t>&&);
template nb::object numpy_from<std::int64_t>(std::vector<std::int64_t>&&);
template nb::object numpy_from<double>(std::vector<double>&&);

}  // namespace exactref::python

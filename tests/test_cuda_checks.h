// tests/test_cuda_checks.h — what the CUDA tests share: "same bits" for tree results, "same reference" for exact
// sums, printable values, and random inputs with printed seeds. Used by the emulator tests (test_cuda_*.cpp, always
// run) and the GPU tests (test_gpu_*.cpp, skipped without a device).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/tree.h"
#include "oracle.h"

#if defined(EXACTREF_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <stdexcept>
#endif

namespace exactref::test_cuda {

inline constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::product, reduce_op::min,
                                        reduce_op::max, reduce_op::any,     reduce_op::all};

template <class T>
constexpr const char* type_name() {
    if constexpr (std::is_same_v<T, double>) return "float64";
    else if constexpr (std::is_same_v<T, float>) return "float32";
    else if constexpr (std::is_same_v<T, float16>) return "float16";
    else if constexpr (std::is_same_v<T, bfloat16>) return "bfloat16";
    else if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, unsigned>) return "unsigned";
    else if constexpr (std::is_same_v<T, long>) return "long";
    else if constexpr (std::is_same_v<T, unsigned long>) return "unsigned long";
    else if constexpr (std::is_same_v<T, long long>) return "long long";
    else return "unsigned long long";
}

/// Raw bits of a float-format value (widened), or the integer itself.
template <class V>
std::uint64_t raw(V v) {
    if constexpr (floating_format<V>) return static_cast<std::uint64_t>(format_traits<V>::to_bits(v));
    else return static_cast<std::uint64_t>(v);
}

/// "0x3ff0000000000000 (float64 1)" / "-5 (int)".
template <class V>
std::string show(V v) {
    std::ostringstream out;
    if constexpr (floating_format<V>) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(raw(v)));
        out << hex << " (" << type_name<V>() << " " << to_double_exact(format_traits<V>::info, raw(v)) << ")";
    } else {
        out << +v << " (" << type_name<V>() << ")";
    }
    return out.str();
}

/// The promise of tree.h and cuda.h: identical bits, except that a NaN result of a sum or product matches any NaN
/// (payload and sign follow each processor's NaN rules). min, max, any, all: identical bits, NaNs included.
template <class V>
bool same_tree_bits(V a, V b, reduce_op op) {
    if constexpr (floating_format<V>) {
        if (raw(a) == raw(b)) return true;
        const format_info& f = format_traits<V>::info;
        return (op == reduce_op::sum || op == reduce_op::product) && oracle::is_nan_bits(f, raw(a)) &&
               oracle::is_nan_bits(f, raw(b));
    } else {
        return a == b;
    }
}

/// Compares two superaccumulators in everything a reference exposes: the exact value (canonical chunks and
/// decimal), the term count, the special state and the signed-zero predicates.
inline ::testing::AssertionResult same_accumulator(const superaccumulator& got, const superaccumulator& want,
                                                   const char* which) {
    superaccumulator g = got, w = want;
    g.normalize();
    w.normalize();
    const auto fail = [&](const std::string& what) {
        return ::testing::AssertionFailure() << which << ": " << what << " (got " << got.to_decimal() << ", want "
                                             << want.to_decimal() << ")";
    };
    if (g.chunks() != w.chunks()) return fail("the exact values differ");
    if (got.to_decimal() != want.to_decimal()) return fail("the decimals differ");
    if (got.term_count() != want.term_count())
        return fail("term counts " + std::to_string(got.term_count()) + " vs " + std::to_string(want.term_count()));
    if (got.has_nan() != want.has_nan()) return fail("NaN seen differs");
    if (got.positive_inf_count() != want.positive_inf_count()) return fail("+Inf counts differ");
    if (got.negative_inf_count() != want.negative_inf_count()) return fail("-Inf counts differ");
    if (got.all_negative_zero() != want.all_negative_zero()) return fail("all_negative_zero differs");
    if (got.all_positive_zero() != want.all_positive_zero()) return fail("all_positive_zero differs");
    for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward, rounding::downward})
        if (got.round_bits(binary64_info, mode) != want.round_bits(binary64_info, mode))
            return fail("rounding to float64 " + std::string(to_string(mode)) + " differs");
    return ::testing::AssertionSuccess();
}

/// Compares a device (or emulated) reference with the host's, field by field.
inline ::testing::AssertionResult same_reference(const reference& got, const reference& want) {
    if (auto r = same_accumulator(got.sum, want.sum, "s"); !r) return r;
    if (auto r = same_accumulator(got.abs_sum, want.abs_sum, "S"); !r) return r;
    if (got.count != want.count)
        return ::testing::AssertionFailure() << "count " << got.count << " vs " << want.count;
    if (got.term_format != want.term_format) return ::testing::AssertionFailure() << "term formats differ";
    if (got.is_dot != want.is_dot) return ::testing::AssertionFailure() << "is_dot differs";
    if (got.min_product_exponent != want.min_product_exponent)
        return ::testing::AssertionFailure() << "min_product_exponent " << got.min_product_exponent << " vs "
                                             << want.min_product_exponent;
    if (got.product_may_underflow != want.product_may_underflow)
        return ::testing::AssertionFailure() << "product_may_underflow differs";
    return ::testing::AssertionSuccess();
}

/// n random values of T: float formats from the oracle's mixes (oracle::random_terms), integers uniform over a
/// range that makes sums wrap and products overflow.
template <class T>
std::vector<T> random_values(std::size_t n, oracle::term_mix mix, std::mt19937_64& rng) {
    if constexpr (floating_format<T>) {
        const std::vector<std::uint64_t> bits = oracle::random_terms(format_traits<T>::info, n, mix, rng);
        return oracle::from_bits<T>(bits);
    } else {
        std::vector<T> out(n);
        const int kind = static_cast<int>(mix) % 3;  // full range, small, zeros and ones
        for (auto& v : out) {
            const std::uint64_t r = rng();
            if (kind == 0) v = static_cast<T>(r);
            else if (kind == 1) v = static_cast<T>(static_cast<std::int64_t>(r % 201) - 100);
            else v = static_cast<T>(r % 4 == 0 ? 0 : 1);
        }
        return out;
    }
}

/// A mask (bool array with a span view; std::vector<bool> has none): each flag true with probability p, and with
/// every element of a few random 16-element leaves false, so that some fold leaves are absent.
struct mask_buffer {
    std::unique_ptr<bool[]> flags;
    std::size_t size = 0;
    std::span<const bool> view() const { return {flags.get(), size}; }
};
inline mask_buffer random_mask(std::size_t n, double p, std::mt19937_64& rng) {
    mask_buffer m{std::make_unique<bool[]>(n == 0 ? 1 : n), n};
    std::bernoulli_distribution keep(p);
    for (std::size_t i = 0; i < n; ++i) m.flags[i] = keep(rng);
    for (std::size_t leaf = 0; leaf * 16 < n; ++leaf)
        if (rng() % 5 == 0)
            for (std::size_t i = leaf * 16; i < n && i < leaf * 16 + 16; ++i) m.flags[i] = false;
    return m;
}

/// Sizes every tree and exact test runs: empty, single, around a warp, a leaf, a block's slice and a tile.
inline std::vector<std::size_t> interesting_sizes(std::mt19937_64& rng) {
    std::vector<std::size_t> sizes{0, 1, 2, 31, 255, 256, 257, 2047, 2049, 4095, 4096, 4097, 8193, 65537};
    sizes.push_back(rng() % 3000 + 1);
    sizes.push_back(rng() % 40000 + 1);
    return sizes;
}

#if defined(EXACTREF_HAVE_CUDA)
/// Device memory for the GPU tests: n elements of T, freed at the end of the scope.
template <class T>
class device_vector {
public:
    explicit device_vector(std::size_t n) : n_(n) {
        if (n > 0) check(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)), "cudaMalloc");
    }
    explicit device_vector(std::span<const T> host) : device_vector(host.size()) {
        if (n_ > 0) check(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    }
    device_vector(const device_vector&) = delete;
    device_vector& operator=(const device_vector&) = delete;
    ~device_vector() {
        if (ptr_ != nullptr) cudaFree(ptr_);
    }
    T* data() const { return ptr_; }
    std::size_t size() const { return n_; }
    std::vector<T> to_host() const {
        std::vector<T> out(n_);
        if (n_ > 0) check(cudaMemcpy(out.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
        return out;
    }

private:
    static void check(cudaError_t e, const char* what) {
        if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
    T* ptr_ = nullptr;
    std::size_t n_ = 0;
};
#endif

}  // namespace exactref::test_cuda

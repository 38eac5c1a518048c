// exactref/cuda/exact_result.cuh — host side of the exact device sum: the state a kernel (or the block emulator)
// leaves, turned into the exactref::reference that exactref::sum / exactref::dot would give for the same data.
//
// Host only (it builds superaccumulators); used by src/cuda/api.cpp (device_exact_reference) and by the emulator
// tests. The result equals the host reference in everything covers() and the tests can observe: the exact s and S, n,
// the special state (NaN seen, ±Inf counts, the -0.0/+0.0 flags), term_format, is_dot, min_product_exponent and
// product_may_underflow.
#pragma once

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "exactref/accumulator.h"
#include "exactref/cuda/exact_steps.cuh"
#include "exactref/format.h"
#include "exactref/reference.h"

namespace exactref::cuda::detail {

static_assert(superaccumulator::chunk_bits == exact_chunk_bits && superaccumulator::chunk_count == exact_chunk_count &&
                  superaccumulator::lsb_exponent == exact_lsb_exponent,
              "the device chunks are the superaccumulator's chunks");

/// Adds the exact value of a device chunk array (two's complement int64 chunks, any carries pending) to acc.
/// The chunks are made canonical here, the magnitude taken across 32-bit words, and each word added at its
/// position (add_lane_sum: no term is counted). Throws std::logic_error for a magnitude of 2^2144 or more, which
/// no sum or dot of supported values can reach (accumulator.h: the top chunk only carries the sign).
inline void add_device_chunks(superaccumulator& acc, const unsigned long long* device_chunks) {
    constexpr int n = exact_chunk_count;
    unsigned long long c[n];
    for (int k = 0; k < n; ++k) c[k] = device_chunks[k];
    normalize_chunks(c);
    // value = Σ_{k<135} c_k 2^(32k) + top·2^(32·135), c_k in [0, 2^32), top a signed int64: n + 1 words of 32 bits
    std::uint32_t words[n + 1];
    for (int k = 0; k + 1 < n; ++k) words[k] = static_cast<std::uint32_t>(c[k]);
    words[n - 1] = static_cast<std::uint32_t>(c[n - 1]);
    words[n] = static_cast<std::uint32_t>(c[n - 1] >> 32);
    const bool negative = static_cast<std::int64_t>(c[n - 1]) < 0;
    if (negative) {  // two's complement negation across the words: -V = ~V + 1
        std::uint64_t carry = 1;
        for (auto& w : words) {
            const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~w)) + carry;
            w = static_cast<std::uint32_t>(v);
            carry = v >> 32;
        }
    }
    if (words[n - 1] != 0 || words[n] != 0)
        throw std::logic_error("exactref::cuda: a device superaccumulator holds a magnitude of 2^2144 or more, which no "
                               "sum or dot product of supported values can reach; the device state is corrupt");
    for (int k = 0; k + 1 < n; ++k)
        if (words[k] != 0) {
            const auto w = static_cast<std::int64_t>(words[k]);
            acc.add_lane_sum(negative ? -w : w, exact_lsb_exponent + exact_chunk_bits * k);
        }
}

/// The reference of the data an exact device sum or dot product saw (the state as copied to the host).
/// Throws std::invalid_argument for a state whose counts do not add up (not written by an exact kernel).
inline reference make_reference(const exact_state& st) {
    if (st.term_format > static_cast<unsigned>(dtype::bfloat16))
        throw std::invalid_argument("exactref::cuda: the exact-sum state names no dtype (" +
                                    std::to_string(st.term_format) + "); was the work buffer written by "
                                    "device_exact_sum / device_exact_dot?");
    const std::uint64_t specials = (st.nan_seen ? 1u : 0u) + st.positive_inf + st.negative_inf;
    if (specials > st.count || st.positive_inf > st.count || st.negative_inf > st.count)
        throw std::invalid_argument("exactref::cuda: the exact-sum state counts more infinities than terms (" +
                                    std::to_string(specials) + " > " + std::to_string(st.count) +
                                    "); the work buffer was overwritten or not initialised");
    reference r;
    r.count = st.count;
    r.term_format = static_cast<dtype>(st.term_format);
    add_device_chunks(r.sum, st.sum_chunks);
    add_device_chunks(r.abs_sum, st.abs_chunks);
    // s: the terms' special state; every other term counted with the zero flags the device saw
    if (st.nan_seen) r.sum.note_special(true, false);
    exactref::detail::add_infinities(r.sum, st.positive_inf, false);
    exactref::detail::add_infinities(r.sum, st.negative_inf, true);
    r.sum.note_terms(st.count - specials, st.not_negative_zero != 0, st.not_positive_zero != 0);
    // S: the same terms with the sign cleared (|NaN| is NaN, |±Inf| is +Inf, |±0| is +0)
    if (st.nan_seen) r.abs_sum.note_special(true, false);
    exactref::detail::add_infinities(r.abs_sum, st.positive_inf + st.negative_inf, false);
    r.abs_sum.note_terms(st.count - specials, st.count > 0, st.nonzero != 0);
    if (st.is_dot) {
        const int emin = info(r.term_format).emin;
        const int clamped = st.min_product_exponent < emin ? st.min_product_exponent : emin;
        r.is_dot = true;
        r.min_product_exponent = clamped;
        r.product_may_underflow = clamped < emin;
    }
    return r;
}

}  // namespace exactref::cuda::detail

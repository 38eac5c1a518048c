// fuzz_accumulator: the superaccumulator (accumulator.h) on arbitrary bit patterns of all four formats.
// Input: a format byte, then records of 1 + 2·width bytes: an op byte (bit 0: add x or add_product x·y; bit 1: into
// accumulator A or B; bit 2: through the span kernel add(span) rather than add_bits) and two values' raw bits. B is
// merged into A at the end (merge), and half the time A is negated twice on the way (negate).
// Properties: the exact value (to_decimal) equals the GMP oracle's exact decimal of Σ x (or x·y), and round_bits into
// each of the four formats in each of the four modes equals the oracle's rounding, which MPFR and Boost must agree on
// first (every term an x·y product: an add is x·1, exact with the same special-value rules).
#include <cstdint>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "fuzz_check.h"
#include "oracle.h"

namespace {

namespace o = exactref::oracle;
using exactref::format_info;
using exactref::rounding;

std::uint64_t one_bits(const format_info& f) {
    return std::uint64_t{(1u << (f.exponent_bits - 1)) - 1u} << (f.precision - 1);
}

template <exactref::floating_format T>
void add_through_span(exactref::superaccumulator& acc, std::uint64_t bits) {
    using tr = exactref::format_traits<T>;
    const T x = tr::from_bits(static_cast<typename tr::bits_type>(bits));
    acc.add(std::span<const T>(&x, 1));
}

void add_span(exactref::superaccumulator& acc, const format_info& f, std::uint64_t bits) {
    switch (f.id) {
        case exactref::dtype::float64: return add_through_span<double>(acc, bits);
        case exactref::dtype::float32: return add_through_span<float>(acc, bits);
        case exactref::dtype::float16: return add_through_span<exactref::float16>(acc, bits);
        case exactref::dtype::bfloat16: return add_through_span<exactref::bfloat16>(acc, bits);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const format_info& f = exactref::info(static_cast<exactref::dtype>(data[0] % 4));
    const bool negate_twice = (data[0] & 4) != 0;
    const std::size_t width = f.storage_bits / 8;
    const std::size_t record = 1 + 2 * width;
    std::vector<std::uint64_t> xs, ys;
    exactref::superaccumulator a, b;
    for (std::size_t at = 1; at + record <= size && xs.size() < 64; at += record) {
        const std::uint8_t op = data[at];
        std::uint64_t x = 0, y = 0;
        for (std::size_t i = 0; i < width; ++i) {
            x |= std::uint64_t{data[at + 1 + i]} << (8 * i);
            y |= std::uint64_t{data[at + 1 + width + i]} << (8 * i);
        }
        exactref::superaccumulator& target = (op & 2) ? b : a;
        if (op & 1) {
            target.add_product_bits(f, x, y);
        } else {
            y = one_bits(f);
            if (op & 4) add_span(target, f, x);
            else target.add_bits(f, x);
        }
        xs.push_back(x);
        ys.push_back(y);
        if (negate_twice && xs.size() == 3) {
            a.negate();
            a.negate();
        }
    }
    a.merge(b);
    const o::gmp_exact gmp = o::gmp_dot(xs, ys, f);
    const o::mpfr_exact mpfr = o::mpfr_dot(xs, ys, f);
    const o::boost_exact boost = o::boost_dot(xs, ys, f);
    std::string terms;
    for (std::size_t i = 0; i < xs.size(); ++i) terms += " " + o::describe(xs[i], f) + "*" + o::describe(ys[i], f);
    EXACTREF_FUZZ_CHECK(a.to_decimal() == gmp.decimal(), "exact value " + a.to_decimal() + ", GMP " + gmp.decimal() + "; terms" + terms);
    for (exactref::dtype d : {exactref::dtype::float64, exactref::dtype::float32, exactref::dtype::float16,
                              exactref::dtype::bfloat16}) {
        const format_info& to = exactref::info(d);
        for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward, rounding::downward}) {
            const std::uint64_t want = mpfr.round_bits(to, mode);
            EXACTREF_FUZZ_CHECK(boost.round_bits(to, mode) == want, "the oracles disagree; terms" + terms);
            const std::uint64_t got = a.round_bits(to, mode);
            EXACTREF_FUZZ_CHECK(got == want || (o::is_nan_bits(to, got) && o::is_nan_bits(to, want)),
                                "round to " + std::string(to.name) + " " + std::string(exactref::to_string(mode)) +
                                    ": got " + o::describe(got, to) + ", want " + o::describe(want, to) + "; terms" + terms);
        }
    }
    return 0;
}

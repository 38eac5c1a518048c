// fuzz_covers: covers() (covers.h) against the exhaustive reachable-set enumerator (oracle/reachable.cpp).
// Input: a format byte, then 1..5 values' raw bits. Every result that some binary tree over some order of the terms
// produces with round-to-nearest additions (reachable_sums) must be covered by any_order(), and every result of a
// tree of height <= h (reachable_sums_by_height) by tree(h) for h from ceil(log2 n) to n - 1. Never a false alarm:
// covers_bits, decide_bits and the array covers() (its binary64 filter) must all say covered.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/reference.h"
#include "fuzz_check.h"
#include "oracle.h"

namespace {

namespace o = exactref::oracle;
using exactref::format_info;

template <exactref::floating_format T>
void check(const std::vector<std::uint64_t>& terms) {
    const format_info& f = exactref::format_traits<T>::info;
    const std::vector<T> xs = o::from_bits<T>(terms);
    const exactref::reference ref = exactref::sum(std::span<const T>(xs));
    std::string described;
    for (std::uint64_t t : terms) described += " " + o::describe(t, f);
    const auto by_height = o::reachable_sums_by_height(terms, f);
    auto expect_covered = [&](const std::vector<std::uint64_t>& results, const exactref::standard& model) {
        for (std::uint64_t r : results) {
            const exactref::verdict v = exactref::covers_bits(f, r, ref, model);
            EXACTREF_FUZZ_CHECK(v.covered, "false alarm: " + model.name() + " rejects the reachable " +
                                               o::describe(r, f) + " of terms" + described + "\n" + v.message());
            EXACTREF_FUZZ_CHECK(exactref::decide_bits(f, r, ref, model).covered,
                                "decide_bits rejects " + o::describe(r, f) + " under " + model.name() + "; terms" + described);
        }
        const std::vector<T> typed = o::from_bits<T>(results);
        const exactref::array_verdict all = exactref::covers(std::span<const T>(typed), ref, model);
        EXACTREF_FUZZ_CHECK(all.covered, "array covers() under " + model.name() + ": " + all.message() + "; terms" + described);
    };
    expect_covered(by_height.back(), exactref::any_order());
    for (std::size_t h = 0; h + 1 < by_height.size(); ++h)
        if (!by_height[h].empty()) expect_covered(by_height[h], exactref::tree(h));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto type = static_cast<exactref::dtype>(data[0] % 4);
    const std::size_t width = exactref::info(type).storage_bits / 8;
    std::vector<std::uint64_t> terms;
    for (std::size_t at = 1; at + width <= size && terms.size() < 5; at += width) {
        std::uint64_t x = 0;
        for (std::size_t i = 0; i < width; ++i) x |= std::uint64_t{data[at + i]} << (8 * i);
        terms.push_back(x);
    }
    if (terms.empty()) return 0;
    switch (type) {
        case exactref::dtype::float64: check<double>(terms); break;
        case exactref::dtype::float32: check<float>(terms); break;
        case exactref::dtype::float16: check<exactref::float16>(terms); break;
        case exactref::dtype::bfloat16: check<exactref::bfloat16>(terms); break;
    }
    return 0;
}

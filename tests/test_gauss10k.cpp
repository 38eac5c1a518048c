// The shared test vector (shared/data/README.md): 10,000 float32 Gaussian values summed in five orders give four
// different float32 answers, all covered by any_order; the bound (n-1)·u·Σ|x| = 4.72203014716… is reported rounded
// upward and tightly; the floats just outside s ± B are rejected and those just inside accepted.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "oracle.h"

namespace {

using namespace exactref;
namespace orc = exactref::oracle;

const std::string data_dir = EXACTREF_SHARED_DATA;

std::vector<float> read_values() {
    std::ifstream in(data_dir + "/gauss10k_f32.txt");
    EXPECT_TRUE(in) << "cannot open " << data_dir << "/gauss10k_f32.txt";
    std::vector<float> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        char* end = nullptr;
        const double d = std::strtod(line.c_str(), &end);  // C99 hex float: exact
        const float f = static_cast<float>(d);
        EXPECT_EQ(static_cast<double>(f), d) << "not a float32 value: " << line;
        out.push_back(f);
    }
    return out;
}

std::vector<std::vector<std::size_t>> read_orders(std::size_t n) {
    std::ifstream in(data_dir + "/gauss10k_orders.txt");
    EXPECT_TRUE(in) << "cannot open " << data_dir << "/gauss10k_orders.txt";
    std::vector<std::vector<std::size_t>> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::vector<std::size_t> order;
        for (std::size_t k; words >> k;) order.push_back(k);
        std::vector<std::size_t> check = order;
        std::sort(check.begin(), check.end());
        for (std::size_t k = 0; k < check.size(); ++k) EXPECT_EQ(check[k], k) << "order " << out.size() << " is not a permutation";
        EXPECT_EQ(order.size(), n);
        out.push_back(std::move(order));
    }
    return out;
}

orc::boost_rational to_boost(const mpq_class& q) {
    return orc::boost_rational(orc::boost_integer(q.get_num().get_str()), orc::boost_integer(q.get_den().get_str()));
}

// q rounded to float32 in `mode` by both oracles (they must agree).
std::uint32_t round_f32(const mpq_class& q, rounding mode) {
    const std::uint64_t by_boost = orc::boost_round_bits(to_boost(q), binary32_info, mode);
    EXPECT_EQ(by_boost, orc::mpfr_round_rational_bits(q, binary32_info, mode));
    return static_cast<std::uint32_t>(by_boost);
}

class Gauss10k : public ::testing::Test {
protected:
    void SetUp() override {
        values = read_values();
        ASSERT_EQ(values.size(), 10000u);
        orders = read_orders(values.size());
        ASSERT_EQ(orders.size(), 5u);
        ref = sum(values);
        const std::vector<std::uint64_t> bits = orc::to_bits(std::span<const float>(values));
        exact = orc::gmp_sum(bits, binary32_info).value;
        std::vector<std::uint64_t> abs_bits = bits;
        for (auto& b : abs_bits) b &= 0x7FFF'FFFFu;
        abs_sum = orc::gmp_sum(abs_bits, binary32_info).value;
        // B = (n - 1)·u·Σ|x|, u = 2^-24 (shared/DESIGN.md §3; Rump, BIT 52 (2012))
        exact_bound = mpq_class(static_cast<unsigned long>(values.size() - 1)) * abs_sum;
        exact_bound >>= 24;
    }
    std::vector<float> values;
    std::vector<std::vector<std::size_t>> orders;
    reference ref;
    mpq_class exact, abs_sum, exact_bound;
};

TEST_F(Gauss10k, ExactSumAndNearestMatchTheReadme) {
    EXPECT_EQ(ref.exact(), orc::gmp_decimal(exact));
    // The README rounds to 17 digits (30.604261366177525…, Σ|x| = 7923.04427817354…); the leading digits of the exact
    // values below were computed independently with Python's fractions module.
    EXPECT_EQ(ref.exact().substr(0, 22), "30.6042613661775249056");
    EXPECT_EQ(ref.exact(), "30.6042613661775249056518077850341796875");
    EXPECT_EQ(ref.nearest<float>(), 0x1.e9ab0ep+4f);
    EXPECT_EQ(orc::gmp_decimal(abs_sum).substr(0, 22), "7923.04427817354007856");
    EXPECT_EQ(ref.count, 10000u);
}

TEST_F(Gauss10k, FiveOrdersGiveFourAnswersAllCovered) {
    // shared/data/README.md lists the five left-fold results, in file order.
    const float listed[] = {0x1.e9ab46p+4f, 0x1.e9ab26p+4f, 0x1.e9ab46p+4f, 0x1.e9aae2p+4f, 0x1.e9abb4p+4f};
    std::set<float> distinct;
    for (std::size_t k = 0; k < orders.size(); ++k) {
        float host = 0.0f;                                 // the host's float additions (default environment)
        std::uint64_t oracle = 0;                          // add_rounded: integer arithmetic
        for (std::size_t i : orders[k]) {
            host += values[i];
            oracle = orc::add_rounded(oracle, std::bit_cast<std::uint32_t>(values[i]), binary32_info);
        }
        EXPECT_EQ(std::bit_cast<std::uint32_t>(host), oracle) << "order " << k;
        EXPECT_EQ(host, listed[k]) << "order " << k;
        distinct.insert(host);
        const verdict v = covers(host, ref, any_order());
        EXPECT_TRUE(v.covered) << "order " << k << "\n" << v.message();
        EXPECT_NE(host, ref.nearest<float>()) << "order " << k << " happens to be exact: the test would be weak";
    }
    EXPECT_EQ(distinct.size(), 4u);
}

TEST_F(Gauss10k, BoundIsRoundedUpwardAndTight) {
    const double b = bound(ref, any_order(), binary32_info);
    const mpq_class bq(b);
    EXPECT_GE(bq, exact_bound) << "the reported bound is below the exact bound";
    EXPECT_LT(mpq_class(std::nextafter(b, 0.0)), exact_bound) << "the reported bound is not the nearest double above";
    EXPECT_NEAR(b, 4.72203014716, 5e-12);
    EXPECT_EQ(covers(ref.nearest<float>(), ref, any_order()).bound, b);
}

TEST_F(Gauss10k, JustOutsideTheBoundIsRejectedJustInsideAccepted) {
    for (int side : {+1, -1}) {
        const mpq_class edge = side > 0 ? mpq_class(exact + exact_bound) : mpq_class(exact - exact_bound);
        // inside: the float nearest the edge on the side of s; outside: the next float beyond the edge.
        const rounding in_mode = side > 0 ? rounding::downward : rounding::upward;
        const rounding out_mode = side > 0 ? rounding::upward : rounding::downward;
        const float inside = std::bit_cast<float>(round_f32(edge, in_mode));
        float outside = std::bit_cast<float>(round_f32(edge, out_mode));
        if (mpq_class(outside) == edge) outside = std::nextafter(outside, side > 0 ? INFINITY : -INFINITY);
        const verdict in = covers(inside, ref, any_order());
        const verdict out = covers(outside, ref, any_order());
        EXPECT_TRUE(in.covered) << "side " << side << "\n" << in.message();
        EXPECT_FALSE(out.covered) << "side " << side << "\n" << out.message();
        EXPECT_GT(out.ratio, 1.0);
        EXPECT_LE(in.ratio, 1.0);
        // They are neighbours: nothing between them, so the decision is as tight as float32 allows.
        EXPECT_EQ(std::nextafter(inside, side > 0 ? INFINITY : -INFINITY), outside);
    }
}

}  // namespace

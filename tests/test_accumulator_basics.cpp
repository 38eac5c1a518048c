// Hand-checked cases of the superaccumulator: each answer below was verified outside the code under test
// (by hand or with Python's fractions module).
#include <gtest/gtest.h>

#include <vector>

#include "exactref/accumulator.h"

namespace {
using exactref::superaccumulator;

TEST(Superaccumulator, IntermediateOverflowIsExact) {
    superaccumulator acc;
    acc.add(1e308);
    acc.add(1e308);
    acc.add(-1e308);
    EXPECT_EQ(acc.round<double>(), 1e308);
}

TEST(Superaccumulator, TenTimesPointOne) {
    superaccumulator acc;
    for (int i = 0; i < 10; ++i) acc.add(0.1);
    // 10 * 0x1.999999999999ap-4 = 1 + 2^-54 + 2^-56 ... exactly 1.000000000000000055511151231257827021181583404541015625
    EXPECT_EQ(acc.to_decimal(), "1.000000000000000055511151231257827021181583404541015625");
    EXPECT_EQ(acc.round<double>(), 1.0);
}
}  // namespace

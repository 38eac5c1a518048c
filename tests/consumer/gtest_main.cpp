// The GoogleTest face through the installed package.
#include <exactref/gtest.h>

TEST(Consumer, CoversMatcher) {
    const std::vector<double> xs{0.1, 0.2, 0.3};
    const auto ref = exactref::sum(xs);
    EXPECT_THAT(0.1 + 0.2 + 0.3, exactref::Covers(ref, exactref::any_order()));
    EXPECT_THAT(0.7, ::testing::Not(exactref::Covers(ref, exactref::any_order())));
}

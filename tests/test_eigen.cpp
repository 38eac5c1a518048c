// The Eigen face (eigen.h): matmul of dense matrices, maps, blocks, transposes and expressions of every supported
// scalar equals the gemm.h reference of the same values; Eigen's own float and double GEMM results are covered by
// any_order; a result with a dropped or doubled product is rejected, and the verdict names the element. The
// GoogleTest matchers (gtest.h) on Eigen values: Eigen::half / Eigen::bfloat16 scalars judged as float16 / bfloat16
// bit for bit, and CoversAll of Eigen matrices, vectors and expressions, with planted wrong elements.
#include <gtest/gtest-spi.h>  // EXPECT_NONFATAL_FAILURE
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "exactref/dot.h"
#include "exactref/eigen.h"
#include "exactref/gtest.h"
#include "exactref/multiprecision.h"
#include "test_dot_checks.h"
#include "test_eigen_checks.h"

namespace {
using namespace exactref;
using namespace exactref::testing_support;

// The gemm.h reference of the same values, from row-major copies.
template <class T, class DA, class DB>
product_reference reference_of(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
    std::vector<T> av, bv;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j) av.push_back(std::bit_cast<T>(a(i, j)));
    for (Eigen::Index i = 0; i < b.rows(); ++i)
        for (Eigen::Index j = 0; j < b.cols(); ++j) bv.push_back(std::bit_cast<T>(b(i, j)));
    return exact_matmul<T>(row_major<T>(av, static_cast<std::size_t>(a.rows()), static_cast<std::size_t>(a.cols())),
                           row_major<T>(bv, static_cast<std::size_t>(b.rows()), static_cast<std::size_t>(b.cols())),
                           matmul_options{matmul_method::per_element, 1, 0});
}

void expect_same_array(const reference_array& got, const product_reference& want) {
    ASSERT_EQ(got.rows, want.rows());
    ASSERT_EQ(got.cols, want.cols());
    for (std::size_t i = 0; i < got.rows; ++i)
        for (std::size_t j = 0; j < got.cols; ++j) {
            SCOPED_TRACE("element (" + std::to_string(i) + ", " + std::to_string(j) + ")");
            expect_same_reference(got(i, j), want.element(i, j));
            if (::testing::Test::HasFailure()) return;
        }
}

TEST(Eigen, DocumentedExample) {
    Eigen::MatrixXd a(2, 2), b(2, 2);
    a << 1, 2, 3, 4;
    b << 5, 6, 7, 8;
    EXPECT_EQ(matmul(a, b)(0, 1).exact(), "22");
}

TEST(Eigen, StorageOrdersMapsBlocksTransposesAndExpressions) {
    std::mt19937_64 rng(21);
    using RowF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::MatrixXf a = gaussian<Eigen::MatrixXf>(9, 33, rng);
    const RowF b = gaussian<RowF>(33, 7, rng);
    expect_same_array(matmul(a, b), reference_of<float>(a, b));
    // A column-major block of a bigger matrix, B through a Map with an inner and outer stride, a transpose.
    const Eigen::MatrixXf big = gaussian<Eigen::MatrixXf>(20, 40, rng);
    std::vector<float> storage(33 * 7 * 3);
    for (std::size_t t = 0; t < storage.size(); ++t) storage[t] = static_cast<float>(t % 17) - 8.5f;
    const Eigen::Map<const Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>> bm(
        storage.data(), 33, 7, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(99, 3));
    const auto blk = big.block(3, 4, 9, 33);
    expect_same_array(matmul(blk, bm), reference_of<float>(blk, bm));
    const RowF bt = gaussian<RowF>(7, 33, rng);
    expect_same_array(matmul(blk, bt.transpose()), reference_of<float>(blk, bt.transpose()));
    // An expression (no direct access): evaluated once, then the same as its value.
    const Eigen::MatrixXf expr_value = (a * 2.0f).eval();
    expect_same_array(matmul(a * 2.0f, b), reference_of<float>(expr_value, b));
    // A product expression as an operand is evaluated once, not once per element read: an operand read element by
    // element evaluates a counted coefficient of the inner operand K times per element (48³ reads); evaluated once,
    // Eigen's GEMM reads each about once (48² reads).
    {
        long reads = 0;
        const Eigen::MatrixXd x = gaussian<Eigen::MatrixXd>(48, 48, rng), y = gaussian<Eigen::MatrixXd>(48, 48, rng);
        const auto counted = x.unaryExpr([&reads](double v) { ++reads; return v; });
        const Eigen::MatrixXd xy = counted * y;  // the same evaluation, for the expected values
        reads = 0;
        const reference_array got = matmul(counted * y, y);
        expect_same_array(got, reference_of<double>(xy, y));
        EXPECT_LT(reads, 48L * 48 * 48 / 8) << "the product expression was evaluated per element";
        // The result side: covers() of a product expression evaluates it once too (read per element, it cost 48³
        // reads here and O(n^5) work for a product of products), and judges the same values as the evaluated matrix.
        const reference_array refs = matmul(x, y);
        const product_reference compact = exact_matmul(x, y);
        const matrix_verdict want = covers(xy, refs, eigen_gemm_standard());
        ASSERT_TRUE(want.covered) << want.message();
        for (int compact_form = 0; compact_form < 2; ++compact_form) {
            SCOPED_TRACE(compact_form ? "against a product_reference" : "against a reference_array");
            reads = 0;
            const matrix_verdict v = compact_form ? covers(counted * y, compact, eigen_gemm_standard())
                                                  : covers(counted * y, refs, eigen_gemm_standard());
            EXPECT_LT(reads, 48L * 48 * 48 / 8) << "the result expression was evaluated per element";
            EXPECT_TRUE(v.covered) << v.message();
            EXPECT_EQ(v.size, want.size);
            EXPECT_EQ(v.worst_index, want.worst_index);
            EXPECT_EQ(v.worst.message(), want.worst.message());
        }
    }
    // C0 + A·B
    const Eigen::MatrixXf c0 = gaussian<Eigen::MatrixXf>(9, 7, rng);
    const reference_array with_c = matmul(a, b, c0);
    for (Eigen::Index i = 0; i < 9; ++i)
        for (Eigen::Index j = 0; j < 7; ++j) {
            const Eigen::VectorXf row = a.row(i).transpose();
            const Eigen::VectorXf col = b.col(j);
            const reference want = dot(std::span<const float>(row.data(), 33), std::span<const float>(col.data(), 33),
                                       c0(i, j));
            expect_same_reference(with_c(static_cast<std::size_t>(i), static_cast<std::size_t>(j)), want);
        }
}

TEST(Eigen, HalfAndBfloat16Scalars) {
    std::mt19937_64 rng(22);
    const Eigen::MatrixXf af = gaussian<Eigen::MatrixXf>(6, 50, rng), bf = gaussian<Eigen::MatrixXf>(50, 5, rng);
    const Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic> ah = af.cast<Eigen::half>();
    const Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic> bh = bf.cast<Eigen::half>();
    expect_same_array(matmul(ah, bh), reference_of<float16>(ah, bh));
    const Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic> ab = af.cast<Eigen::bfloat16>();
    const Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic> bb = bf.cast<Eigen::bfloat16>();
    expect_same_array(matmul(ab, bb), reference_of<bfloat16>(ab, bb));
    EXPECT_EQ(matmul(ah, bh)(0, 0).term_format, dtype::float16);
    EXPECT_EQ(matmul(ab, bb)(0, 0).term_format, dtype::bfloat16);
}

TEST(Eigen, EigensOwnGemmIsCoveredByAnyOrder) {
    std::mt19937_64 rng(23);
    std::uniform_int_distribution<int> dim(1, 70), inner(1, 600);
    for (int trial = 0; trial < 12; ++trial) {
        const int m = dim(rng), n = dim(rng), k = inner(rng);
        SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(m) + " x " + std::to_string(k) + " x " +
                     std::to_string(n) + " (seed 23)");
        const Eigen::MatrixXd a = gaussian<Eigen::MatrixXd>(m, k, rng), b = gaussian<Eigen::MatrixXd>(k, n, rng);
        const Eigen::MatrixXf af = a.cast<float>(), bf = b.cast<float>();
        const Eigen::MatrixXf cf = af * bf;
        const matrix_verdict vf = covers(cf, exact_matmul(af, bf), eigen_gemm_standard());
        EXPECT_TRUE(vf.covered) << vf.message();
        const Eigen::MatrixXd cd = a * b;
        const matrix_verdict vd = covers(cd, matmul(a, b), eigen_gemm_standard());
        EXPECT_TRUE(vd.covered) << vd.message();
        EXPECT_EQ(vd.size, static_cast<std::size_t>(m * n));
    }
}

// Planted faults: one element computed without its largest product, or with it twice; the verdict must reject it and
// name its position, and the error must exceed the bound in exact arithmetic (checked here independently).
TEST(Eigen, DroppedOrDoubledProductIsRejectedAtItsPosition) {
    std::mt19937_64 rng(24);
    const Eigen::Index m = 12, k = 300, n = 10;
    const Eigen::MatrixXf a = gaussian<Eigen::MatrixXf>(m, k, rng), b = gaussian<Eigen::MatrixXf>(k, n, rng);
    const product_reference p = exact_matmul(a, b);
    for (int doubled = 0; doubled < 2; ++doubled) {
        Eigen::MatrixXf c = a * b;
        const Eigen::Index fi = 7, fj = 3;
        Eigen::Index l_max = 0;
        for (Eigen::Index l = 0; l < k; ++l)
            if (std::abs(a(fi, l) * b(l, fj)) > std::abs(a(fi, l_max) * b(l_max, fj))) l_max = l;
        c(fi, fj) += (doubled ? 1.0f : -1.0f) * a(fi, l_max) * b(l_max, fj);
        const reference r = p.element(fi, fj);
        const mpq_class err = abs(mpq_class(c(fi, fj)) - to_mpq(r.sum));
        const mpq_class bound = mpq_class(static_cast<long>(k)) * mpq_class(1, 1 << 24) * to_mpq(r.abs_sum);
        ASSERT_GT(err, bound) << "the planted fault must exceed n·u·T";
        const matrix_verdict v = covers(c, p, any_order());
        EXPECT_FALSE(v.covered);
        EXPECT_EQ(v.violations, 1u);
        EXPECT_EQ(v.worst_row, 7u);
        EXPECT_EQ(v.worst_col, 3u);
        ASSERT_EQ(v.first_violation_positions.size(), 1u);
        EXPECT_EQ(v.first_violation_positions[0], std::make_pair(std::size_t{7}, std::size_t{3}));
        EXPECT_GT(v.worst.ratio, 1.0);
        EXPECT_NE(v.message().find("1 of 120 results not covered by any_order; first violations at (7, 3)"),
                  std::string::npos)
            << v.message();
        // The array form agrees.
        const matrix_verdict va = covers(c, p.to_array(), any_order());
        EXPECT_EQ(va.violations, 1u);
        EXPECT_EQ(va.worst_row, 7u);
        EXPECT_EQ(va.worst_col, 3u);
    }
}

// The result read in every storage covers() accepts (column- and row-major, a block of a bigger matrix, a strided
// Map, a transpose, an expression): one planted wrong element is found at its (row, column) in each.
TEST(Eigen, ResultsInAnyStorageAreReadAsTheirValues) {
    std::mt19937_64 rng(25);
    using RowF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::MatrixXf a = gaussian<Eigen::MatrixXf>(6, 40, rng), b = gaussian<Eigen::MatrixXf>(40, 5, rng);
    const product_reference p = exact_matmul(a, b);
    const reference_array refs = p.to_array();
    Eigen::MatrixXf c = a * b;
    c(4, 2) = -c(4, 2);  // planted (the exact value is not near 0: checked below)
    ASSERT_GT(abs(mpq_class(c(4, 2)) - to_mpq(refs(4, 2).sum)), mpq_class(1, 1 << 10));
    const RowF row_major = c;
    Eigen::MatrixXf big = Eigen::MatrixXf::Zero(10, 9);
    big.block(2, 3, 6, 5) = c;
    std::vector<float> strided(6 * 5 * 6);
    Eigen::Map<Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>> map(
        strided.data(), 6, 5, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(13, 2));
    map = c;
    const RowF transposed = c.transpose();
    const auto check = [&](const auto& result, const char* what) {
        SCOPED_TRACE(what);
        for (const matrix_verdict& v : {covers(result, refs, any_order()), covers(result, p, any_order())}) {
            EXPECT_EQ(v.violations, 1u);
            EXPECT_EQ(v.worst_row, 4u);
            EXPECT_EQ(v.worst_col, 2u);
            EXPECT_EQ(v.size, 30u);
        }
    };
    check(c, "column-major");
    check(row_major, "row-major");
    check(big.block(2, 3, 6, 5), "block");
    check(map, "map with inner and outer stride");
    check(transposed.transpose(), "transpose of a row-major matrix");
    check(c * 1.0f, "expression");
}

TEST(Eigen, AnEmptyProductHasNothingToJudge) {
    const Eigen::MatrixXf a(0, 3), b(3, 0);
    const Eigen::MatrixXf c = a * b;
    const matrix_verdict v = covers(c, exact_matmul(a, b), any_order());
    EXPECT_TRUE(v.covered);
    EXPECT_EQ(v.size, 0u);
    EXPECT_EQ(v.message(), "no results to judge: the product is 0 x 0");
}

TEST(Eigen, ShapeMismatchIsAClearError) {
    const Eigen::MatrixXf a = Eigen::MatrixXf::Ones(3, 4), b = Eigen::MatrixXf::Ones(5, 2);
    try {
        (void)matmul(a, b);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "exactref::matmul: A is 3 x 4 and B is 5 x 2: the columns of A must equal the rows of B");
    }
    const Eigen::MatrixXf ok = Eigen::MatrixXf::Ones(4, 2);
    const reference_array refs = matmul(a, ok);
    try {
        (void)covers(Eigen::MatrixXf(Eigen::MatrixXf::Ones(2, 3)), refs, any_order());
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()), "exactref::covers: the result is 2 x 3 but the reference is 3 x 2: pass the "
                                         "result of the same product");
    }
}

TEST(EigenMatchers, HalfAndBfloat16ScalarsAreJudgedAsFloat16AndBfloat16BitForBit) {
    const std::vector<float16> xs{float16(1.0f), float16(0.5f), float16(0.25f), float16::from_bits(0x0001)};
    const reference ref = sum(xs);  // 1.75 + 2^-24: not representable in float16 (RN 1.75) nor in bfloat16
    EXPECT_THAT(Eigen::half(1.75f), Covers(ref, faithful()));
    EXPECT_THAT(Eigen::half(2.0f), ::testing::Not(Covers(ref, faithful())));
    EXPECT_THAT(Eigen::bfloat16(1.75f), Covers(ref, mixed(dtype::float32, dtype::bfloat16)));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(Eigen::half(2.0f), Covers(ref, exact())), "NOT COVERED by exact (float16)");
    // Eigen::bfloat16 is bfloat16, not float16: a standard rounding into float16 does not apply to it.
    EXPECT_NONFATAL_FAILURE(
        EXPECT_THAT(Eigen::bfloat16(1.75f), ::testing::Not(Covers(ref, mixed(dtype::float32, dtype::float16)))),
        "exactref::Covers could not judge the result: standard 'mixed:float32:float16' describes results in float16");
    // Every bit pattern: the Eigen scalar is judged exactly as the library scalar with the same bits.
    const std::vector<bfloat16> ys{bfloat16(1.0f), bfloat16(0.5f), bfloat16(0.25f), bfloat16::from_bits(0x0001)};
    const reference ref_b = sum(ys);  // 1.75 + 2^-133
    const ::testing::Matcher<Eigen::half> half_matcher = Covers(ref, faithful());
    const ::testing::Matcher<Eigen::bfloat16> bfloat16_matcher = Covers(ref_b, faithful());
    int covered = 0;
    for (std::uint32_t b = 0; b <= 0xffff; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const bool want_half = covers(float16::from_bits(bits), ref, faithful()).covered;
        const bool want_bfloat16 = covers(bfloat16::from_bits(bits), ref_b, faithful()).covered;
        ASSERT_EQ(half_matcher.Matches(std::bit_cast<Eigen::half>(bits)), want_half) << "bits " << b;
        ASSERT_EQ(bfloat16_matcher.Matches(std::bit_cast<Eigen::bfloat16>(bits)), want_bfloat16) << "bits " << b;
        covered += want_half + want_bfloat16;
    }
    EXPECT_EQ(covered, 2 + 2) << "faithful: RD and RU of the exact value, in each format";
}

// A failing CoversAll on a 64 x 32 result: the summary, the standard, the first violations and the worst element,
// and GoogleTest's "Actual:" line shows the shape and four values (eigen.h's PrintTo), never the 2,048 elements
// (28 KB before).
TEST(EigenMatchers, CoversAllFailureOnALargeMatrixIsShort) {
    std::mt19937_64 rng(64);
    const Eigen::Index m = 64, k = 50, n = 32;
    const Eigen::MatrixXf a = gaussian<Eigen::MatrixXf>(m, k, rng), b = gaussian<Eigen::MatrixXf>(k, n, rng);
    const reference_array refs = matmul(a, b);
    Eigen::MatrixXf bad = a * b;
    for (Eigen::Index i = 0; i < m; i += 8) bad(i, 5) += 100.0f;  // planted: 8 wrong elements
    bad(40, 30) = -1000.0f;                                         // planted, the worst
    ::testing::TestPartResultArray failures;
    {
        const ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        EXPECT_THAT(bad, CoversAll(refs, any_order()));
        EXPECT_THAT(bad, CoversAll(exact_matmul(a, b), any_order()));
    }
    ASSERT_EQ(failures.size(), 2);
    for (int f = 0; f < 2; ++f) {
        const std::string text = failures.GetTestPartResult(f).message();
        EXPECT_THAT(text, ::testing::HasSubstr("9 of 2048 results not covered by any_order; first violations at "
                                               "(0, 5) (8, 5) (16, 5) (24, 5) (32, 5) (40, 5) (40, 30) (48, 5)\n"
                                               "worst at (40, 30)"));
        EXPECT_THAT(text, ::testing::HasSubstr("Actual: 64 x 32 Eigen matrix, row-major ["));
        EXPECT_THAT(text, ::testing::HasSubstr(", ... 2048 values]"));
        EXPECT_THAT(text, ::testing::HasSubstr(covers(bad(40, 30), refs(40, 30), any_order()).message()));
        EXPECT_LT(text.size(), 4000u) << text;
    }
    // The printer itself: the shape and the first four values in row-major order, for a matrix and an expression.
    Eigen::Matrix2f small;
    small << 0.5f, 0.25f, 1.0f, 2.0f;
    EXPECT_EQ(::testing::PrintToString(small), "2 x 2 Eigen matrix, row-major [0.5, 0.25, 1, 2]");
    EXPECT_EQ(::testing::PrintToString(small.transpose()), "2 x 2 Eigen matrix, row-major [0.5, 1, 0.25, 2]");
    EXPECT_EQ(::testing::PrintToString(Eigen::VectorXd::Constant(6, 1.5)),
              "6 x 1 Eigen matrix, row-major [1.5, 1.5, 1.5, 1.5, ... 6 values]");
}

TEST(EigenMatchers, CoversAllTakesEigenMatricesVectorsAndExpressions) {
    std::mt19937_64 rng(26);
    const Eigen::Index m = 12, k = 300, n = 10;
    const Eigen::MatrixXf a = gaussian<Eigen::MatrixXf>(m, k, rng), b = gaussian<Eigen::MatrixXf>(k, n, rng);
    const reference_array refs = matmul(a, b);
    const Eigen::MatrixXf c = a * b;
    using RowF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    EXPECT_THAT(c, CoversAll(refs, eigen_gemm_standard()));
    EXPECT_THAT(RowF(c), CoversAll(refs, eigen_gemm_standard()));
    EXPECT_THAT(c, CoversAll(exact_matmul(a, b), eigen_gemm_standard()));
    EXPECT_THAT(a * b, CoversAll(refs, eigen_gemm_standard()));  // an expression, evaluated once
    // Planted: element (7, 3) without its largest product (as DroppedOrDoubledProductIsRejectedAtItsPosition, which
    // checks that the error exceeds n·u·T in exact arithmetic).
    Eigen::MatrixXf bad = c;
    Eigen::Index l_max = 0;
    for (Eigen::Index l = 0; l < k; ++l)
        if (std::abs(a(7, l) * b(l, 3)) > std::abs(a(7, l_max) * b(l_max, 3))) l_max = l;
    bad(7, 3) -= a(7, l_max) * b(l_max, 3);
    EXPECT_THAT(bad, ::testing::Not(CoversAll(refs, any_order())));
    const std::string planted = "1 of 120 results not covered by any_order; first violations at (7, 3)";
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(bad, CoversAll(refs, any_order())), planted);
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(bad, CoversAll(exact_matmul(a, b), any_order())), planted);
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(bad, CoversAll(refs, any_order())),
                            "Expected: every element is covered by any_order for their exact values [" +
                                refs(0, 0).exact() + ", " + refs(0, 1).exact());
    // Runs of one sum as an Eigen vector, against one reference.
    const std::vector<float> xs{1.0f, 2.0f, 3.0f};
    Eigen::VectorXf runs(3);
    runs << 6.0f, 6.0f, 6.0f;
    EXPECT_THAT(runs, CoversAll(sum(xs), any_order()));
    runs(2) = 7.0f;
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(runs, CoversAll(sum(xs), any_order())),
                            "1 of 3 results not covered by any_order; first violations at (2, 0)");
    // A result of another shape: a failure that says so, in both polarities.
    const std::string shape = "exactref::covers: the result is 10 x 12 but the reference is 12 x 10";
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(c.transpose(), ::testing::Not(CoversAll(refs, any_order()))),
                            "exactref::CoversAll could not judge the result: " + shape);
    ::testing::TestPartResultArray failures;
    {
        const ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        EXPECT_THAT(c.transpose(), CoversAll(refs, any_order()));
    }
    ASSERT_EQ(failures.size(), 2);
    EXPECT_THAT(failures.GetTestPartResult(1).message(), ::testing::HasSubstr("could not be judged: " + shape));
}

}  // namespace

// The Eigen face (eigen.h): matmul of dense matrices, maps, blocks, transposes and expressions of every supported
// scalar equals the gemm.h reference of the same values; Eigen's own float and double GEMM results are covered by
// any_order; a result with a dropped or doubled product is rejected, and the verdict names the element.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "exactref/dot.h"
#include "exactref/eigen.h"
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

}  // namespace

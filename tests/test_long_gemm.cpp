// Long GEMM checks (ctest label "long", `make long`): Eigen's own float32 and float64 GEMM covered by any_order for
// random shapes up to 512 x 512 x 2048; the sliced reference equal to the per-element one and to the oracles on
// samples of large products; wide-range inputs that force many far entries.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <random>
#include <string>

#include "exactref/eigen.h"
#include "oracle.h"
#include "test_dot_checks.h"
#include "test_eigen_checks.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;
using namespace exactref::testing_support;

TEST(LongGemm, EigensFloatAndDoubleGemmCoveredUpTo512x512x2048) {
    std::mt19937_64 rng(20240606);
    struct shape {
        Eigen::Index m, k, n;
    };
    std::uniform_int_distribution<int> dim(1, 512), inner(1, 2048);
    std::vector<shape> shapes{{512, 2048, 512}, {512, 1, 512}, {1, 2048, 512}};
    for (int t = 0; t < 3; ++t) shapes.push_back({dim(rng), inner(rng), dim(rng)});
    for (const shape& s : shapes) {
        SCOPED_TRACE(std::to_string(s.m) + " x " + std::to_string(s.k) + " x " + std::to_string(s.n) +
                     " (seed 20240606)");
        const Eigen::MatrixXd a = gaussian<Eigen::MatrixXd>(s.m, s.k, rng);
        const Eigen::MatrixXd b = gaussian<Eigen::MatrixXd>(s.k, s.n, rng);
        const Eigen::MatrixXf af = a.cast<float>(), bf = b.cast<float>();
        const Eigen::MatrixXf cf = af * bf;
        const matrix_verdict vf = covers(cf, exact_matmul(af, bf), eigen_gemm_standard());
        EXPECT_TRUE(vf.covered) << vf.message();
        const Eigen::MatrixXd cd = a * b;
        const matrix_verdict vd = covers(cd, exact_matmul(a, b), eigen_gemm_standard());
        EXPECT_TRUE(vd.covered) << vd.message();
        // A planted fault in the largest product is caught.
        Eigen::MatrixXf bad = cf;
        bad(0, 0) = cf(0, 0) + 64.0f * std::abs(cf(0, 0)) + 64.0f;
        EXPECT_FALSE(covers(bad, exact_matmul(af, bf), eigen_gemm_standard()).covered);
    }
}

TEST(LongGemm, SlicedEqualsPerElementAndOraclesOnLargeProducts) {
    std::mt19937_64 rng(20240607);
    for (const format_info* f : {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info}) {
        for (orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::full_range, orc::term_mix::cancelling}) {
            SCOPED_TRACE(std::string(f->name) + " " + orc::to_string(mix));
            const std::size_t m = 40, k = 1500, n = 30;
            const bits_vector a = orc::random_terms(*f, m * k, mix, rng);
            const bits_vector b = orc::random_terms(*f, k * n, orc::term_mix::clustered, rng);
            auto run = [&](auto tag, const matmul_options& o) {
                using T = decltype(tag);
                const auto av = orc::from_bits<T>(a), bv = orc::from_bits<T>(b);
                return exact_matmul(row_major<T>(av, m, k), row_major<T>(bv, k, n), o);
            };
            auto both = [&](auto tag) {
                const product_reference s = run(tag, {matmul_method::sliced, 2, 0});
                const product_reference s2 = run(tag, {matmul_method::sliced, 2, 2});
                const product_reference e = run(tag, {matmul_method::per_element, 2, 0});
                for (std::size_t i = 0; i < m; ++i)
                    for (std::size_t j = 0; j < n; ++j) {
                        const reference want = e.element(i, j);
                        expect_same_reference(s.element(i, j), want);
                        expect_same_reference(s2.element(i, j), want);
                        if ((i * n + j) % 97 == 0) {
                            bits_vector x(a.begin() + static_cast<std::ptrdiff_t>(i * k),
                                          a.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
                            bits_vector y;
                            for (std::size_t l = 0; l < k; ++l) y.push_back(b[l * n + j]);
                            expect_matches_oracles(want, x, y, *f);
                        }
                        if (::testing::Test::HasFailure()) return;
                    }
            };
            switch (f->id) {
                case dtype::float64: both(double{}); break;
                case dtype::float32: both(float{}); break;
                case dtype::float16: both(float16{}); break;
                case dtype::bfloat16: both(bfloat16{}); break;
            }
            if (::testing::Test::HasFailure()) return;
        }
    }
}

}  // namespace

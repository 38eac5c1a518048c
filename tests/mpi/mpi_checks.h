// tests/mpi/mpi_checks.h — what the MPI test programs share: a checker that counts failures on every rank and
// agrees on the exit code, random contiguous distributions (some ranks empty), seeded data known to every rank, and
// a field-by-field comparison of two references.
//
// The programs run under `mpirun -np P` (tests/cmake/mpi.cmake, P = 1, 2, 3, 5, 8). Every rank generates the whole
// data from the same seed, so the one-process answer (exactref::sum, exactref::tree_reduce of the concatenated data)
// is known on every rank without trusting any communication; each rank then passes its slice to exactref::mpi.
// Failures print the rank, the case and its seed; the exit code is 1 on every rank when any rank failed.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/reference.h"

namespace exactref::mpi_test {

inline int rank_of(MPI_Comm comm) {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}
inline int size_of(MPI_Comm comm) {
    int p = 0;
    MPI_Comm_size(comm, &p);
    return p;
}

/// Counts failures on this rank; finish() agrees on the result over every rank.
class checker {
public:
    explicit checker(const char* program) : program_(program) {}
    void expect(bool ok, const std::string& what) {
        ++checks_;
        if (ok) return;
        ++failures_;
        std::printf("%s: rank %d: FAIL %s\n", program_, rank_of(MPI_COMM_WORLD), what.c_str());
        std::fflush(stdout);
    }
    /// Collective: 0 when no rank failed, else 1 (on every rank); rank 0 prints the summary.
    int finish() const {
        long long mine[2] = {failures_, checks_}, all[2] = {0, 0};
        MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank_of(MPI_COMM_WORLD) == 0)
            std::printf("%s on %d ranks: %lld checks, %lld failed\n", program_, size_of(MPI_COMM_WORLD), all[1],
                        all[0]);
        return all[0] == 0 ? 0 : 1;
    }

private:
    const char* program_;
    long long failures_ = 0;
    long long checks_ = 0;
};

/// The whole program: MPI_Init, checks(c), the agreed exit code, MPI_Finalize. Returns main's exit code.
template <class Checks>
int run_program(int argc, char** argv, const char* program, Checks checks) {
    MPI_Init(&argc, &argv);
    int code = 1;
    {
        checker c(program);
        checks(c);
        code = c.finish();
    }
    MPI_Finalize();
    return code;
}

/// A contiguous distribution of n elements over p ranks: offsets[r] .. offsets[r + 1] for rank r. Kinds:
/// 0 nearly equal chunks (OpenMP static: the first n mod p ranks hold one more), 1 random cuts (ranks often empty),
/// 2 everything on the last rank, 3 random cuts of tiny pieces near the front (many ranks inside one leaf).
inline std::vector<std::uint64_t> distribution(std::uint64_t n, int p, int kind, std::uint64_t seed) {
    std::vector<std::uint64_t> offsets(static_cast<std::size_t>(p) + 1, 0);
    std::mt19937_64 gen(seed);
    const auto P = static_cast<std::uint64_t>(p);
    for (std::uint64_t r = 1; r <= P; ++r) {
        switch (kind) {
            case 0: offsets[r] = offsets[r - 1] + n / P + (r - 1 < n % P ? 1 : 0); break;
            case 1: offsets[r] = r == P ? n : std::uniform_int_distribution<std::uint64_t>(0, n)(gen); break;
            case 2: offsets[r] = r == P ? n : 0; break;
            default:
                offsets[r] = r == P ? n : std::min<std::uint64_t>(n, std::uniform_int_distribution<std::uint64_t>(0, 40)(gen));
        }
    }
    std::sort(offsets.begin(), offsets.end());
    return offsets;
}

/// This rank's slice of `all` under `offsets`.
template <class T>
std::span<const T> slice(const std::vector<T>& all, const std::vector<std::uint64_t>& offsets, int rank) {
    const auto r = static_cast<std::size_t>(rank);
    return std::span<const T>(all).subspan(offsets[r], offsets[r + 1] - offsets[r]);
}

/// Random values over many binades with random signs (and some exact zeros), the same on every rank for a seed.
template <class T>
std::vector<T> seeded_values(std::size_t n, std::uint64_t seed, int binades = 40) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-binades / 2, binades / 2), coin(0, 1), rare(0, 63);
    std::vector<T> out(n);
    for (auto& x : out) {
        const double v = std::ldexp(mantissa(gen), exponent(gen)) * (coin(gen) ? 1.0 : -1.0);
        x = rare(gen) == 0 ? T(0.0f) : T(v);
    }
    return out;
}

/// Bits of a value, for bit-for-bit comparison of results.
template <class T>
std::uint64_t bits_of(T x) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof(T));
    return b;
}

/// "" when a and b hold the same state, bit for bit (the accumulators compared normalized), else the first
/// difference in words.
inline std::string accumulator_difference(superaccumulator a, superaccumulator b) {
    a.normalize();
    b.normalize();
    if (a.chunks() != b.chunks()) return "different exact values (" + a.to_decimal() + " vs " + b.to_decimal() + ")";
    if (a.term_count() != b.term_count()) return "different term counts";
    if (a.has_nan() != b.has_nan()) return "different NaN state";
    if (a.positive_inf_count() != b.positive_inf_count() || a.negative_inf_count() != b.negative_inf_count())
        return "different Inf counts";
    if (a.all_negative_zero() != b.all_negative_zero() || a.all_positive_zero() != b.all_positive_zero())
        return "different signed-zero state";
    return "";
}
inline std::string reference_difference(const reference& a, const reference& b) {
    if (std::string d = accumulator_difference(a.sum, b.sum); !d.empty()) return "s: " + d;
    if (std::string d = accumulator_difference(a.abs_sum, b.abs_sum); !d.empty()) return "S: " + d;
    if (a.count != b.count) return "count " + std::to_string(a.count) + " vs " + std::to_string(b.count);
    if (a.term_format != b.term_format) return "term format";
    if (a.is_dot != b.is_dot || a.product_may_underflow != b.product_may_underflow ||
        a.min_product_exponent != b.min_product_exponent || a.has_initial != b.has_initial)
        return "dot fields";
    if (bits_of(a.largest) != bits_of(b.largest))
        return "largest " + std::to_string(a.largest) + " vs " + std::to_string(b.largest);
    return "";
}

/// "seed 7, kind 1, offsets [0, 3, 3, 10]": what a failure message needs to rerun the case.
inline std::string describe_case(std::uint64_t seed, int kind, const std::vector<std::uint64_t>& offsets) {
    std::string s = "seed " + std::to_string(seed) + ", distribution " + std::to_string(kind) + ", offsets [";
    for (std::size_t i = 0; i < offsets.size(); ++i) s += (i ? ", " : "") + std::to_string(offsets[i]);
    return s + "]";
}

}  // namespace exactref::mpi_test

// exactref/gemm.h — exact references of matrix products C = A·B (and C0 + A·B): one dot-product reference per element.
//
// Element (i, j) of the product is the dot product Σ_l A(i, l)·B(l, j) of K = A.cols terms; its reference (reference.h)
// holds s and T = Σ_l |A(i, l)·B(l, j)| exactly, n = K (K + 1 with an existing output C0, which counts as one more
// term), and the underflow fields, exactly as exactref::dot would give for that row and column (bit for bit: same
// exact values, same special-value state, same term count). covers() then applies the dot rows of the standards:
// any_order n·u·T (γ_n·T + n(1+(n-1)u)η when a product may underflow or with FMA), split_k(s), mixed(acc, out),
// directed (docs/standards.md; Higham, ASNA 2nd ed., (3.5) and §4.2; Jeannerod & Rump, SIMAX 34 (2013)).
//
// Two ways to the same exact values (docs/algorithms/ozaki.md):
//   sliced       the Ozaki scheme: rows of A and columns of B scaled by powers of two and cut without error into
//                slices of w bits, w chosen so that K·2^(2w) <= 2^53; every slice product A_p·B_q is then computed
//                exactly by Eigen's binary64 GEMM, and the products are summed exactly as 64-bit integers per element
//                and level p + q. Pairing the slices (Karatsuba: (A_p + A_q)(B_p + B_q) - A_p·B_p - A_q·B_q, with
//                K·2^(2w+2) <= 2^53) takes 3 GEMMs instead of 4 for 2 x 2 slices. Bits below the last slice, and
//                Inf/NaN operands, are added exactly per element when the element is read. The slice counts adapt to
//                the data, so the result is exact for every input.
//                The slice products run on one of two engines (gemm_engine): binary64 slices in OpenBLAS's DGEMM,
//                or 7-bit int8 slices with exact int32 accumulation (AVX-512 VNNI, or portable C++), K cut into
//                chunks of at most 65536 products so that no int32 wraps (65536·255·127 < 2^31); the planner prices
//                both with their measured costs, and the values are the same bit for bit.
//                T: the same slice GEMMs of |A_p|·|B_q| (exact), or one binary64 GEMM of |A|·|B| (Step S6), whose
//                result t̂ encloses T: for binary32, binary16 and bfloat16 terms (every |a|·|b| exact in binary64)
//                T ∈ [t̂·(1 − g), t̂·(1 − g)/(1 − 2g)], g = (K − 1)·2^-52 (Higham, ASNA 2nd ed., §3.1, (3.5), unit
//                2^-52 for any rounding mode); for binary64 terms the GEMM runs on |A| and |B| scaled by powers of
//                two per row and column (entries below 2^-511 of their row's or column's top dropped and bounded),
//                with g = K·2^-52 and one more outward step, and an element where that cannot hold is left to the
//                exact path (ozaki.md, "Step S6 for binary64 terms"). covers() filters on that enclosure;
//                element(i, j) and to_array() then compute the exact T (and s) by the exact dot of row i and column
//                j. The planner takes it where it is cheaper (not for 1 x 1 binary64 slices); the environment
//                variable EXACTREF_GEMM_T = levels | enclosed | auto forces T's slice GEMMs or Step S6, and
//                EXACTREF_GEMM_PAIRING = always | never | auto the pairing of slices (tests, benchmarks; an unknown
//                value is std::invalid_argument). The values are the same either way.
//   per_element  one superaccumulator dot product per element (the simple reference; K products per element).
// automatic picks the cheaper one from the shapes and the data (plan().slice_gemms binary64 GEMMs for s plus 1 for T
// when it is enclosed, or as many again: 3 + 1 for binary32 N(0, 1) data at K = 1024, 9 + 1 for binary64).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exactref/format.h"
#include "exactref/reference.h"

namespace exactref {

/// A read-only view of a rows x cols matrix of T: element (i, j) is data[i·row_stride + j·col_stride] (strides in
/// elements, any sign). Row-major contiguous: row_stride = cols, col_stride = 1; column-major: 1 and rows.
template <floating_format T>
struct matrix_view {
    const T* data = nullptr;
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::ptrdiff_t row_stride = 0;
    std::ptrdiff_t col_stride = 1;
    const T& operator()(std::size_t i, std::size_t j) const noexcept {
        return data[static_cast<std::ptrdiff_t>(i) * row_stride + static_cast<std::ptrdiff_t>(j) * col_stride];
    }
};

/// Views of contiguous storage. Throw std::invalid_argument when data.size() != rows·cols.
template <floating_format T>
matrix_view<T> row_major(std::span<const T> data, std::size_t rows, std::size_t cols);
template <floating_format T>
matrix_view<T> col_major(std::span<const T> data, std::size_t rows, std::size_t cols);

enum class matmul_method { automatic, sliced, per_element };

/// The engine of the sliced method's slice products (docs/algorithms/ozaki.md; the values never depend on it):
///   automatic   the planner prices each engine this CPU runs with its measured cost and takes the cheapest; the
///               environment variable EXACTREF_GEMM_ENGINE = binary64 | int8 | int8-vnni | int8-plain | auto
///               forces one (for tests and CI)
///   binary64    slices of up to 26 bits, exact in OpenBLAS's DGEMM (K·2^(2w) <= 2^53)
///   int8_vnni   slices of 7 bits as int8, exact int32 accumulation by AVX-512 VNNI vpdpbusd (K split into chunks of
///               at most 65536 products, summed in int64); needs avx512f/bw/vnni and an OS that saves zmm state
///   int8_plain  the same slices and chunks in portable C++ (every CPU)
/// Forcing an engine this CPU cannot run (int8_vnni without VNNI) throws std::runtime_error; never a silent fallback.
enum class gemm_engine { automatic, binary64, int8_vnni, int8_plain };
/// "automatic", "binary64", "int8-vnni", "int8-plain" (the spellings EXACTREF_GEMM_ENGINE takes).
const char* engine_name(gemm_engine engine) noexcept;

struct matmul_options {
    matmul_method method = matmul_method::automatic;
    /// Worker threads for the GEMMs and the per-element work; 0 = exactref/threads.h's resolve_threads
    /// (EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core). The result does not depend on it (every step is
    /// exact).
    unsigned threads = 0;
    /// Sliced method: at most this many slices per row of A and per column of B (1 .. 16; 0 = up to 16, the planner
    /// picks). Fewer slices mean fewer GEMMs and more "far" entries, whose bits below the last slice are added per
    /// element when it is read; the result is exact either way.
    int max_slices = 0;
    /// Sliced method: pair the slices (Karatsuba), so that s x s slices take s(s+1)/2 slice GEMMs instead of s², at
    /// the price of one bit of slice width (K·2^(2w+2) <= 2^53) and s(s-1)/2 more operand matrices per side; the
    /// planner takes it when it is cheaper (EXACTREF_GEMM_PAIRING=always forces it where allowed). false multiplies
    /// every pair of slices (for tests and benchmarks; the values are the same either way).
    bool pair_slices = true;
    /// Sliced method: the engine of the slice products (see gemm_engine); automatic reads EXACTREF_GEMM_ENGINE, else
    /// lets the planner choose. An unknown EXACTREF_GEMM_ENGINE value is std::invalid_argument.
    gemm_engine engine = gemm_engine::automatic;
};

/// How an exact product was computed (for benchmarks and curiosity; the values never depend on it).
struct matmul_plan {
    matmul_method method = matmul_method::per_element;
    int slice_bits = 0;        // w
    int slices_a = 0;          // s_A: slices per row of A
    int slices_b = 0;          // s_B: slices per column of B
    bool paired = false;       // slices paired (Karatsuba): matmul_options::pair_slices
    gemm_engine engine = gemm_engine::automatic;  // sliced: the engine that ran (binary64, int8_vnni, int8_plain)
    int slice_gemms = 0;       // slice GEMMs of m x K x n for s (as many again for T unless t_enclosed)
    /// T enclosed by one binary64 GEMM of |A|·|B| (any format; binary64 terms scaled per row and column:
    /// docs/algorithms/ozaki.md, Step S6) instead of summed exactly in slice GEMMs; element(i, j) then computes its
    /// exact T on demand.
    bool t_enclosed = false;
    std::size_t far_a = 0;     // entries of A with bits below the last slice (added exactly per element)
    std::size_t far_b = 0;     // entries of B with bits below the last slice
    std::size_t special_a = 0; // Inf/NaN entries of A
    std::size_t special_b = 0; // Inf/NaN entries of B
    /// Bytes the build held at its peak (sliced): the copies of A, B and C0 (at the format's width: 2, 4 or 8 bytes an
    /// entry), s packed (its level sums' exact value in as few 64-bit words as it needs: 2 for binary32 2 x 2 slices,
    /// 3 for binary64 3 x 3), T's level sums or t̂, and the temporaries of the tiles (a row panel's slice operands,
    /// each worker's block of right operands and GEMM outputs: the operands' bytes, at least 16 MiB, where the tiles
    /// allow; docs/algorithms/ozaki.md, "Layout"). The finished product_reference keeps the copies, s, T's levels or
    /// t̂.
    std::size_t peak_bytes = 0;
    /// e.g. "sliced on binary64: 2 x 2 slices of 20 bits, paired (3 slice GEMMs for s, 1 binary64 GEMM of |A|·|B|
    /// enclosing T), ..." (binary32 N(0, 1) data; with T's levels: "(3 slice GEMMs for s, 3 for T)").
    std::string describe() const;
};

/// The exact product in compact form: A·B (+ C0) for every element, without one superaccumulator per element.
/// Memory: about 8·words + 8 bytes per element (sliced, T enclosed: plan().t_enclosed; 8·words + 8·(s_A + s_B - 1)
/// with T's levels; words = ceil((ceil(log2 K) + (s_A + s_B)·w + 2) / 64): 2 for binary32 at K = 1024, 3 for binary64)
/// plus a copy of A, B and C0 at the format's width. element(i, j) builds the reference of one
/// element on demand (with t_enclosed by the exact dot of row i and column j, O(K)); to_array() builds all of them
/// (about 2.3 KB each).
/// Thread safety: const member functions may be called concurrently.
class product_reference {
public:
    product_reference();
    ~product_reference();
    product_reference(product_reference&&) noexcept;
    product_reference& operator=(product_reference&&) noexcept;

    std::size_t rows() const noexcept;
    std::size_t cols() const noexcept;
    /// K, the inner dimension (the number of products per element).
    std::size_t inner() const noexcept;
    /// The number of products held: 1 for exact_matmul; B for the shared per-element reference of a batch
    /// (exact_matmul_batched), whose rows() = B·m stack the products' rows: element (b·m + i, j) is element (i, j)
    /// of product b.
    std::size_t batch() const noexcept;
    dtype term_format() const noexcept;
    /// True when an existing output C0 is accumulated into (beta = 1): count = K + 1.
    bool has_initial() const noexcept;
    const matmul_plan& plan() const noexcept;

    /// The reference of element (i, j), equal bit for bit to exactref::dot of row i of A and column j of B (with C0(i, j)
    /// as the initial term). Throws std::out_of_range for i >= rows() or j >= cols().
    reference element(std::size_t i, std::size_t j) const;
    /// The same into existing storage (no allocation).
    void element(std::size_t i, std::size_t j, reference& out) const;
    /// Every element, row-major (rows x cols), built with `threads` workers (0 = resolve_threads, as
    /// matmul_options::threads).
    reference_array to_array(unsigned threads = 0) const;

    struct state;  // internal (src/gemm_state.h)
    explicit product_reference(std::unique_ptr<state> s) noexcept;  // internal: exact_matmul builds it
    const state& internal_state() const noexcept { return st(); }   // internal: covers() over it (gemm_covers.cpp)

private:
    const state& st() const noexcept;
    std::unique_ptr<state> state_;  // null after a move: the object then reads as the empty 0 x 0 product
};

/// The exact reference of A·B in compact form (see product_reference), or of C0 + A·B when c0 is given.
///   a        rows m x K, b   K x n, c0 (optional) m x n, all of format T (double, float, float16, bfloat16)
/// Exact for every input: subnormals, products that underflow or overflow in T, Inf and NaN (by the superaccumulator's
/// rules, as exactref::dot). Deterministic; independent of the rounding mode and FTZ/DAZ (slices are integers below
/// 2^26 and every GEMM sum stays an integer below 2^53, so no operation rounds).
/// The engine of the sliced method's binary64 GEMMs and the kernel it chose for this CPU, e.g. "OpenBLAS 0.3.21
/// NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64 (kernel: zen)". OPENBLAS_CORETYPE (an OpenBLAS variable,
/// read when the process starts) forces a kernel, e.g. Haswell, Sandybridge or Prescott; the values never depend on
/// it (docs/gemm.md), only the time. OpenBLAS before 0.3.25 (Debian 12 ships 0.3.21) runs its SSE3 kernel,
/// Prescott, on Intel CPUs it does not know (OpenBLAS issue #4267; Emerald Rapids is one: DGEMM 4.6x slower): when
/// the library loads it replaces that fallback by the kernel upstream now picks from the instruction sets (Cooperlake,
/// SkylakeX, Haswell or Sandybridge), unless OPENBLAS_CORETYPE is set or EXACTREF_BLAS_KERNEL=keep; the string then
/// says so, e.g. "... (kernel: Cooperlake; OpenBLAS chose Prescott, its SSE3 fallback for a CPU it does not know,
/// replaced by Cooperlake; EXACTREF_BLAS_KERNEL=keep keeps it)". The kernel is process-wide: the program's own DGEMMs
/// on Debian's OpenBLAS run on it too. Any other EXACTREF_BLAS_KERNEL value than keep or auto makes exact_matmul
/// throw std::invalid_argument.
std::string matmul_engine();

/// Throws std::invalid_argument when a.cols != b.rows or c0 is not m x n (the message names the shapes).
///
///   std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};                  // 2 x 2 each, row-major
///   auto p = exactref::exact_matmul(exactref::row_major<float>(a, 2, 2), exactref::row_major<float>(b, 2, 2));
///   p.element(0, 1).nearest<float>();                                // -> 22 (1·6 + 2·8)
template <floating_format T>
product_reference exact_matmul(matrix_view<T> a, matrix_view<T> b, const matrix_view<T>* c0,
                               const matmul_options& options);
template <floating_format T>
product_reference exact_matmul(matrix_view<T> a, matrix_view<T> b, const matmul_options& options = {}) {
    return exact_matmul<T>(a, b, nullptr, options);
}
template <floating_format T>
product_reference exact_matmul(matrix_view<T> a, matrix_view<T> b, matrix_view<T> c0,
                               const matmul_options& options = {}) {
    return exact_matmul<T>(a, b, &c0, options);
}

/// The exact references of a batch of products A_b·B_b (+ C0_b), b = 0 .. B-1 (np.matmul, torch.bmm over batch axes):
///   a   B views of m x K;  b   B views of K x n;  c0  empty, or B views of m x n (an existing output each)
/// Every product has the same m, K and n. Products too small for the sliced method to pay (m·n·K products cost less
/// in per-element dot products than one sliced build's fixed part, about 14 µs: up to about 16 x 16 x 16 in
/// binary64, 19 x 19 x 19 in the narrow formats) share ONE per-element product_reference holding all B: batch() = B,
/// rows() = B·m, element (b·m + i, j) is element (i, j) of product b; its build only copies the operands' bits
/// ((m + n)·K entries per product at the format's width), so a batch costs per element what one product of B·m rows
/// does. Larger products are planned and built one by one (exact_matmul, one product_reference each). B = 1 is
/// exact_matmul. The values are the same either way, bit for bit (every element equals exactref::dot of its row and
/// column).
/// Throws std::invalid_argument when the counts of a, b and c0 differ, a product's shapes do not match
/// (exact_matmul's messages, naming the batch index) or differ from product 0's.
namespace detail {
/// Internal (exact_matmul_batched, the Python binding): whether B products of m x K times K x n share one
/// per-element product_reference under `options`.
bool batch_shares_reference(std::size_t batch, std::size_t m, std::size_t k, std::size_t n, const format_info& f,
                            const matmul_options& options) noexcept;
/// Internal: the shared per-element reference of `batch` products whose views item(p, a, b, c) writes (c only when
/// has_c), called for p = 0, 1, ..., batch - 1 in order; every view must have the shapes m x K, K x n, m x n
/// (unchecked).
template <floating_format T>
using batch_item = void (*)(const void* context, std::size_t p, matrix_view<T>& a, matrix_view<T>& b,
                            matrix_view<T>& c);
template <floating_format T>
product_reference shared_batch_reference(std::size_t batch, std::size_t m, std::size_t k, std::size_t n, bool has_c,
                                         batch_item<T> item, const void* context);
}  // namespace detail

template <floating_format T>
std::vector<product_reference> exact_matmul_batched(std::span<const matrix_view<T>> a,
                                                    std::span<const matrix_view<T>> b,
                                                    std::span<const matrix_view<T>> c0 = {},
                                                    const matmul_options& options = {});

/// The exact reference of A·B as a reference_array (rows x cols, one reference per element, row-major):
/// exact_matmul(a, b, options).to_array(options.threads). Same guarantees and errors.
///   auto refs = exactref::matmul(exactref::row_major<float>(a, 2, 2), exactref::row_major<float>(b, 2, 2));
///   refs(1, 0).exact();                                              // -> "43" (3·5 + 4·7)
template <floating_format T>
reference_array matmul(matrix_view<T> a, matrix_view<T> b, const matmul_options& options = {}) {
    return exact_matmul<T>(a, b, nullptr, options).to_array(options.threads);
}
/// C0 + A·B (beta = 1): C0(i, j) counts as one more term of element (i, j).
template <floating_format T>
reference_array matmul(matrix_view<T> a, matrix_view<T> b, matrix_view<T> c0, const matmul_options& options = {}) {
    return exact_matmul<T>(a, b, &c0, options).to_array(options.threads);
}

}  // namespace exactref

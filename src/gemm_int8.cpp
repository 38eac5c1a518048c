// The int8 engine of the Ozaki-scheme GEMM (docs/algorithms/ozaki.md, "The int8 engine"): error-free slices of w = 7
// bits held as int8, multiplied with exact int32 accumulation — AVX-512 VNNI (vpdpbusd) where the CPU and the OS
// support it, a portable C++ kernel otherwise — and summed per level as 64-bit integers, as Steps S3 and S4 of the
// binary64 engine (gemm_sliced.cpp) do: the level sums are the same integers, so Step S5 reads either engine alike.
//
// Invariants (why nothing overflows):
//   every slice entry is an integer alpha with |alpha| <= 2^7 - 1 = 127 (slice_value of w = 7 bits, sign applied);
//   vpdpbusd multiplies an unsigned byte by a signed byte, so the left operand is stored as alpha + 128 in 1 .. 255
//   (the s pass) or as |alpha| in 0 .. 127 (the T pass); the right operand is beta (s) or |beta| (T), |beta| <= 127;
//   vpdpbusd adds four products (each |.| <= 255·127 = 32385) to an int32 lane without saturation (vpdpbusds would
//   saturate); a chunk of at most chunk_k = 65536 products per lane gives |lane| <= 65536·255·127 = 2,122,383,360
//   < 2^31 (static_assert below), so no int32 sum of a chunk ever wraps;
//   the chunk results are summed in int64, and the offset is taken out exactly there: Σ (alpha+128)·beta =
//   Σ alpha·beta + 128·Σ beta, with Σ beta (the column sums of slice q of B over all of K) in int64;
//   a level sum adds at most 16 slice products of |.| <= K·127² < 2^32·2^14 = 2^46, far below 2^63.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>   // std::getenv
#include <cstring>   // std::memcpy, std::strcmp
#include <stdexcept>
#include <string>
#include <vector>

#if defined(EXACTREF_EMULATE_AVX512)
// tests/avx512_emulated_gemm.cpp compiles this file again on a portable model of the intrinsics (tests/
// avx512_emulation.h): the int8-vnni engine then runs, lane by lane, on a CPU without AVX-512 VNNI too.
#define EXACTREF_INT8_VNNI 1
#include "avx512_emulation.h"
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_INT8_VNNI 1
#include <cpuid.h>      // __get_cpuid_count: the VNNI and OSXSAVE bits
#include <immintrin.h>  // _mm512_dpbusd_epi32
#endif

#include "gemm_state.h"
#include "simd_targets.h"

namespace exactref::detail {

namespace {

// ---- Configuration --------------------------------------------------------------------------------------------------

constexpr int int8_w = 7;                 // slice width: |alpha| <= 127, alpha + 128 in 1 .. 255
constexpr std::size_t mr = 32;            // rows of A per micro-tile: two zmm vectors of 16 int32 lanes
constexpr std::size_t nr = 12;            // columns of B per micro-tile: 24 zmm accumulators, 12 broadcasts
constexpr std::size_t kc = 512;           // products per lane per micro-kernel call (a multiple of 4): the cache block
constexpr std::size_t chunk_k = 65536;    // products per int32 lane before it is added to the int64 levels
static_assert(chunk_k % kc == 0 && kc % 4 == 0);
static_assert(static_cast<std::int64_t>(chunk_k) * 255 * 127 < (std::int64_t{1} << 31),
              "a chunk of (alpha + 128)·beta products must fit an int32 lane without wrapping");
static_assert((std::int64_t{1} << 32) * 127 * 127 * 16 < (std::int64_t{1} << 62), "level sums fit an int64");

// Integer value of slice p (0 = most significant) of an entry under `top`, as in gemm_sliced.cpp (w = 7).
int slice7(const entry_parts& e, int top, int p) noexcept {
    const int lsb = top - (p + 1) * int8_w;
    const int t = e.exponent - lsb;
    constexpr std::uint64_t mask = (std::uint64_t{1} << int8_w) - 1;
    std::uint64_t v = 0;
    if (t >= int8_w) v = 0;
    else if (t >= 0) v = (e.significand & (mask >> t)) << t;
    else if (-t < 64) v = (e.significand >> (-t)) & mask;
    return static_cast<int>(v);
}

// Packed operands. A (left, u8): slice p, row tile it, quad l4 of K: 32 rows x 4 bytes (one zmm per 16 rows), at
// ((p·tiles_m + it)·quads + l4)·128. B (right, s8): slice q, column tile jt, quad l4: 12 columns x 4 bytes, at
// ((q·tiles_n + jt)·quads + l4)·48. Padding (rows >= m, columns >= n, l >= K) holds zeros of B, so it adds nothing.
struct packed {
    std::size_t tiles_m = 0, tiles_n = 0, quads = 0;
    std::vector<std::uint8_t> a;
    std::vector<std::int8_t> b;
    std::vector<std::int64_t> col_sum;  // s pass: Σ_l beta_q(l, j) at q·n + j (the offset's correction)
};

// Step S3 for the s pass: the slices of A as alpha + 128 and of B as beta, and the column sums of B's slices (the T
// pass derives its operands from these bytes).
void pack(const product_reference::state& st, unsigned threads, packed& pk) {
    const std::size_t m = st.m, n = st.n, k = st.k;
    const int sa = st.sa, sb = st.sb;
    pk.tiles_m = (m + mr - 1) / mr;
    pk.tiles_n = (n + nr - 1) / nr;
    pk.quads = (k + 3) / 4;
    const std::size_t kp = pk.quads * 4;
    pk.a.assign(static_cast<std::size_t>(sa) * pk.tiles_m * kp * mr, 128);
    pk.b.assign(static_cast<std::size_t>(sb) * pk.tiles_n * kp * nr, 0);
    pk.col_sum.assign(static_cast<std::size_t>(sb) * n, 0);
    parallel_for(m, threads, mr, [&](std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i) {
            const std::size_t it = i / mr, r = i % mr;
            for (std::size_t l = 0; l < k; ++l) {
                const entry_parts e = split_entry(*st.f, st.a[i * k + l]);
                if (e.special || e.significand == 0) continue;  // zero slices (the padding value already)
                for (int p = 0; p < sa; ++p) {
                    const int v = slice7(e, st.row_top[i], p);
                    const int alpha = e.negative ? -v : v;
                    pk.a[((static_cast<std::size_t>(p) * pk.tiles_m + it) * pk.quads + l / 4) * (mr * 4) + r * 4 +
                         l % 4] = static_cast<std::uint8_t>(alpha + 128);
                }
            }
        }
    });
    parallel_for(n, threads, nr, [&](std::size_t j0, std::size_t j1) {
        for (std::size_t j = j0; j < j1; ++j) {
            const std::size_t jt = j / nr, c = j % nr;
            for (std::size_t l = 0; l < k; ++l) {
                const entry_parts e = split_entry(*st.f, st.bt[j * k + l]);
                if (e.special || e.significand == 0) continue;
                for (int q = 0; q < sb; ++q) {
                    const int v = slice7(e, st.col_top[j], q);
                    const int beta = e.negative ? -v : v;
                    pk.b[((static_cast<std::size_t>(q) * pk.tiles_n + jt) * pk.quads + l / 4) * (nr * 4) + c * 4 +
                         l % 4] = static_cast<std::int8_t>(beta);
                    pk.col_sum[static_cast<std::size_t>(q) * n + j] += beta;
                }
            }
        }
    });
}

// ---- Micro-kernels: c (32 x 12 int32, column c at c·32) += Σ over `quads` quads of a (u8) times b (s8) -------------
// `first` overwrites c instead. Each lane sums at most kc <= chunk_k products per call; the caller keeps a lane's
// calls within one chunk before it widens the lane to int64.

void micro_plain(const std::uint8_t* a, const std::int8_t* b, std::size_t quads, std::int32_t* c, bool first) noexcept {
    std::int32_t acc[nr][mr] = {};
    for (std::size_t l4 = 0; l4 < quads; ++l4) {
        const std::uint8_t* ap = a + l4 * mr * 4;
        const std::int8_t* bp = b + l4 * nr * 4;
        for (std::size_t col = 0; col < nr; ++col)
            for (std::size_t r = 0; r < mr; ++r) {
                std::int32_t s = 0;
                for (std::size_t u = 0; u < 4; ++u)
                    s += static_cast<std::int32_t>(ap[r * 4 + u]) * static_cast<std::int32_t>(bp[col * 4 + u]);
                acc[col][r] += s;
            }
    }
    for (std::size_t col = 0; col < nr; ++col)
        for (std::size_t r = 0; r < mr; ++r) c[col * mr + r] = (first ? 0 : c[col * mr + r]) + acc[col][r];
}

#ifdef EXACTREF_INT8_VNNI
#ifdef EXACTREF_EMULATE_AVX512
#define EXACTREF_TARGET_VNNI
#else
#define EXACTREF_TARGET_VNNI [[gnu::target(EXACTREF_V4_FEATURES ",avx512vnni")]]
#endif

// 24 zmm accumulators (2 vectors of rows x 12 columns), named one by one so that GCC keeps every one in a register
// (an array of them is spilled to the stack); per quad 2 loads of A and 12 broadcasts of B, so the loop is bound by
// the 24 vpdpbusd.
EXACTREF_TARGET_VNNI void micro_vnni(const std::uint8_t* a, const std::int8_t* b, std::size_t quads, std::int32_t* c,
                                     bool first) noexcept {
#define EXACTREF_ACC(col) __m512i lo##col = _mm512_setzero_si512(), hi##col = _mm512_setzero_si512();
    EXACTREF_ACC(0) EXACTREF_ACC(1) EXACTREF_ACC(2) EXACTREF_ACC(3) EXACTREF_ACC(4) EXACTREF_ACC(5)
    EXACTREF_ACC(6) EXACTREF_ACC(7) EXACTREF_ACC(8) EXACTREF_ACC(9) EXACTREF_ACC(10) EXACTREF_ACC(11)
#undef EXACTREF_ACC
    for (std::size_t l4 = 0; l4 < quads; ++l4) {
        const __m512i a0 = _mm512_loadu_si512(a + l4 * mr * 4);
        const __m512i a1 = _mm512_loadu_si512(a + l4 * mr * 4 + 64);
        const std::int8_t* bp = b + l4 * nr * 4;
#define EXACTREF_STEP(col)                                                                  \
    {                                                                                       \
        std::int32_t quad;                                                                  \
        std::memcpy(&quad, bp + (col) * 4, 4);                                              \
        const __m512i bb = _mm512_set1_epi32(quad);                                         \
        lo##col = _mm512_dpbusd_epi32(lo##col, a0, bb);                                     \
        hi##col = _mm512_dpbusd_epi32(hi##col, a1, bb);                                     \
    }
        EXACTREF_STEP(0) EXACTREF_STEP(1) EXACTREF_STEP(2) EXACTREF_STEP(3) EXACTREF_STEP(4) EXACTREF_STEP(5)
        EXACTREF_STEP(6) EXACTREF_STEP(7) EXACTREF_STEP(8) EXACTREF_STEP(9) EXACTREF_STEP(10) EXACTREF_STEP(11)
#undef EXACTREF_STEP
    }
#define EXACTREF_STORE(col)                                                                                  \
    {                                                                                                        \
        std::int32_t* cp = c + (col) * mr;                                                                   \
        _mm512_storeu_si512(cp, first ? lo##col : _mm512_add_epi32(_mm512_loadu_si512(cp), lo##col));      \
        _mm512_storeu_si512(cp + 16, first ? hi##col : _mm512_add_epi32(_mm512_loadu_si512(cp + 16), hi##col)); \
    }
    EXACTREF_STORE(0) EXACTREF_STORE(1) EXACTREF_STORE(2) EXACTREF_STORE(3) EXACTREF_STORE(4) EXACTREF_STORE(5)
    EXACTREF_STORE(6) EXACTREF_STORE(7) EXACTREF_STORE(8) EXACTREF_STORE(9) EXACTREF_STORE(10) EXACTREF_STORE(11)
#undef EXACTREF_STORE
}

// AVX-512 VNNI is usable when the CPU has it (cpuid leaf 7: AVX512F, AVX512BW, AVX512_VNNI) and the OS saves the
// opmask and zmm state (OSXSAVE, and XCR0 bits 1, 2, 5, 6, 7); the emulated kernel everywhere.
#ifdef EXACTREF_EMULATE_AVX512
bool cpu_has_vnni() noexcept { return true; }
#else
EXACTREF_TARGET_V4 bool os_saves_zmm() noexcept {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_OSXSAVE) == 0) return false;
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0xE6u) == 0xE6u;
}
bool cpu_has_vnni() noexcept {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    const bool f = (ebx & bit_AVX512F) != 0, bw = (ebx & bit_AVX512BW) != 0, vnni = (ecx & bit_AVX512VNNI) != 0;
    return f && bw && vnni && os_saves_zmm();
}
#endif
#else
bool cpu_has_vnni() noexcept { return false; }
#endif

using micro_kernel = void (*)(const std::uint8_t*, const std::int8_t*, std::size_t, std::int32_t*, bool) noexcept;

micro_kernel kernel_of(gemm_engine engine) {
#ifdef EXACTREF_INT8_VNNI
    if (engine == gemm_engine::int8_vnni) return micro_vnni;
#endif
    (void)engine;
    return micro_plain;
}

// Step S4 for one pass over the output columns of tiles [jt0, jt1): for every slice pair (p, q) and chunk of K,
// the int32 products of all row tiles into `c32`, then widened into level p + q of a block-local int64 copy of the
// levels (level-major, so that the widening is a contiguous vector loop); at the end each element's levels, with the
// s pass's offset correction (128·Σ_l beta_q(l, j) for every pair (p, q) of the level), go into st.t_levels (T) or
// packed into st.s_limbs (s).
void multiply_columns(product_reference::state& st, const packed& pk, micro_kernel kernel, bool absolute,
                      std::size_t jt0, std::size_t jt1) {
    const std::size_t m = st.m, n = st.n, quads = pk.quads;
    const auto levels = static_cast<std::size_t>(st.levels);
    const std::size_t tiles = jt1 - jt0, cols = tiles * nr;
    std::vector<std::int32_t> c32(tiles * pk.tiles_m * mr * nr);
    std::vector<std::int64_t> block(levels * cols * m, 0);  // level t, column jj, row i at (t·cols + jj)·m + i
    for (int p = 0; p < st.sa; ++p)
        for (int q = 0; q < st.sb; ++q) {
            const std::uint8_t* ap = pk.a.data() + static_cast<std::size_t>(p) * pk.tiles_m * quads * mr * 4;
            const std::int8_t* bq = pk.b.data() + static_cast<std::size_t>(q) * pk.tiles_n * quads * nr * 4;
            std::int64_t* level = block.data() + static_cast<std::size_t>(p + q) * cols * m;
            for (std::size_t c0 = 0; c0 < quads; c0 += chunk_k / 4) {
                const std::size_t c1 = std::min(quads, c0 + chunk_k / 4);
                for (std::size_t k0 = c0; k0 < c1; k0 += kc / 4) {
                    const std::size_t k1 = std::min(c1, k0 + kc / 4);
                    for (std::size_t jt = jt0; jt < jt1; ++jt)
                        for (std::size_t it = 0; it < pk.tiles_m; ++it)
                            kernel(ap + (it * quads + k0) * mr * 4, bq + (jt * quads + k0) * nr * 4, k1 - k0,
                                   c32.data() + ((jt - jt0) * pk.tiles_m + it) * mr * nr, k0 == c0);
                }
                // The chunk's lanes (each |.| < 2^31, exact) widened into the int64 level.
                for (std::size_t jj = 0; jj < cols; ++jj) {
                    const std::size_t t = jj / nr, col = jj % nr;
                    std::int64_t* dst = level + jj * m;
                    for (std::size_t it = 0; it < pk.tiles_m; ++it) {
                        const std::int32_t* cp = c32.data() + (t * pk.tiles_m + it) * mr * nr + col * mr;
                        const std::size_t rows = std::min(mr, m - it * mr);
                        for (std::size_t r = 0; r < rows; ++r) dst[it * mr + r] += cp[r];
                    }
                }
            }
        }
    // Each element's levels: T's into t_levels, s's packed into its limbs (pack_levels).
    const auto words = static_cast<std::size_t>(st.s_words);
    std::vector<std::int64_t> offset(levels), v(levels);
    for (std::size_t jj = 0; jj < cols; ++jj) {
        const std::size_t j = jt0 * nr + jj;
        if (j >= n) break;
        for (std::size_t t = 0; t < levels; ++t) {
            offset[t] = 0;  // Σ (alpha + 128)·beta - 128·Σ beta = Σ alpha·beta, per pair of level t
            if (!absolute)
                for (int q = 0; q < st.sb; ++q) {
                    const int p = static_cast<int>(t) - q;
                    if (p >= 0 && p < st.sa) offset[t] += 128 * pk.col_sum[static_cast<std::size_t>(q) * n + j];
                }
        }
        for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t t = 0; t < levels; ++t) v[t] = block[(t * cols + jj) * m + i] - offset[t];
            if (absolute)
                for (std::size_t t = 0; t < levels; ++t) st.t_levels[(j * m + i) * levels + t] = v[t];
            else
                pack_levels(v.data(), 1, st.levels, st.w, st.s_words, st.s_limbs.data() + (j * m + i) * words);
        }
    }
}

// Column tiles per worker block: at most the thread count's share, and few enough that the block's int32 lanes and
// its part of the int64 levels (widened into once per slice pair and chunk) stay within about 1 MiB, the L2 cache;
// a smaller block costs the micro-kernels nothing (each reads its A panels per column tile anyway).
std::size_t tiles_per_block(std::size_t tiles_n, std::size_t tiles_m, std::size_t levels, unsigned threads) {
    const std::size_t share = (tiles_n + std::max(1u, threads) - 1) / std::max(1u, threads);
    const std::size_t tile_bytes = tiles_m * mr * nr * (sizeof(std::int32_t) + levels * sizeof(std::int64_t));
    const std::size_t cap = std::max<std::size_t>(1, (std::size_t{1} << 20) / tile_bytes);
    return std::max<std::size_t>(1, std::min(share, cap));
}

}  // namespace

bool int8_engine_supported(gemm_engine engine) noexcept {
    if (engine == gemm_engine::int8_plain) return true;
    if (engine == gemm_engine::int8_vnni) {
        static const bool vnni = cpu_has_vnni();
        return vnni;
    }
    return false;
}

gemm_engine best_int8_engine() noexcept {
    return int8_engine_supported(gemm_engine::int8_vnni) ? gemm_engine::int8_vnni : gemm_engine::int8_plain;
}

int int8_slice_width() noexcept { return int8_w; }

void build_int8_levels(product_reference::state& st, gemm_engine engine, unsigned threads) {
    if (!int8_engine_supported(engine))
        throw std::runtime_error("exactref::matmul: the int8 engine " + std::string(engine_name(engine)) +
                                 " is not supported by this CPU or OS");
    const micro_kernel kernel = kernel_of(engine);
    const std::size_t m = st.m, n = st.n;
    const auto stride = static_cast<std::size_t>(st.levels);
    st.s_words = s_words_of(st);
    st.s_limbs.resize(m * n * static_cast<std::size_t>(st.s_words));  // every element written (multiply_columns)
    st.t_levels.resize(st.t_enclosed ? 0 : m * n * stride);  // Step S6 encloses T instead (build_t_estimate)
    packed pk;
    for (int pass = 0; pass < (st.t_enclosed ? 1 : 2); ++pass) {
        const bool absolute = pass == 1;
        if (!absolute) {
            pack(st, threads, pk);
        } else {  // the T operands from the s ones, without decoding again: |alpha| = |(alpha + 128) - 128|, |beta|
            for (std::uint8_t& x : pk.a) x = static_cast<std::uint8_t>(x >= 128 ? x - 128 : 128 - x);
            for (std::int8_t& x : pk.b) x = static_cast<std::int8_t>(x < 0 ? -x : x);  // |beta| <= 127
            pk.col_sum.clear();
        }
        const std::size_t block = tiles_per_block(pk.tiles_n, pk.tiles_m, stride, threads);
        parallel_for(pk.tiles_n, threads, block, [&](std::size_t jt0, std::size_t jt1) {
            multiply_columns(st, pk, kernel, absolute, jt0, jt1);
        });
        if (pass == 0) {
            const std::size_t workers = std::min<std::size_t>(std::max(1u, threads), (pk.tiles_n + block - 1) / block);
            st.plan.peak_bytes = st.a.bytes() + st.bt.bytes() + st.c.bytes() + pk.a.size() +
                                 pk.b.size() + sizeof(std::int64_t) * pk.col_sum.size() +
                                 workers * block * nr * (pk.tiles_m * mr * sizeof(std::int32_t) +
                                                         m * stride * sizeof(std::int64_t)) +
                                 sizeof(std::uint64_t) * st.s_limbs.size() +
                                 sizeof(std::int64_t) * st.t_levels.size();
        }
    }
}

double int8_mac_ns(gemm_engine engine) noexcept {
    // Measured once per process and engine on one thread: the best of three 192^3 slice products (packed operands,
    // the micro-kernel and the widening into the levels; about 7 M multiply-adds).
    auto measure = [](gemm_engine e) {
        constexpr std::size_t n = 192;
        const micro_kernel kernel = kernel_of(e);
        product_reference::state st;
        st.m = st.n = st.k = n;
        st.sa = st.sb = 1;
        st.levels = 1;
        st.w = int8_w;
        st.s_words = s_value_words(n, st.levels, st.w);
        st.s_limbs.resize(n * n * static_cast<std::size_t>(st.s_words));
        packed pk;
        pk.tiles_m = n / mr;
        pk.tiles_n = n / nr;
        pk.quads = n / 4;
        pk.a.assign(n * n, 200);
        pk.b.assign(n * n, -100);
        pk.col_sum.assign(n, 0);
        double best = 1e300;
        for (int rep = 0; rep < 3; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            multiply_columns(st, pk, kernel, false, 0, pk.tiles_n);
            const std::chrono::duration<double, std::nano> t = std::chrono::steady_clock::now() - t0;
            best = std::min(best, t.count());
        }
        return std::clamp(best / static_cast<double>(n * n * n), 0.0005, 5.0);
    };
    if (engine == gemm_engine::int8_vnni) {
        static const double vnni = int8_engine_supported(engine) ? measure(engine) : 5.0;
        return vnni;
    }
    static const double plain = measure(gemm_engine::int8_plain);
    return plain;
}

}  // namespace exactref::detail

// examples/cuda/atomic_sum.cu — why exactref exists: a float32 sum made with atomicAdd gives different bits on
// different runs. Which of them are right? covers() decides, in exact arithmetic, against the exact sum that
// exactref::cuda::device_sum computes where the data already lives.
//
//   kernel            order of the additions                        error model it should meet
//   atomic/element    every element atomicAdd-ed to one float       any_order: |r - s| <= (n-1)·u·Σ|x|
//   atomic/block      a shared-memory tree per block, then one      any_order
//                     atomicAdd per block
//   halving(256)      exactref::cuda::device_tree_reduce:           tree(h), h = tree_height(halving(), n), and the
//                     deterministic, the host tree's bits           bits of exactref::tree_reduce on the host
//
// Prints one verdict row per run. Exit 0 when every verdict is the expected one, 1 otherwise, 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "example_support.h"
#include "exactref/covers.h"
#include "exactref/cuda.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/tree.h"

namespace {

__global__ void atomic_sum_per_element(const float* x, std::size_t n, float* out) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
        atomicAdd(out, x[i]);
}

__global__ void atomic_sum_per_block(const float* x, std::size_t n, float* out) {
    __shared__ float partial[256];
    float acc = 0.0f;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
        acc += x[i];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) partial[threadIdx.x] += partial[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

std::string yes_no(bool b) { return b ? "covered" : "NOT COVERED"; }

}  // namespace

int main(int argc, char** argv) try {
    const example::options opt = example::parse(argc, argv, "atomicAdd float32 sums judged by covers()");
    example::require_device("cuda_atomic_sum");
    const std::size_t n = opt.quick ? (std::size_t{1} << 20) : (std::size_t{1} << 24);

    std::mt19937_64 rng(opt.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(n);
    for (auto& x : xs) x = normal(rng);
    const example::device_buffer<float> d_x(xs);
    example::device_buffer<float> d_out(1);

    // The exact reference, computed on the device; the host computes it too, as a check.
    const exactref::reference ref = exactref::cuda::device_sum(d_x.data(), n);
    const exactref::reference host_ref = exactref::sum(std::span<const float>(xs));
    const bool same_ref = ref.exact() == host_ref.exact() && ref.abs_sum.to_decimal() == host_ref.abs_sum.to_decimal();
    const std::uint64_t h = exactref::tree_height(exactref::halving(), n);
    const exactref::standard tree_model = exactref::tree(h);
    std::cout << "n = " << n << " float32 values, normal(0, 1), seed " << opt.seed << "\n"
              << "exact sum s (device superaccumulator) = " << ref.exact().substr(0, 40) << "...\n"
              << "RN_float32(s) = " << example::format("%.9g (%a)", ref.nearest<float>(), ref.nearest<float>())
              << "\nthe host's exactref::sum gives the same s and S: " << (same_ref ? "yes" : "NO") << "\n"
              << "bounds: any_order (n-1)·u·S = " << exactref::bound(ref, exactref::any_order(), exactref::binary32_info)
              << ", tree(" << h << ") γ_h·S = " << exactref::bound(ref, tree_model, exactref::binary32_info) << "\n\n";

    example::table t({"kernel", "run", "result", "hex", "ulps", "error/bound", "any_order", "exact()", tree_model.name()});
    bool as_expected = same_ref;
    std::set<std::uint32_t> distinct;
    const float host_tree = exactref::tree_reduce(std::span<const float>(xs));
    for (int run = 0; run < opt.runs; ++run) {
        for (int kernel = 0; kernel < 3; ++kernel) {
            float r = 0;
            std::string name;
            if (kernel < 2) {
                d_out.zero();
                if (kernel == 0) atomic_sum_per_element<<<1024, 256>>>(d_x.data(), n, d_out.data());
                else atomic_sum_per_block<<<1024, 256>>>(d_x.data(), n, d_out.data());
                example::check(cudaGetLastError(), "kernel launch");
                r = d_out.to_host()[0];
                distinct.insert(exactref::format_traits<float>::to_bits(r));
                name = kernel == 0 ? "atomic/element" : "atomic/block";
            } else {
                r = exactref::cuda::device_tree_reduce_sync(d_x.data(), n);
                name = "halving(256)";
                as_expected = as_expected && exactref::format_traits<float>::to_bits(r) ==
                                                 exactref::format_traits<float>::to_bits(host_tree);
            }
            const exactref::verdict any = exactref::covers(r, ref, exactref::any_order());
            const exactref::verdict ex = exactref::covers(r, ref, exactref::exact());
            const exactref::verdict tr = exactref::covers(r, ref, tree_model);
            as_expected = as_expected && any.covered && (kernel < 2 || tr.covered);
            t.add({name, std::to_string(run), example::format("%.9g", r), example::format("%a", r),
                   example::format("%+.2f", any.ulps), example::format("%.3g", any.ratio), yes_no(any.covered),
                   yes_no(ex.covered), kernel < 2 ? "(not its model)" : yes_no(tr.covered)});
        }
    }
    t.print(std::cout);
    std::cout << "\n" << distinct.size() << " different results from " << 2 * opt.runs
              << " atomic runs; every one is judged against the same exact s.\n"
              << "halving(256) on the device equals exactref::tree_reduce on the host: "
              << example::format("%a", host_tree) << "\n"
              << (as_expected ? "verdicts as expected: every atomic sum lies within the any-order bound\n"
                              : "UNEXPECTED: a verdict above is not what the error model promises\n");
    return as_expected ? example::exit_ok : example::exit_unexpected;
} catch (const std::exception& e) {
    std::cerr << "cuda_atomic_sum: " << e.what() << "\n";
    return example::exit_unexpected;
}

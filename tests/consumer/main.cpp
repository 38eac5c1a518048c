// Exact sum of a stagnating float32 series through the installed package.
#include <exactref/exactref.h>

#include <cstdio>
#include <span>
#include <vector>

int main() {
    const std::vector<float> ones(1 << 25, 1.0f);  // a float left fold stops at 2^24 = 16777216
    const exactref::reference ref = exactref::sum(ones);
    float fold = 0;
    for (float x : ones) fold += x;
    // The umbrella header brings the dot and GEMM references too.
    const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    const exactref::product_reference p = exactref::exact_matmul(exactref::row_major<float>(a, 2, 2),
                                                                 exactref::row_major<float>(b, 2, 2));
    const bool products_ok = p.element(0, 1).exact() == "22" &&
                             exactref::dot(std::span<const float>(a), std::span<const float>(b)).exact() == "70";
    const bool ok = ref.exact() == "33554432" && !exactref::covers(fold, ref, exactref::exact()).covered && products_ok;
    std::printf("exact %s, left fold %.0f: %s\n", ref.exact().c_str(), static_cast<double>(fold), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

// Exact sum of a stagnating float32 series through the installed package.
#include <exactref/exactref.h>

#include <cstdio>
#include <vector>

int main() {
    const std::vector<float> ones(1 << 25, 1.0f);  // a float left fold stops at 2^24 = 16777216
    const exactref::reference ref = exactref::sum(ones);
    float fold = 0;
    for (float x : ones) fold += x;
    const bool ok = ref.exact() == "33554432" && !exactref::covers(fold, ref, exactref::exact()).covered;
    std::printf("exact %s, left fold %.0f: %s\n", ref.exact().c_str(), static_cast<double>(fold), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

// tests/test_gpu_fixture.h — the base of the GPU tests (test_gpu_*.cpp): skips each test with the reason when there is
// no usable CUDA device, and fails instead when EXACTREF_REQUIRE_GPU is set (scripts/device-check sets it on a GPU
// machine, where a skip would hide a broken setup).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>  // std::getenv

#include "exactref/cuda.h"

namespace exactref::test_cuda {

class gpu_test : public ::testing::Test {
protected:
    void SetUp() override {
        if (cuda::device_available()) return;
        if (std::getenv("EXACTREF_REQUIRE_GPU") != nullptr)
            FAIL() << "EXACTREF_REQUIRE_GPU is set but there is no usable CUDA device: "
                   << cuda::device_unavailable_reason();
        GTEST_SKIP() << "no CUDA device: " << cuda::device_unavailable_reason();
    }
};

}  // namespace exactref::test_cuda

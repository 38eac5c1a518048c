// examples/cuda/example_support.h — what the three CUDA examples share: flags, the no-device exit, a CUDA error
// check, device buffers, and an aligned text table. Host code only.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/cuda.h"

namespace example {

/// Exit codes: 0 the verdicts came out as the example expects, 1 they did not, 2 bad flags, 77 no CUDA device
/// (ctest reports the example as skipped).
inline constexpr int exit_ok = 0, exit_unexpected = 1, exit_usage = 2, exit_no_device = 77;

struct options {
    bool quick = false;  // smaller sizes (the ctest run)
    int runs = 5;        // launches of each nondeterministic kernel
    unsigned long long seed = 20240611;
};

/// Parses --quick, --runs N, --seed S; exits 2 with a message on anything else.
inline options parse(int argc, char** argv, const char* what) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--quick") {
            o.quick = true;
        } else if (a == "--runs" && has_value) {
            o.runs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--seed" && has_value) {
            o.seed = std::strtoull(argv[++i], nullptr, 10);
        } else {
            std::cerr << what << "\nusage: " << argv[0] << " [--quick] [--runs N] [--seed S]\nunknown argument '" << a
                      << "'\n";
            std::exit(exit_usage);
        }
    }
    return o;
}

/// Exits 77 with the reason when there is no CUDA device.
inline void require_device(const char* name) {
    if (!exactref::cuda::device_available()) {
        std::cout << name << ": skipped, no CUDA device (" << exactref::cuda::device_unavailable_reason()
                  << "); this example runs kernels on a GPU\n";
        std::exit(exit_no_device);
    }
}

inline void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

/// n elements of T in device memory.
template <class T>
class device_buffer {
public:
    explicit device_buffer(std::size_t n) : n_(n) { check(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
    explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) {
        check(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer() { cudaFree(p_); }
    T* data() const { return p_; }
    std::size_t size() const { return n_; }
    void zero() { check(cudaMemset(p_, 0, n_ * sizeof(T)), "cudaMemset"); }
    std::vector<T> to_host() const {
        std::vector<T> out(n_);
        check(cudaMemcpy(out.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
        return out;
    }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

/// A text table whose columns are as wide as their widest cell.
class table {
public:
    explicit table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    void print(std::ostream& out) const {
        std::vector<std::size_t> width;
        for (const auto& r : rows_)
            for (std::size_t c = 0; c < r.size(); ++c) {
                if (width.size() <= c) width.push_back(0);
                width[c] = std::max(width[c], r[c].size());
            }
        for (std::size_t i = 0; i < rows_.size(); ++i) {
            for (std::size_t c = 0; c < rows_[i].size(); ++c)
                out << (c ? "  " : "") << rows_[i][c] << std::string(width[c] - rows_[i][c].size(), ' ');
            out << '\n';
            if (i == 0) {
                for (std::size_t c = 0; c < width.size(); ++c) out << (c ? "  " : "") << std::string(width[c], '-');
                out << '\n';
            }
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
};

template <class... Args>
std::string format(const char* spec, Args... args) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, spec, args...);
    return buffer;
}

}  // namespace example

// `exactref ulp` (apps/exactref/ulp_command.cpp): the table of DESIGN §6 printed by the real binary, for the issue's
// harmonic series (10^7 terms, given to the CLI as .npy) and for shared/data/gauss10k_f32.txt; every number printed
// is checked against the library computed here, and the acceptance values of issue 3 against their literal digits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/wait.h>  // WIFEXITED
#include <unistd.h>    // getpid
#include <string>
#include <vector>

#include "exactref/io.h"
#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/tree.h"
#include "exactref/ulp.h"

namespace {
using namespace exactref;

const std::string cli = std::string(EXACTREF_BINARY_DIR) + "/apps/exactref";

struct run_result {
    int status = -1;
    std::string out;
};

run_result run(const std::string& args) {
    run_result r;
    FILE* pipe = popen((cli + " " + args + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return r;
    std::array<char, 4096> buffer{};
    std::size_t got;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), got);
    const int status = pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// A minimal .npy (format 1.0, little-endian float64, C order, 1-D).
void write_npy(const std::string& path, const std::vector<double>& xs) {
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(xs.size()) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const std::uint16_t len = static_cast<std::uint16_t>(header.size());
    const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(len_bytes, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(xs.data()), static_cast<std::streamsize>(xs.size() * sizeof(double)));
}

class UlpCommand : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(cli)) << "the CLI is not built: " << cli << " (build target exactref_cli)";
    }
};

TEST_F(UlpCommand, HarmonicSeriesAcceptanceValues) {
    std::vector<double> xs(10000000);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
    const std::string path = (std::filesystem::temp_directory_path() / ("exactref_test_harmonic_" + std::to_string(getpid()) + ".npy")).string();
    write_npy(path, xs);
    const run_result r = run("ulp --json " + path);
    std::filesystem::remove(path);
    ASSERT_EQ(r.status, 0) << r.out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["n"], 10000000);
    EXPECT_EQ(j["dtype"], "float64");
    EXPECT_EQ(j["exact"].get<std::string>().substr(0, 30), "16.695311365859851761239017191");
    EXPECT_EQ(j["nearest"], "16.69531136585985");
    const reference ref = sum(xs);
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& row : j["orders"]) by_name[row["order"].get<std::string>()] = row;
    ASSERT_EQ(by_name.size(), 5u) << r.out;
    // The values, digit for digit.
    EXPECT_EQ(by_name["fold16"]["result"], "16.69531136585985");
    EXPECT_EQ(by_name["left_fold"]["result"], "16.695311365857272");
    EXPECT_EQ(by_name["halving256"]["result"], "16.695311365859855");
    // Every row is what the library gives here, with its exact ulp error.
    const std::span<const double> s(xs);
    const std::pair<const char*, double> want[] = {{"left_fold", fold_sum(s)},
                                                   {"kahan", kahan_sum(s)},
                                                   {"pairwise", pairwise_sum(s)},
                                                   {"halving256", tree_sum(s, halving())},
                                                   {"fold16", tree_sum(s, fold())}};
    for (const auto& [name, value] : want) {
        EXPECT_EQ(by_name[name]["result_hex"], to_hex_string(value)) << name;
        EXPECT_EQ(by_name[name]["ulp_error"].get<double>(), ulp_error(value, ref)) << name;
    }
}

TEST_F(UlpCommand, TextTableForFloat32Data) {
    const std::string path = std::string(EXACTREF_SHARED_DATA) + "/gauss10k_f32.txt";
    const run_result r = run("ulp --dtype float32 " + path);
    ASSERT_EQ(r.status, 0) << r.out;
    std::ifstream in(path);
    const data_array data = read_text(in, dtype::float32, path);
    const auto& xs = std::get<std::vector<float>>(data.values);
    EXPECT_NE(r.out.find("n           10000"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nearest     30.604261  (0x1.e9ab0ep+4)"), std::string::npos) << r.out;
    for (const auto& [name, value] : {std::pair<std::string, float>{"left_fold", fold_sum(xs)},
                                      {"halving256", tree_sum(xs)},
                                      {"fold16", tree_sum(xs, fold())}}) {
        const std::size_t at = r.out.find("\n" + name + " ");
        ASSERT_NE(at, std::string::npos) << name << "\n" << r.out;
        const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
        EXPECT_NE(line.find(to_hex_string(value)), std::string::npos) << line;
        EXPECT_NE(line.find(to_shortest_string(value)), std::string::npos) << line;
    }
}

TEST_F(UlpCommand, BadInputExitsWithStatusTwo) {
    const run_result r = run("ulp /nonexistent/exactref-no-such-file.txt");
    EXPECT_EQ(r.status, 2) << r.out;
}

}  // namespace

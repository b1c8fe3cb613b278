// The harness's files: inputs judged and outputs opened before any GPU work (io.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io.hpp"
#include "npy.hpp"

using namespace sgemm;

namespace {
std::string tmp(const std::string& name) { return std::string(SGEMM_TEST_TMP) + "/io_" + name; }
bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
void save(const std::string& path, std::vector<float> v, int rows, int cols) {
  write_npy(path, v.data(), rows, cols, cols);
}
ResultRow row() {
  ResultRow r;
  r.step = "01_initial";
  r.m = r.n = r.k = 4;
  return r;
}
}  // namespace

TEST_CASE("an output file that is never written is removed again; an existing one is kept") {
  const std::string fresh = tmp("fresh.csv");
  ::unlink(fresh.c_str());
  { const CsvOutput csv(fresh); CHECK(exists(fresh)); }  // probed: created
  CHECK_FALSE(exists(fresh));                           // nothing written: gone again
  std::ofstream(tmp("kept.npy")) << "old";
  { NpyOutput out(tmp("kept.npy"), 2, 2); }
  CHECK(slurp(tmp("kept.npy")) == "old");  // not truncated by opening
}

TEST_CASE("output paths that cannot be written are usage errors when opened") {
  CHECK(contains(usage_error_of([] { CsvOutput c("/dev/full"); }), "--csv /dev/full: write failed: No space left on device"));
  CHECK(contains(usage_error_of([] { NpyOutput n("/dev/full", 2, 2); }), "--save-c /dev/full: write failed"));
  CHECK(contains(usage_error_of([] { CsvOutput c(SGEMM_TEST_TMP); }), "cannot open for writing: Is a directory"));
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("no/such/dir.csv")); }), "No such file or directory"));
  if (::geteuid() != 0) {  // root writes anywhere
    std::ofstream(tmp("readonly.csv")) << "";
    ::chmod(tmp("readonly.csv").c_str(), 0444);
    CHECK(contains(usage_error_of([] { CsvOutput c(tmp("readonly.csv")); }), "Permission denied"));
  }
}

TEST_CASE("csv: the header is judged before the run, and appended rows are whole lines") {
  const std::string path = tmp("rows.csv");
  ::unlink(path.c_str());
  CsvOutput(path).append(row());
  CsvOutput(path).append(row());
  const std::string text = slurp(path);
  CHECK(text.rfind(csv_header() + "\n", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
  std::ofstream(tmp("foreign.csv")) << "a,b,c\n1,2,3\n";
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("foreign.csv")); }), "not this harness's CSV header"));
  std::ofstream(tmp("cut.csv")) << csv_header() << "\n01_initial,,4";
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("cut.csv")); }), "last line is cut off"));
  // A stream gets its header at once, so /dev/null (any stream) is written, never read.
  CHECK_NOTHROW(CsvOutput("/dev/null").append(row()));
}

TEST_CASE("npy output (--save-c) replaces a regular file only when the result is written") {
  const std::string path = tmp("save_c.npy");  // its own name: CTest runs test cases in parallel
  std::ofstream(path) << "previous contents, longer than the new file will be ........................................"
                         "..............................................................................";
  NpyOutput out(path, 1, 2);
  const float c[2] = {1.5f, -2.0f};
  out.write(c, 1, 2, 2);
  const Matrix m = read_npy(path);
  CHECK(m.rows == 1);
  CHECK(m.data[1] == -2.0f);
}

TEST_CASE("load_matrices: shapes first, then data, every problem named with its option") {
  save(tmp("a.npy"), {1, 2, 3, 4, 5, 6}, 2, 3);
  save(tmp("b.npy"), {1, 2, 3, 4, 5, 6}, 3, 2);
  save(tmp("b_bad.npy"), {1, 2, 3, 4}, 2, 2);
  save(tmp("c.npy"), {1, 2, 3, 4}, 2, 2);
  save(tmp("c_nan.npy"), {1, 2, std::numeric_limits<float>::quiet_NaN(), 4}, 2, 2);
  Options o;
  o.load_a = tmp("a.npy");
  o.load_b = tmp("b.npy");
  const LoadedMatrices in = load_matrices(o);
  CHECK(in.shape == Shape{2, 2, 3});
  CHECK(in.C.empty());
  o.load_c = tmp("c.npy");
  CHECK(load_matrices(o).C.size() == 4);
  o.load_c = tmp("c_nan.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "--load-c " + tmp("c_nan.npy") + ": element [1, 0]"));
  o.load_c = tmp("a.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "is 2 x 3 but A * B is 2 x 2"));
  o.load_c.clear();
  o.load_b = tmp("b_bad.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "A's columns (K) and B's rows must match"));
  o.load_b = tmp("missing.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "--load-b " + tmp("missing.npy") + ": cannot open: No such file"));
}

TEST_CASE("load_matrices: loaded sizes obey the harness's limits") {
  // 46341 x 1 times 1 x 46341: small files, but C (46341 x 46345) is past 2^31 elements.
  save(tmp("col.npy"), std::vector<float>(46341, 1.0f), 46341, 1);
  save(tmp("row.npy"), std::vector<float>(46341, 1.0f), 1, 46341);
  Options o;
  o.load_a = tmp("col.npy");
  o.load_b = tmp("row.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "C is stored as 46341 x 46345"));
  save(tmp("tall.npy"), std::vector<float>(1000001, 1.0f), 1000001, 1);
  o.load_a = tmp("tall.npy");
  o.load_b = tmp("one.npy");
  save(tmp("one.npy"), {2.0f}, 1, 1);
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "M = 1000001 is more than 1000000"));
}

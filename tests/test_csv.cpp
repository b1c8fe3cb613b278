#include <cstdio>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "csv.hpp"
#include "csv_read.hpp"

using namespace sgemm;
using sgemm::test::parse_csv;
using sgemm::test::split_csv;

namespace {
ResultRow sample() {
  ResultRow r;
  r.step = "05_thread_tiling";
  r.variant = "THREAD_TILE_X=8;THREAD_TILE_Y=4";
  r.m = 4096, r.n = 2048, r.k = 17;
  r.alpha = 1.5f, r.beta = -0.25f;
  r.inputs = "exponents=-118,118";  // a comma: quoted
  r.reps = 42;
  r.ms_median = 2.75, r.ms_min = 2.5;
  r.gflops = 12345.6, r.gflops_best = 13000.5;
  r.cublas_ms_median = 2.25, r.cublas_gflops = 15000.25;
  r.ratio_to_cublas = 0.818182;
  r.max_err_over_bound = 0.0123;
  r.err_max_u = 3.5, r.err_rms_u = 0.5;
  r.cublas_err_max_u = 2.75, r.cublas_err_rms_u = 0.25;
  r.err_rms_vs_cublas = 2.0;
  r.verified = true;
  r.prov = {"NVIDIA H100 80GB HBM3", 132, 1980, "13.0", "13.0", "13.0.0", "90", "Release -lineinfo, \"quoted\"",
            "abc123-dirty", "sm_86", 132};
  r.timestamp = "2026-11-22T05:00:00Z";
  return r;
}
}  // namespace

TEST_CASE("CSV header lists the columns plots/ reads") {
  CHECK(csv_header() ==
        "step,variant,m,n,k,alpha,beta,inputs,reps,ms_median,ms_min,gflops,gflops_best,cublas_ms_median,cublas_gflops,"
        "ratio_to_cublas,max_err_over_bound,err_max_u,err_rms_u,cublas_err_max_u,cublas_err_rms_u,err_rms_vs_cublas,"
        "verified,gpu,sm_count,sm_clock_mhz,driver,runtime,cublas,arch,"
        "build_type,git_rev,tuning,device_sm_count,timestamp");
}

TEST_CASE("CSV row round trip, quoting included") {
  const ResultRow r = sample();
  const std::string line = to_csv(r);
  CHECK(split_csv(line).size() == split_csv(csv_header()).size());
  const ResultRow back = parse_csv(line);
  CHECK(back.step == r.step);
  CHECK(back.variant == r.variant);
  CHECK(back.m == r.m);
  CHECK(back.n == r.n);
  CHECK(back.k == r.k);
  CHECK(back.alpha == r.alpha);
  CHECK(back.beta == r.beta);
  CHECK(back.inputs == "exponents=-118,118");
  CHECK(back.reps == r.reps);
  CHECK(back.ms_median == Approx(r.ms_median));
  CHECK(back.gflops == Approx(r.gflops));
  CHECK(back.ratio_to_cublas == Approx(r.ratio_to_cublas));
  CHECK(back.err_max_u == Approx(r.err_max_u));
  CHECK(back.err_rms_u == Approx(r.err_rms_u));
  CHECK(back.cublas_err_max_u == Approx(r.cublas_err_max_u));
  CHECK(back.cublas_err_rms_u == Approx(r.cublas_err_rms_u));
  CHECK(back.err_rms_vs_cublas == Approx(r.err_rms_vs_cublas));
  CHECK(back.verified);
  CHECK(back.prov.gpu == r.prov.gpu);
  CHECK(back.prov.sm_count == 132);
  CHECK(back.prov.build_type == r.prov.build_type);
  CHECK(back.prov.git_rev == r.prov.git_rev);
  CHECK(back.prov.tuning == "sm_86");
  CHECK(back.prov.device_sm_count == 132);
  CHECK(back.timestamp == r.timestamp);
}

TEST_CASE("CSV: accuracy not measured is an empty field") {
  ResultRow r = sample();
  r.err_max_u = r.err_rms_u = r.cublas_err_max_u = r.cublas_err_rms_u = r.err_rms_vs_cublas = kNotMeasured;
  const std::string line = to_csv(r);
  CHECK(line.find(",0.0123,,,,,,1,") != std::string::npos);
  const ResultRow back = parse_csv(line);
  CHECK(back.err_rms_u != back.err_rms_u);  // NaN: not measured
  CHECK(back.verified);
}

TEST_CASE("CSV: the default inputs are an empty inputs field, other inputs name themselves") {
  ResultRow r = sample();
  r.inputs = "";
  std::string line = to_csv(r);
  CHECK(line.find(",1.5,-0.25,,42,") != std::string::npos);
  CHECK(parse_csv(line).inputs.empty());
  r.inputs = "specials;ld-pad=3,5,1";
  line = to_csv(r);
  CHECK(line.find(",1.5,-0.25,\"specials;ld-pad=3,5,1\",42,") != std::string::npos);
  CHECK(parse_csv(line).inputs == r.inputs);
}

TEST_CASE("CSV parsing names the bad field") {
  std::string line = to_csv(sample());
  line.replace(line.find(",4096,"), 6, ",40x6,");
  try {
    parse_csv(line);
    FAIL("accepted a non-numeric m");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("column m") != std::string::npos);
  }
  CHECK_THROWS(parse_csv("a,b,c"));
  CHECK_THROWS(split_csv("\"unterminated"));
}

TEST_CASE("append_csv writes the header once and refuses a foreign header") {
  const std::string path = std::string(SGEMM_TEST_TMP) + "/append.csv";
  std::remove(path.c_str());
  append_csv(path, sample());
  append_csv(path, sample());
  std::ifstream in(path);
  std::string l1, l2, l3, l4;
  std::getline(in, l1), std::getline(in, l2), std::getline(in, l3);
  CHECK(l1 == csv_header());
  CHECK(parse_csv(l2).step == "05_thread_tiling");
  CHECK(parse_csv(l3).m == 4096);
  CHECK_FALSE(std::getline(in, l4));

  const std::string foreign = std::string(SGEMM_TEST_TMP) + "/foreign.csv";
  std::ofstream(foreign) << "some,other,header\n";
  CHECK_THROWS(append_csv(foreign, sample()));
}

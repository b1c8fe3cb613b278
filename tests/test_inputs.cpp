#include <algorithm>
#include <vector>

#include "catch.hpp"
#include "inputs.hpp"

using namespace sgemm;

TEST_CASE("random inputs are in [-1, 1], reproducible, and differ between streams and seeds") {
  std::vector<float> a(10000), b(10000), c(10000), d(10000);
  fill_uniform(a, 7, 1);
  fill_uniform(b, 7, 1);
  fill_uniform(c, 7, 2);
  fill_uniform(d, 8, 1);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != d);
  CHECK(*std::min_element(a.begin(), a.end()) >= -1.0f);
  CHECK(*std::max_element(a.begin(), a.end()) <= 1.0f);
  // Spread over the whole range, not a constant: mean near 0, both signs well represented.
  double mean = 0;
  for (float x : a) mean += x;
  mean /= a.size();
  CHECK(std::abs(mean) < 0.05);
  CHECK(std::count_if(a.begin(), a.end(), [](float x) { return x < -0.9f; }) > 300);
  CHECK(std::count_if(a.begin(), a.end(), [](float x) { return x > 0.9f; }) > 300);
}

// Reading the results CSV back, for the tests only: the harness writes CSV, plots/ reads it.
#pragma once
#include <string>
#include <vector>

#include "csv.hpp"

namespace sgemm::test {

// Splits a CSV line into fields (double quotes around fields with commas or quotes).
std::vector<std::string> split_csv(const std::string& line);
// Parses one line written by to_csv; throws std::runtime_error naming the bad field.
ResultRow parse_csv(const std::string& line);

}  // namespace sgemm::test

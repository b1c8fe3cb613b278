// Catch2 v3 or v2, whichever is installed.
#pragma once
#ifdef SGEMM_CATCH2_V3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

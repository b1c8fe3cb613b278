// Catch2 v2 needs one translation unit to define main(); v3 links Catch2WithMain instead.
#ifndef SGEMM_CATCH2_V3
#define CATCH_CONFIG_MAIN
#endif
#include "catch.hpp"

// main() of the property test programs: chooses RapidCheck's parameters, then runs Google Test.
//
//   CI mode (default): a fixed seed and a bounded number of cases, so that CI is reproducible and quick.
//   Long mode: DETRED_PROPERTY_LONG=1 gives a random seed and many more, larger cases.
//   RC_PARAMS, when set, is used as given (e.g. RC_PARAMS="reproduce=..." to replay a failure; docs/TESTING.md).
// RapidCheck prints the configuration it uses (including the seed) and, for a failure, the shrunk counterexample and
// the RC_PARAMS that replays it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace {
constexpr const char* ci_parameters = "seed=20261122 max_success=200 max_size=100";
constexpr const char* long_parameters = "max_success=2000 max_size=200";
}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("RC_PARAMS") == nullptr) {
    const char* long_mode = std::getenv("DETRED_PROPERTY_LONG");
    const bool is_long = long_mode != nullptr && std::strcmp(long_mode, "1") == 0;
    setenv("RC_PARAMS", is_long ? long_parameters : ci_parameters, 1);
  }
  std::cout << "RapidCheck parameters: RC_PARAMS=\"" << std::getenv("RC_PARAMS") << "\"\n";
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

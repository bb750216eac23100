# detred_add_property_tests(<target> [LABELS <labels...>] [PROPERTIES <ctest properties...>])
# Makes <target> (an executable whose sources instantiate detred::test::BackendProperties, docs/PROPERTIES.md) a
# property test program: links detred::properties and detred::properties_main (the main() that fixes RapidCheck's
# seed and case count) and registers each property with ctest (gtest_discover_tests), one ctest test per property.
# Installed with the package; find_package(detred CONFIG REQUIRED COMPONENTS properties) defines it.
include_guard(GLOBAL)
include(GoogleTest)

function(detred_add_property_tests target)
  cmake_parse_arguments(arg "" "" "LABELS;PROPERTIES" ${ARGN})
  target_link_libraries(${target} PRIVATE detred::properties detred::properties_main)
  set(properties TIMEOUT 600)
  if(arg_LABELS)
    list(APPEND properties LABELS "${arg_LABELS}")
  endif()
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES ${properties} ${arg_PROPERTIES})
endfunction()

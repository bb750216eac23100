# detred-audit --plugin (include/detred/audit_plugin.h): a good plugin audited beside detred's rows, one that breaks
# its guarantee (exit 1), and the bad ones (exit 2, one line). Included from tests/audit/CMakeLists.txt.
set(plugin_source ${CMAKE_CURRENT_SOURCE_DIR}/plugins/test_plugin.cpp)
foreach(kind GOOD BROKEN WRONG_ABI NO_ALGORITHMS BAD_NAME BAD_GUARANTEE)
  string(TOLOWER ${kind} lower)
  add_library(audit_plugin_${lower} MODULE ${plugin_source})
  target_compile_definitions(audit_plugin_${lower} PRIVATE PLUGIN_${kind})
  target_include_directories(audit_plugin_${lower} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_features(audit_plugin_${lower} PRIVATE cxx_std_20)
endforeach()
set(f64 ${files}/f64_le.npy)
audit_case(plugin_good EXIT 0 ARGS ${f64} ${quick} --plugin $<TARGET_FILE:audit_plugin_good>
           STDOUT "plugin/left_to_right.*every promise kept")
audit_case(plugin_listed EXIT 0 ARGS --list-algorithms --plugin $<TARGET_FILE:audit_plugin_good>
           STDOUT "cpu/tree_neumaier@f64.*plugin/left_to_right")
audit_case(plugin_selected EXIT 0 ARGS ${f64} ${quick} --plugin $<TARGET_FILE:audit_plugin_good>
           --algorithms plugin/left_to_right STDOUT "plugin/left_to_right")
audit_case(plugin_broken_promise EXIT 1 ARGS ${f64} --repeat 3 --permute 0 -q
           --plugin $<TARGET_FILE:audit_plugin_broken> STDOUT "plugin/drifting.*3 distinct results over 3 runs")
audit_case(plugin_missing_file EXIT 2 ONE_LINE ARGS ${f64} --plugin ${CMAKE_CURRENT_BINARY_DIR}/no_such_plugin.so
           STDERR "--plugin .*no_such_plugin.so: cannot load the library")
audit_case(plugin_wrong_abi EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_wrong_abi>
           STDERR "ABI version 999, this detred-audit reads version 1")
audit_case(plugin_missing_symbol EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_no_algorithms>
           STDERR "missing symbol detred_audit_plugin_algorithms")
audit_case(plugin_bad_name EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_bad_name>
           STDERR "algorithm 0: invalid name")
audit_case(plugin_bad_guarantee EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_bad_guarantee>
           STDERR "mine: invalid guarantee 'always'")

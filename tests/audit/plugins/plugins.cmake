# detred-audit --plugin (include/detred/audit_plugin.h): a good plugin audited beside detred's rows, one that breaks
# its guarantee (exit 1), every refusal rule of load_plugins (exit 2, one line each), and cpu_gpu promises checked
# against their twins whatever the selection. Included from tests/audit/CMakeLists.txt.
set(plugin_source ${CMAKE_CURRENT_SOURCE_DIR}/plugins/test_plugin.cpp)
foreach(kind GOOD BROKEN WRONG_ABI NO_ALGORITHMS BAD_NAME BAD_GUARANTEE NULL_GUARANTEE NO_VERSION EMPTY LONG_NAME
             BAD_BOUND NO_TWIN UNKNOWN_TWIN ZERO_CONFIGS MANY_CONFIGS NO_SUM DUPLICATE TWINS)
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

# Every other refusal rule of the plugin ABI (verify/audit/plugins.cpp), each alone: exit 2, one line naming it.
foreach(rule "null_guarantee|mine: invalid guarantee '\\(null\\)'"
             "no_version|missing symbol detred_audit_plugin_abi_version"
             "empty|declares no algorithm"
             "long_name|algorithm 0: invalid name"
             "bad_bound|mine: invalid bound 'quick'"
             "no_twin|mine: guarantee cpu_gpu needs a twin"
             "unknown_twin|mine: twin 'no_such_row' names no algorithm"
             "zero_configs|mine: config_count 0 \\(1 to 1024\\)"
             "many_configs|mine: config_count 1025 \\(1 to 1024\\)"
             "no_sum|mine: no sum function"
             "duplicate|algorithm 1: mine: name already used by")
  string(FIND "${rule}" "|" bar)
  string(SUBSTRING "${rule}" 0 ${bar} kind)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${rule}" ${bar} -1 message)
  audit_case(plugin_refused_${kind} EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_${kind}>
             STDERR "${message}" STDOUT_NOT "promise")
endforeach()
# A refusal also stops --list-algorithms, and the same name from two libraries is refused.
audit_case(plugin_unknown_twin_listing EXIT 2 ONE_LINE ARGS --list-algorithms
           --plugin $<TARGET_FILE:audit_plugin_unknown_twin> STDERR "twin 'no_such_row' names no algorithm")
audit_case(plugin_same_name_twice EXIT 2 ONE_LINE ARGS ${f64} --plugin $<TARGET_FILE:audit_plugin_good>
           --plugin $<TARGET_FILE:audit_plugin_good> STDERR "left_to_right: name already used by")

# cpu_gpu promises are checked against the twin whenever the row runs: selected alone, the twin runs too.
set(twins $<TARGET_FILE:audit_plugin_twins>)
audit_case(plugin_twin_broken_selected_alone EXIT 1 ARGS ${f64} ${quick} --plugin ${twins} --algorithms plugin/off_twin
           STDOUT "\ncpu/tree .*FAIL plugin/off_twin: differs from cpu/tree \\(promised: cpu_gpu\\)")
audit_case(plugin_twin_kept_selected_alone EXIT 0 ARGS ${f64} ${quick} --plugin ${twins}
           --algorithms plugin/kept_twin STDOUT "\ncpu/sequential .*\nplugin/kept_twin [^\n]* yes\n.*every promise kept")
# A twin that cannot run on this input (no f64 function): reported as not checked, never as kept.
audit_case(plugin_twin_absent_not_checked EXIT 0 ARGS ${f64} ${quick} --plugin ${twins}
           --algorithms plugin/twin_absent STDOUT "NOT CHECKED plugin/twin_absent: the bits of plugin/f32_only"
           STDOUT_NOT "every promise kept")
audit_case(plugin_twin_absent_json EXIT 0 ARGS ${f64} ${quick} --plugin ${twins} --algorithms plugin/twin_absent
           --json - JSON_KEY inputs 0 results 0 not_checked 0 JSON_VALUE
           "the bits of plugin/f32_only (promised: cpu_gpu): plugin/f32_only did not run on this input")
# Patterns: 'plugin/*' selects every plugin row (and their twins), '*_twin' the rows ending so.
audit_case(plugin_glob_selects_every_plugin_row EXIT 1 ARGS ${f64} ${quick} --plugin ${twins} --algorithms "plugin/*"
           STDOUT "plugin/off_twin.*plugin/kept_twin.*plugin/twin_absent")
audit_case(plugin_glob_suffix EXIT 0 ARGS ${f64} ${quick} --plugin ${twins} --algorithms "kept*"
           STDOUT "plugin/kept_twin" STDOUT_NOT "plugin/off_twin")

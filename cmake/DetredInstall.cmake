# Installation and the package config, so that find_package(detred CONFIG REQUIRED) gives detred::detred
# (and detred::cuda when the CUDA backend was built, detred::verify when verify/ was: find_package(detred CONFIG
# REQUIRED COMPONENTS verify) also checks that Boost, which it needs, is found; likewise COMPONENTS mpi (detred::mpi,
# finds MPI) and nccl (detred::nccl, linked to the libnccl.so.2 found at build time)).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DETRED_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/detred)
set(detred_targets detred)
if(DETRED_HAVE_CUDA)
  list(APPEND detred_targets detred_cuda)
endif()
# detred::verify (exact references, error metrics, generators), when built: a component, since it needs Boost.
set(DETRED_PACKAGE_HAS_VERIFY OFF)
if(TARGET detred_verify)
  list(APPEND detred_targets detred_verify)
  install(DIRECTORY verify/include/detred DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set(DETRED_PACKAGE_HAS_VERIFY ON)
endif()

# detred::properties (the property suites for users' reductions, docs/PROPERTIES.md) and detred::properties_main,
# when built: a component, since they need RapidCheck and GoogleTest; with detred_add_property_tests().
set(DETRED_PACKAGE_HAS_PROPERTIES OFF)
if(TARGET detred_properties)
  list(APPEND detred_targets detred_properties detred_properties_main)
  install(DIRECTORY properties/include/detred DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES cmake/detredProperties.cmake DESTINATION ${DETRED_CONFIG_DIR})
  set(DETRED_PACKAGE_HAS_PROPERTIES ON)
endif()

# detred::mpi and detred::nccl (docs/DISTRIBUTED.md), when built: components, since they need MPI and NCCL. Their
# public headers (detred/mpi.hpp and detred/mpi/, detred/nccl.hpp and detred/nccl/) are installed only with their
# component; their internals live in src/distributed/ and are never installed.
set(DETRED_PACKAGE_HAS_MPI OFF)
set(detred_header_excludes)
if(TARGET detred_mpi)
  list(APPEND detred_targets detred_mpi)
  set(DETRED_PACKAGE_HAS_MPI ON)
else()
  list(APPEND detred_header_excludes PATTERN mpi EXCLUDE PATTERN mpi.hpp EXCLUDE)
endif()
set(DETRED_PACKAGE_HAS_NCCL OFF)
if(TARGET detred_nccl)
  list(APPEND detred_targets detred_nccl)
  set(DETRED_PACKAGE_HAS_NCCL ON)
else()
  list(APPEND detred_header_excludes PATTERN nccl EXCLUDE PATTERN nccl.hpp EXCLUDE)
endif()

install(TARGETS ${detred_targets} EXPORT detredTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/detred DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${detred_header_excludes})
install(EXPORT detredTargets NAMESPACE detred:: DESTINATION ${DETRED_CONFIG_DIR})

configure_package_config_file(cmake/detredConfig.cmake.in ${PROJECT_BINARY_DIR}/detredConfig.cmake
  INSTALL_DESTINATION ${DETRED_CONFIG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/detredConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/detredConfig.cmake ${PROJECT_BINARY_DIR}/detredConfigVersion.cmake
  DESTINATION ${DETRED_CONFIG_DIR})

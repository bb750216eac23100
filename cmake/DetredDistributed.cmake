# The distributed components, each its own target so that users who need neither MPI nor NCCL never link them:
#   detred::mpi  (detred_mpi)  when MPI is found (Debian: libopenmpi-dev, scripts/install-deps.sh);
#   detred::nccl (detred_nccl) when the CUDA backend is built and NCCL's nccl.h and libnccl.so.2 are found: in the CUDA
#     toolkit, under NCCL_HOME, or in the nvidia-nccl-cu13 Python package (site-packages/nvidia/nccl). libnccl.so.2 is
#     linked dynamically; where it is not on the loader's path, point LD_LIBRARY_PATH at its folder (docs/DISTRIBUTED.md).
# DETRED_MPI / DETRED_NCCL: AUTO (build where found; say so either way), ON (fail when not found), OFF.
include_guard(GLOBAL)

set(DETRED_MPI AUTO CACHE STRING "Build detred::mpi: AUTO (when MPI is found), ON, OFF")
set_property(CACHE DETRED_MPI PROPERTY STRINGS AUTO ON OFF)
set(DETRED_NCCL AUTO CACHE STRING "Build detred::nccl: AUTO (when CUDA and NCCL are found), ON, OFF")
set_property(CACHE DETRED_NCCL PROPERTY STRINGS AUTO ON OFF)

set(DETRED_HAVE_MPI OFF)
if(NOT DETRED_MPI STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON)  # the C API from C++ (the project enables no C compiler); no deprecated C++ bindings
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(DETRED_HAVE_MPI ON)
    message(STATUS "detred: MPI component ON (MPI ${MPI_CXX_VERSION}, ${MPIEXEC_EXECUTABLE})")
  elseif(DETRED_MPI STREQUAL "ON")
    message(FATAL_ERROR "detred: DETRED_MPI=ON but MPI was not found (Debian: apt-get install libopenmpi-dev openmpi-bin)")
  else()
    message(STATUS "detred: MPI component OFF (no MPI found; Debian: apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()

set(DETRED_HAVE_NCCL OFF)
if(NOT DETRED_NCCL STREQUAL "OFF")
  if(DETRED_HAVE_CUDA)
    set(detred_nccl_hints)
    if(DEFINED ENV{NCCL_HOME})
      list(APPEND detred_nccl_hints $ENV{NCCL_HOME})
    endif()
    find_program(DETRED_PYTHON3 python3)
    if(DETRED_PYTHON3)
      execute_process(COMMAND ${DETRED_PYTHON3} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
                      OUTPUT_VARIABLE detred_nccl_python OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(detred_nccl_python)
        list(APPEND detred_nccl_hints ${detred_nccl_python})
      endif()
    endif()
    foreach(dir ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES} ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES})
      get_filename_component(parent ${dir} DIRECTORY)
      list(APPEND detred_nccl_hints ${parent})
    endforeach()
    find_path(DETRED_NCCL_INCLUDE_DIR nccl.h HINTS ${detred_nccl_hints} PATH_SUFFIXES include)
    find_library(DETRED_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${detred_nccl_hints} PATH_SUFFIXES lib lib64)
    # The peer-memory collectives use NCCL 2.28's symmetric windows and device API (nccl_device.h).
    if(DETRED_NCCL_INCLUDE_DIR AND DETRED_NCCL_LIBRARY AND EXISTS ${DETRED_NCCL_INCLUDE_DIR}/nccl_device.h)
      set(DETRED_HAVE_NCCL ON)
      message(STATUS "detred: NCCL component ON (${DETRED_NCCL_INCLUDE_DIR}/nccl.h, ${DETRED_NCCL_LIBRARY})")
    endif()
  endif()
  if(NOT DETRED_HAVE_NCCL)
    if(DETRED_NCCL STREQUAL "ON")
      message(FATAL_ERROR "detred: DETRED_NCCL=ON but the CUDA backend or NCCL 2.28+ (nccl.h, nccl_device.h, libnccl.so.2) was not found")
    endif()
    message(STATUS "detred: NCCL component OFF (needs the CUDA backend and NCCL 2.28 or later: nccl.h, nccl_device.h "
                   "and libnccl.so.2 in the CUDA toolkit, NCCL_HOME or the nvidia-nccl-cu13 Python package)")
  endif()
endif()

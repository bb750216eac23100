# CUDA detection. With DETRED_CUDA=AUTO the CUDA backend is built where nvcc exists (on PATH, in CUDACXX, or at
# /usr/local/cuda/bin/nvcc); it compiles and links without a GPU, and its tests skip with a message where none is.
# CMake 3.25 cannot set C++20 for nvcc (CMAKE_CUDA_STANDARD 20 fails), so -std=c++20 is passed as an option and no
# cuda_std_* feature is ever exported.
include_guard(GLOBAL)
include(CheckLanguage)

set(DETRED_HAVE_CUDA OFF)
if(NOT DETRED_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${DETRED_CUDA_ARCHITECTURES})
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)  # binaries built here run on the GPU machine as they are
    enable_language(CUDA)
    # The static CUDA runtime and the toolkit headers, found from the compiler's own directories. (FindCUDAToolkit is
    # avoided: CMake 3.25's version fails on CUDA 13, which no longer ships nvToolsExt, on a fresh machine.)
    find_library(DETRED_CUDART_STATIC NAMES cudart_static HINTS ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES} REQUIRED)
    set(DETRED_CUDA_INCLUDE_DIRS ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})
    set(DETRED_HAVE_CUDA ON)
    message(STATUS "detred: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(DETRED_CUDA STREQUAL "ON")
    message(FATAL_ERROR "detred: DETRED_CUDA=ON but no CUDA compiler was found")
  else()
    message(STATUS "detred: CUDA backend OFF (no nvcc found)")
  endif()
endif()

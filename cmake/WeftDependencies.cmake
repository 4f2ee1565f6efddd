# The chosen dependencies: MPI, hwloc, OpenBLAS (BLAS + LAPACKE), and the
# CUDA toolkit (runtime, cuBLAS, cuSOLVER) when present.
find_package(Threads REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)

# OpenBLAS provides CBLAS and LAPACK; LAPACKE comes from its own package on
# Debian/Ubuntu (liblapacke-dev).
pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
if(NOT OPENBLAS_FOUND)
  find_library(OPENBLAS_LIB NAMES openblas REQUIRED)
  add_library(PkgConfig::OPENBLAS INTERFACE IMPORTED)
  set_target_properties(PkgConfig::OPENBLAS PROPERTIES INTERFACE_LINK_LIBRARIES ${OPENBLAS_LIB})
endif()
find_path(LAPACKE_INCLUDE_DIR NAMES lapacke.h PATH_SUFFIXES openblas REQUIRED)
find_library(LAPACKE_LIB NAMES lapacke REQUIRED)
find_path(CBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread REQUIRED)
add_library(weft_blas INTERFACE)
target_include_directories(weft_blas INTERFACE ${LAPACKE_INCLUDE_DIR} ${CBLAS_INCLUDE_DIR})
target_link_libraries(weft_blas INTERFACE ${LAPACKE_LIB} PkgConfig::OPENBLAS m)

set(WEFT_HAVE_CUDA OFF)
if(NOT WEFT_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(WEFT_HAVE_CUDA ON)
    message(STATUS "weft: CUDA ${CUDAToolkit_VERSION} found, building the cuda device module")
  elseif(WEFT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "weft: WEFT_CUDA=ON but no CUDA toolkit was found")
  else()
    message(STATUS "weft: no CUDA toolkit, building without the cuda device module")
  endif()
endif()

# The chosen dependencies: MPI, hwloc, OpenBLAS (BLAS + LAPACKE), the CUDA
# toolkit (runtime, cuBLAS, cuSOLVER) and NCCL beside it, and the HIP runtime,
# when present.
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

# NCCL, for the nccl transport (src/comm/transport_nccl*.c): only with the
# CUDA module, since it moves tiles between CUDA devices. It ships in the
# CUDA toolkit's folders here and as a system package elsewhere.
set(WEFT_HAVE_NCCL OFF)
if(WEFT_HAVE_CUDA AND NOT WEFT_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR NAMES nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIB NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
  if(NCCL_INCLUDE_DIR AND NCCL_LIB)
    set(WEFT_HAVE_NCCL ON)
    add_library(weft_nccl INTERFACE)
    target_include_directories(weft_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(weft_nccl INTERFACE ${NCCL_LIB})
    message(STATUS "weft: NCCL found (${NCCL_LIB}), building the nccl transport")
  elseif(WEFT_NCCL STREQUAL "ON")
    message(FATAL_ERROR "weft: WEFT_NCCL=ON but nccl.h / libnccl were not found")
  else()
    message(STATUS "weft: no NCCL, building without the nccl transport")
  endif()
elseif(WEFT_NCCL STREQUAL "ON")
  message(FATAL_ERROR "weft: WEFT_NCCL=ON needs the CUDA module (WEFT_CUDA not OFF and a CUDA toolkit)")
endif()

# HIP: only the runtime's C API (libamdhip64 and its headers), compiled by
# the C compiler for the AMD platform; no hipcc is needed to build weft.
set(WEFT_HAVE_HIP OFF)
if(NOT WEFT_HIP STREQUAL "OFF")
  find_path(HIP_INCLUDE_DIR NAMES hip/hip_runtime_api.h PATHS /opt/rocm/include)
  find_library(HIP_LIBRARY NAMES amdhip64 PATHS /opt/rocm/lib)
  if(HIP_INCLUDE_DIR AND HIP_LIBRARY)
    set(WEFT_HAVE_HIP ON)
    add_library(weft_hip INTERFACE)
    target_include_directories(weft_hip SYSTEM INTERFACE ${HIP_INCLUDE_DIR})
    target_compile_definitions(weft_hip INTERFACE __HIP_PLATFORM_AMD__)
    target_link_libraries(weft_hip INTERFACE ${HIP_LIBRARY})
    message(STATUS "weft: HIP runtime found (${HIP_LIBRARY}), building the hip device module")
  elseif(WEFT_HIP STREQUAL "ON")
    message(FATAL_ERROR "weft: WEFT_HIP=ON but no HIP runtime was found "
                        "(hip/hip_runtime_api.h and libamdhip64: libamdhip64-dev on Debian)")
  else()
    message(STATUS "weft: no HIP runtime, building without the hip device module")
  endif()
endif()

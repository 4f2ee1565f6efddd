# Installs libweft, include/weft/, a CMake package (find_package(weft) ->
# weft::weft) and a pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS weft EXPORT weftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
foreach(mod CUDA NCCL HIP)
  if(WEFT_HAVE_${mod})
    set(WEFT_HAVE_${mod}_BOOL TRUE)
  else()
    set(WEFT_HAVE_${mod}_BOOL FALSE)
  endif()
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
# While the major version is 0 a minor version is a new interface.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(weft_compat SameMinorVersion)
else()
  set(weft_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY ${weft_compat})
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
# The .pc file finds its prefix from where it is installed (relocatable).
file(RELATIVE_PATH WEFT_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" WEFT_PC_TO_PREFIX "${WEFT_PC_TO_PREFIX}")
# A libdir or includedir given as an absolute path is written as it is.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(WEFT_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(WEFT_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
# weft/weft_mpi.h includes mpi.h, and a program that gives weft its
# communicator calls MPI itself: the MPI libweft was built with, headers
# and library.
set(WEFT_PC_MPI_CFLAGS "")
foreach(inc IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND WEFT_PC_MPI_CFLAGS " -I${inc}")
endforeach()
set(WEFT_PC_MPI_LIBS "")
foreach(lib IN LISTS MPI_C_LIBRARIES)
  string(APPEND WEFT_PC_MPI_LIBS " ${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

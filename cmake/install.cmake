# `cmake --install BUILD [--prefix P]`: the headers (h5pack.h, h5pack_sim.h), libh5pack (shared and static),
# the programs, the Python binding, and what other projects need to find them: h5packConfig.cmake (+ version
# file) and h5pack.pc.
# Both are relocatable: the prefix is computed from where they are installed.
#
#   find_package(h5pack)                     -> h5pack::h5pack         (shared library)
#   find_package(h5pack COMPONENTS static)   -> also h5pack::h5pack_static (finds HDF5, libdeflate, ...)
#   pkg-config --cflags --libs h5pack        (add --static for libh5pack.a)
include(CMakePackageConfigHelpers)

set(H5PACK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/h5pack" CACHE STRING
    "Where h5packConfig.cmake goes, relative to the prefix")
set(H5PACK_INSTALL_PYTHONDIR "${CMAKE_INSTALL_LIBDIR}/h5pack/python" CACHE STRING
    "Where the Python package h5pack/ goes (add it to PYTHONPATH), relative to the prefix")

# ---- libraries and header ------------------------------------------------------------------------------
install(FILES ${PROJECT_SOURCE_DIR}/include/h5pack.h ${PROJECT_SOURCE_DIR}/include/h5pack_sim.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS h5pack EXPORT h5packTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT h5packTargets NAMESPACE h5pack:: FILE h5packTargets.cmake
        DESTINATION ${H5PACK_INSTALL_CMAKEDIR})

# The static library carries its dependencies in its interface (HDF5, libdeflate, zlib, threads, OpenMP,
# the static CUDA runtime): the two interface targets that name them travel with it.
install(TARGETS h5pack_static h5pack_hdf5 h5pack_openmp EXPORT h5packStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT h5packStaticTargets NAMESPACE h5pack:: FILE h5packStaticTargets.cmake
        DESTINATION ${H5PACK_INSTALL_CMAKEDIR})

# ---- programs --------------------------------------------------------------------------------------------
# Installed programs that link libh5pack.so find it next to them: bin/../lib.
file(RELATIVE_PATH _h5pack_bin_to_lib "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
foreach(_prog h5pack_cli h5pack_stats)
  if(TARGET ${_prog})
    set_target_properties(${_prog} PROPERTIES INSTALL_RPATH "$ORIGIN/${_h5pack_bin_to_lib}")
    install(TARGETS ${_prog} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# ---- Python binding ------------------------------------------------------------------------------------
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/h5pack DESTINATION ${H5PACK_INSTALL_PYTHONDIR}
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)

# ---- CMake package -------------------------------------------------------------------------------------
set(H5PACK_CONFIG_HAVE_CUDA ${H5PACK_HAVE_CUDA})
set(H5PACK_CONFIG_HAVE_OPENMP ${H5PACK_HAVE_OPENMP})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/h5packConfig.cmake.in
  ${PROJECT_BINARY_DIR}/h5packConfig.cmake INSTALL_DESTINATION ${H5PACK_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR H5PACK_INSTALL_PYTHONDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/h5packConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/h5packConfig.cmake ${PROJECT_BINARY_DIR}/h5packConfigVersion.cmake
        DESTINATION ${H5PACK_INSTALL_CMAKEDIR})

# ---- pkg-config ----------------------------------------------------------------------------------------
# prefix relative to the .pc file's folder (${pcfiledir}), so --prefix at install time is honoured.
file(RELATIVE_PATH H5PACK_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" H5PACK_PC_TO_PREFIX "${H5PACK_PC_TO_PREFIX}")
set(H5PACK_PC_LIBS_PRIVATE "-lm -lpthread")
if(H5PACK_HAVE_OPENMP)
  string(APPEND H5PACK_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
if(H5PACK_HAVE_CURL)  # the remote stores (reader/store/store_http.h)
  string(APPEND H5PACK_PC_LIBS_PRIVATE " -lcurl -lcrypto")
endif()
if(H5PACK_HAVE_CUDA)
  string(APPEND H5PACK_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt -ldl -lstdc++")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/h5pack.pc.in ${PROJECT_BINARY_DIR}/h5pack.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/h5pack.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

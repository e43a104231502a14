# Third-party libraries, all from Debian packages (cmake/install-deps.sh installs them). A missing one stops
# the configure step with the package to install, also under `pip install .`.
# h5pack_require(FOUND_VAR "what" debian-package): stops with the package to install unless FOUND_VAR.
function(h5pack_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "h5pack needs ${what}: install the Debian package ${package} "
                        "(sudo apt-get install ${package}, or bash cmake/install-deps.sh for all of them)")
  endif()
endfunction()

find_package(Threads REQUIRED)
find_package(HDF5 COMPONENTS C)
h5pack_require(HDF5_FOUND "the HDF5 C library" libhdf5-dev)
find_package(PNG)
h5pack_require(PNG_FOUND "libpng" libpng-dev)
find_package(ZLIB)
h5pack_require(ZLIB_FOUND "zlib" zlib1g-dev)
find_package(PkgConfig)
h5pack_require(PKG_CONFIG_FOUND "pkg-config" pkg-config)
pkg_check_modules(TURBOJPEG IMPORTED_TARGET libturbojpeg)
h5pack_require(TURBOJPEG_FOUND "libjpeg-turbo's TurboJPEG API" libturbojpeg0-dev)
# libjpeg's scanline API of the same libjpeg-turbo: --tiles decodes huge JPEGs band by band
pkg_check_modules(LIBJPEG IMPORTED_TARGET libjpeg)
h5pack_require(LIBJPEG_FOUND "libjpeg-turbo's libjpeg API (jpeglib.h)" libjpeg62-turbo-dev)
pkg_check_modules(LIBDEFLATE IMPORTED_TARGET libdeflate)
h5pack_require(LIBDEFLATE_FOUND "libdeflate" libdeflate-dev)

add_library(h5pack_hdf5 INTERFACE)
target_include_directories(h5pack_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(h5pack_hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
target_compile_definitions(h5pack_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS} H5_USE_110_API)

set(H5PACK_HAVE_OPENMP OFF)
if(H5PACK_WITH_OPENMP)
  find_package(OpenMP COMPONENTS C)
  if(OpenMP_C_FOUND)
    set(H5PACK_HAVE_OPENMP ON)
  endif()
endif()
# MPI for the converter's scale-out (docs/scale-out.md). AUTO leaves it out of sanitizer builds: Open MPI's
# own allocations would drown LeakSanitizer's report, and those builds test the serial code.
set(H5PACK_HAVE_MPI OFF)
if(H5PACK_WITH_MPI STREQUAL "ON" OR (H5PACK_WITH_MPI STREQUAL "AUTO" AND NOT H5PACK_SANITIZE))
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(H5PACK_HAVE_MPI ON)
  elseif(H5PACK_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "H5PACK_WITH_MPI=ON but no MPI was found (bash cmake/install-deps.sh --with-mpi)")
  endif()
endif()

add_library(h5pack_openmp INTERFACE)
if(H5PACK_HAVE_OPENMP)
  target_link_libraries(h5pack_openmp INTERFACE OpenMP::OpenMP_C)
  target_compile_definitions(h5pack_openmp INTERFACE H5PACK_HAVE_OPENMP=1)
endif()

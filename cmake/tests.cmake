# One way to register a test (docs/design.md, "How to add a test"). Included by tests/CMakeLists.txt.
#
#   h5pack_test(NAME name SOURCES a.c [b.c ...]      a C (or CUDA) test program
#               [LIBS lib ...]                        default: h5pack_static h5fixture h5pack_hdf5 m
#                                                     (h5fixture: tests/fixtures/h5fixture.h, the one
#                                                     writer of test HDF5 files; add it to other LIBS)
#               [INCLUDES dir ...]                    added to tests/ and reader's folders (H5PACK_READER_INCLUDE_DIRS)
#               [DEFINES NAME=value ...] [COMPILE_OPTIONS option ...] [ARGS arg ...]
#               [LABELS label ...] [TIMEOUT seconds] [ENV NAME=value ...])
#   h5pack_test(NAME name COMMAND program arg ...     any command (a script, a shell pipeline, or the
#                                                     program of another h5pack_test: test_<name>)
#               [LABELS ...] [TIMEOUT ...] [ENV ...])
#   h5pack_python_test(NAME name SCRIPT file.py [ARGS arg ...] [LABELS ...] [TIMEOUT ...] [ENV ...]
#                      [PYTHON interpreter])  PYTHON defaults to H5PACK_TEST_PYTHON
#                                                     TIMEOUT defaults to 120 s (the slowest Python test takes
#                                                     about 10 s, also under ASan)
#
# Every test runs in its directory's build folder (files it writes stay there) and may exit 77 to say
# "skipped: <why>" (no GPU, no h5py). Labels: "threads" = the ThreadSanitizer build runs it; "slow" = the
# sanitizer builds skip it; "nosan" = never under a sanitizer; "python" = needs /usr/bin/python3's
# numpy/h5py/torch. Python tests run Debian's /usr/bin/python3 with the binding and tests/pyhelp/ (h5test:
# check(), the failure count and the exit status every Python test shares) on PYTHONPATH.

set(H5PACK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "python3 with numpy, h5py and torch for the tests")
# The venv of cmake/install-frameworks.sh: numpy, jax (CPU) and tensorflow-cpu, no torch, no h5py.
set(H5PACK_FRAMEWORKS_PYTHON ${PROJECT_SOURCE_DIR}/build-venv-frameworks/bin/python CACHE FILEPATH
    "python3 with numpy, jax and tensorflow (no torch) for the framework front-end tests")

function(_h5pack_test_properties name)
  cmake_parse_arguments(P "" "TIMEOUT" "LABELS;ENV" ${ARGN})
  set_property(TEST ${name} PROPERTY SKIP_RETURN_CODE 77)
  if(P_TIMEOUT)
    set_property(TEST ${name} PROPERTY TIMEOUT ${P_TIMEOUT})
  endif()
  if(P_LABELS)  # set_property, not set_tests_properties: a list of several labels stays one value
    set_property(TEST ${name} PROPERTY LABELS ${P_LABELS})
  endif()
  list(APPEND P_ENV "PYTHONDONTWRITEBYTECODE=1")
  set_property(TEST ${name} PROPERTY ENVIRONMENT ${P_ENV})
endfunction()

function(h5pack_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;INCLUDES;DEFINES;COMPILE_OPTIONS;ARGS;LABELS;ENV;COMMAND" ${ARGN})
  if(NOT T_NAME)
    message(FATAL_ERROR "h5pack_test: NAME is required")
  endif()
  if(T_SOURCES)
    set(_exe test_${T_NAME})
    add_executable(${_exe} ${T_SOURCES})
    if(NOT T_LIBS)
      set(T_LIBS h5pack_static h5fixture h5pack_hdf5 m)
    endif()
    target_link_libraries(${_exe} PRIVATE ${T_LIBS})
    target_include_directories(${_exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${H5PACK_READER_INCLUDE_DIRS}
                               ${T_INCLUDES})
    if(T_DEFINES)
      target_compile_definitions(${_exe} PRIVATE ${T_DEFINES})
    endif()
    if(T_COMPILE_OPTIONS)
      target_compile_options(${_exe} PRIVATE ${T_COMPILE_OPTIONS})
    endif()
    add_test(NAME ${T_NAME} COMMAND ${_exe} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  elseif(T_COMMAND)
    add_test(NAME ${T_NAME} COMMAND ${T_COMMAND} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  else()
    message(FATAL_ERROR "h5pack_test(${T_NAME}): give SOURCES or COMMAND")
  endif()
  _h5pack_test_properties(${T_NAME} TIMEOUT "${T_TIMEOUT}" LABELS ${T_LABELS} ENV ${T_ENV})
endfunction()

# ASan builds: tests labelled nosan load libh5pack into Debian's python3, which is not built with the
# sanitizer. Preloading gcc's sanitizer runtimes (ASan first, as it must be) makes the ASan-built library
# loadable there, so these tests run in the asan+ubsan suite too; leaks are not checked (CPython keeps
# objects alive at exit). Where no runtime is found (e.g. clang's differ) they stay nosan.
set(H5PACK_PYTHON_PRELOAD "")
if(H5PACK_SANITIZE MATCHES "address" AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  foreach(_rt asan ubsan)
    if(_rt STREQUAL "asan" OR H5PACK_SANITIZE MATCHES "undefined")
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${_rt}.so
                      OUTPUT_VARIABLE _rt_path OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(IS_ABSOLUTE "${_rt_path}" AND EXISTS "${_rt_path}")
        string(APPEND H5PACK_PYTHON_PRELOAD "${_rt_path}:")
      elseif(_rt STREQUAL "asan")
        break()
      endif()
    endif()
  endforeach()
  string(REGEX REPLACE ":$" "" H5PACK_PYTHON_PRELOAD "${H5PACK_PYTHON_PRELOAD}")
endif()

function(h5pack_python_test)
  cmake_parse_arguments(T "" "NAME;SCRIPT;TIMEOUT;PYTHON" "ARGS;LABELS;ENV" ${ARGN})
  if(NOT T_NAME OR NOT T_SCRIPT)
    message(FATAL_ERROR "h5pack_python_test: NAME and SCRIPT are required")
  endif()
  if(NOT T_PYTHON)
    set(T_PYTHON ${H5PACK_TEST_PYTHON})
  endif()
  if(NOT IS_ABSOLUTE "${T_SCRIPT}")
    set(T_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/${T_SCRIPT})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_PYTHON} ${T_SCRIPT} ${T_ARGS}
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  list(APPEND T_ENV "PYTHONPATH=${PROJECT_SOURCE_DIR}/python:${PROJECT_SOURCE_DIR}/tests/pyhelp")
  if(H5PACK_PYTHON_PRELOAD MATCHES "asan" AND "nosan" IN_LIST T_LABELS)
    list(REMOVE_ITEM T_LABELS nosan)
    list(APPEND T_ENV "LD_PRELOAD=${H5PACK_PYTHON_PRELOAD}" "ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1")
  endif()
  if(TARGET h5pack)
    list(APPEND T_ENV "H5PACK_LIBRARY=$<TARGET_FILE:h5pack>")
  endif()
  _h5pack_test_properties(${T_NAME} TIMEOUT "${T_TIMEOUT}" LABELS python ${T_LABELS} ENV ${T_ENV})
endfunction()

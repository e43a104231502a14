# What `pip install .` / `pip wheel .` installs (scikit-build-core sets SKBUILD; pyproject.toml): the
# Python package's own libh5pack next to its modules (site-packages/h5pack/libh5pack.so, which
# python/h5pack/_lib.py looks for first) and the programs in the environment's bin/. The programs link
# libh5pack statically (stats/CMakeLists.txt), so they need no path to the package's copy. One real file,
# no symlinks: a wheel would store each link as another copy. libh5pack's helper h5pack-isolate goes beside
# both the package's libh5pack.so and the programs (tools/CMakeLists.txt).
install(FILES $<TARGET_FILE:h5pack> DESTINATION h5pack RENAME libh5pack.so)
foreach(_prog h5pack_cli h5pack_stats)
  if(TARGET ${_prog})
    install(TARGETS ${_prog} RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
  endif()
endforeach()

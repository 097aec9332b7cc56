# Included by CMakeLists.txt when scikit-build-core builds the Python wheel
# (`pip install .`, `pip wheel .`, `python -m build`).
#
# pip builds every wheel in a new isolated environment, and scikit-build-core
# then clears CMake's cache and object files in the build folder, so each
# `pip install` or `pip wheel` after the first would compile the Swift engine
# again (a minute and a half on 2 cores) although nothing changed. The library
# the wheel carries depends only on the engine's sources, the build files and
# the compiler; so the first build keeps a stripped copy under the build
# folder, filed under a key made of all of those, and a later build with the
# same key installs that copy without compiling.
#
# YDBVIEW_PREBUILT_LIBRARY=/path/to/libydbview.so installs a library built
# elsewhere instead (a CMake release build, or one from a release), unchecked
# but for its existence: the package checks its version number when it loads
# it.
#
# Sets YDBVIEW_WHEEL_LIBRARY to the file to install when nothing needs
# compiling, else leaves it empty and sets YDBVIEW_WHEEL_CACHED to where the
# freshly built library is to be kept.

set(YDBVIEW_WHEEL_LIBRARY "")
set(engine_cache ${CMAKE_BINARY_DIR}/engine-cache)

if(DEFINED ENV{YDBVIEW_PREBUILT_LIBRARY})
  set(prebuilt "$ENV{YDBVIEW_PREBUILT_LIBRARY}")
  if(NOT EXISTS "${prebuilt}" OR IS_DIRECTORY "${prebuilt}")
    message(FATAL_ERROR "YDBVIEW_PREBUILT_LIBRARY=${prebuilt} is not a file; "
                        "unset it to compile the engine, or point it at a libydbview.so")
  endif()
  # The file itself, not a symlink to it (such as build/libydbview.so).
  file(REAL_PATH "${prebuilt}" prebuilt)
  message(STATUS "ydbview: installing the prebuilt ${prebuilt} (YDBVIEW_PREBUILT_LIBRARY); not compiling")
  set(YDBVIEW_WHEEL_LIBRARY "${prebuilt}")
  return()
endif()

# The key: the compiler's version, the build type and every file the
# library's build reads.
execute_process(COMMAND ${CMAKE_Swift_COMPILER} --version
                OUTPUT_VARIABLE swift_version ERROR_VARIABLE swift_version)
set(key_text "${swift_version}|${CMAKE_BUILD_TYPE}|${CMAKE_SYSTEM_PROCESSOR}|${CMAKE_C_COMPILER_VERSION}")
file(GLOB_RECURSE key_files RELATIVE ${CMAKE_SOURCE_DIR}
     ${CMAKE_SOURCE_DIR}/Sources/YDBView/* ${CMAKE_SOURCE_DIR}/Sources/YDBViewC/*
     ${CMAKE_SOURCE_DIR}/Sources/CSQLite/*)
list(SORT key_files)
list(APPEND key_files include/ydbview.h CMakeLists.txt cmake/wheel-engine.cmake
     cmake/without-mktemp-warning.sh cmake/wheel-progress.sh)
foreach(file IN LISTS key_files)
  file(SHA256 ${CMAKE_SOURCE_DIR}/${file} digest)
  string(APPEND key_text "\n${file} ${digest}")
endforeach()
string(SHA256 key "${key_text}")
set(cached ${engine_cache}/${key}/libydbview.so)

if(EXISTS ${cached})
  message(STATUS "ydbview: reusing the engine compiled earlier from the same sources (${cached})")
  set(YDBVIEW_WHEEL_LIBRARY ${cached})
  return()
endif()

# Only the newest build is kept: a stale copy is never used again.
file(REMOVE_RECURSE ${engine_cache})
set(YDBVIEW_WHEEL_CACHED ${cached})
message(STATUS "ydbview: compiling the Swift engine (a minute or two); "
               "a later build from the same sources reuses it")

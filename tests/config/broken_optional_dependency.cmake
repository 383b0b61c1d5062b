# cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=... -DCXX_COMPILER=...
#       -P broken_optional_dependency.cmake
#
# 1. oneDNN's real config with OpenCL unavailable (Debian's libdnnl-dev calls
#    find_package(OpenCL REQUIRED)), when this machine has oneDNN: configure only.
# 2. A fake oneDNN config that stops with FATAL_ERROR: configure, build
#    onednn_test and run it; it must report SKIPPED, not fail.
# Each configure must succeed and say in one line that oneDNN was skipped.
cmake_minimum_required(VERSION 3.25)
foreach(v SOURCE_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "broken_optional_dependency: -D${v}=... is required")
  endif()
endforeach()

# Only what the oneDNN test needs: no CUDA, no Python, a Debug build (compiles fastest).
set(common -S "${SOURCE_DIR}" -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    -DCMAKE_BUILD_TYPE=Debug -DRELUGRAD_CUDA=OFF -DRELUGRAD_BUILD_PYTHON=OFF
    -DRELUGRAD_BUILD_TOOLS=OFF -DRELUGRAD_INSTALL=OFF)

function(configure_expecting_skip build_dir what)
  execute_process(COMMAND "${CMAKE_COMMAND}" ${common} -B "${build_dir}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: configure failed (rc=${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCH "relugrad: oneDNN peer \\(onednn_test reports SKIPPED\\) skipped: [^\n]*" line "${out}")
  if(NOT line)
    message(FATAL_ERROR "${what}: configure passed but never said that oneDNN was skipped:\n${out}")
  endif()
  if(out MATCHES "oneDNN [0-9.]+ found")
    message(FATAL_ERROR "${what}: configure claims oneDNN was found:\n${out}")
  endif()
  message(STATUS "${what}: configure went on: ${line}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. The real package, its OpenCL dependency made unavailable.
find_file(real_dnnl_config dnnl-config.cmake PATHS /usr/lib/x86_64-linux-gnu/cmake/dnnl
          /usr/lib/aarch64-linux-gnu/cmake/dnnl /usr/local/lib/cmake/dnnl NO_DEFAULT_PATH)
if(real_dnnl_config)
  file(READ "${real_dnnl_config}" real_text)
  if(real_text MATCHES "find_package\\(OpenCL")
    configure_expecting_skip("${WORK_DIR}/real-without-opencl" "installed oneDNN without OpenCL"
                             -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=ON)
  else()
    message(STATUS "installed oneDNN does not need OpenCL: case 1 has nothing to break")
  endif()
else()
  message(STATUS "no installed oneDNN: case 1 has nothing to break (case 2 still runs)")
endif()

# 2. A config that fails outright.
set(fake "${WORK_DIR}/fake-dnnl")
file(WRITE "${fake}/dnnl-config.cmake"
     "message(FATAL_ERROR \"fake oneDNN config: a dependency of this package is missing\")\n")
file(WRITE "${fake}/dnnl-config-version.cmake"
     "set(PACKAGE_VERSION 9.9.9)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
set(build "${WORK_DIR}/fake")
configure_expecting_skip("${build}" "fake failing oneDNN config" "-Ddnnl_DIR=${fake}")

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" --target onednn_test -j 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build of onednn_test failed (rc=${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND "${build}/tests/onednn/onednn_test"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\\[  SKIPPED \\] Onednn\\.ReluBackwardMatchesPreset")
  message(FATAL_ERROR "onednn_test without oneDNN must report SKIPPED and exit 0 (rc=${rc}):\n${out}\n${err}")
endif()
message(STATUS "onednn_test built without oneDNN and reported itself SKIPPED")
file(REMOVE_RECURSE "${WORK_DIR}")

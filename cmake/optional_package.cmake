# relugrad_find_optional(<Package> LABEL <words> [COMPONENTS <c>...])
#
# Finds an optional CONFIG package (a peer or an optional backend) so that the
# package's own config file can never abort relugrad's configure. A package's
# config may call find_package(<Dep> REQUIRED) for something it merely
# recommends (Debian's oneDNN config needs OpenCL), and a FATAL_ERROR there
# cannot be caught inside one CMake process. So the package is first found in
# a throw-away CMake process (the probe); only when the probe succeeds is it
# found again here, where it then cannot fail.
#
# Sets <Package>_FOUND in the caller's scope. When the package is missing or
# unusable, prints one line: "relugrad: <label> skipped: <why>". A probe that
# succeeded is not repeated while <Package>_DIR, CMAKE_PREFIX_PATH and the
# disabled packages stay the same; a failed one is repeated at every
# configure (the missing piece may have been installed since). The probe's
# full log stays in <build>/optional-probes/<Package>/probe.log.
include_guard(GLOBAL)

function(relugrad_find_optional package)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL" "COMPONENTS")
  if(NOT arg_LABEL)
    set(arg_LABEL "${package}")
  endif()
  if(CMAKE_DISABLE_FIND_PACKAGE_${package})
    message(STATUS "relugrad: ${arg_LABEL} skipped: CMAKE_DISABLE_FIND_PACKAGE_${package} is set")
    set(${package}_FOUND FALSE PARENT_SCOPE)
    return()
  endif()

  _relugrad_probe_disables(disables)
  set(key "${${package}_DIR}|${CMAKE_PREFIX_PATH}|${arg_COMPONENTS}|${disables}")
  if(NOT RELUGRAD_PROBE_${package}_OK OR NOT RELUGRAD_PROBE_${package}_KEY STREQUAL key)
    _relugrad_probe_package(${package} "${arg_COMPONENTS}" ok why)
    set(RELUGRAD_PROBE_${package}_KEY "${key}" CACHE INTERNAL "inputs of the ${package} probe")
    set(RELUGRAD_PROBE_${package}_OK ${ok} CACHE INTERNAL "whether ${package}'s config loads")
    set(RELUGRAD_PROBE_${package}_WHY "${why}" CACHE INTERNAL "why ${package} was skipped")
  endif()

  if(NOT RELUGRAD_PROBE_${package}_OK)
    get_property(said GLOBAL PROPERTY RELUGRAD_PROBE_${package}_SAID)
    if(NOT said)
      message(STATUS "relugrad: ${arg_LABEL} skipped: ${RELUGRAD_PROBE_${package}_WHY}")
      set_property(GLOBAL PROPERTY RELUGRAD_PROBE_${package}_SAID TRUE)
    endif()
    set(${package}_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  if(arg_COMPONENTS)
    find_package(${package} CONFIG QUIET COMPONENTS ${arg_COMPONENTS})
  else()
    find_package(${package} CONFIG QUIET)
  endif()
  set(${package}_FOUND ${${package}_FOUND} PARENT_SCOPE)
  set(${package}_VERSION ${${package}_VERSION} PARENT_SCOPE)
endfunction()

# The caller's CMAKE_DISABLE_FIND_PACKAGE_<Dep> settings, as -D arguments:
# they apply inside the probe too (a package whose config needs a disabled
# dependency is unusable here).
function(_relugrad_probe_disables out_var)
  get_cmake_property(names VARIABLES)
  set(out "")
  foreach(name IN LISTS names)
    if(name MATCHES "^CMAKE_DISABLE_FIND_PACKAGE_" AND ${name})
      list(APPEND out "-D${name}=ON")
    endif()
  endforeach()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Runs find_package(<package> CONFIG REQUIRED) in a separate CMake process
# with this project's compilers, search path and <package>_DIR. Sets
# <ok_var> to TRUE/FALSE and <why_var> to the first line of the reason.
function(_relugrad_probe_package package components ok_var why_var)
  set(dir "${CMAKE_BINARY_DIR}/optional-probes/${package}")
  file(REMOVE_RECURSE "${dir}")
  set(find "find_package(${package} CONFIG REQUIRED)")
  if(components)
    string(REPLACE ";" " " components "${components}")
    set(find "find_package(${package} CONFIG REQUIRED COMPONENTS ${components})")
  endif()
  file(WRITE "${dir}/src/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.25)\nproject(relugrad_probe LANGUAGES C CXX)\n${find}\n")
  set(args -S "${dir}/src" -B "${dir}/build" -G "${CMAKE_GENERATOR}"
      "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")
  if(${package}_DIR)
    list(APPEND args "-D${package}_DIR=${${package}_DIR}")
  endif()
  _relugrad_probe_disables(disables)
  list(APPEND args ${disables})
  if(CMAKE_PREFIX_PATH)
    string(REPLACE ";" "\\;" prefix "${CMAKE_PREFIX_PATH}")
    list(APPEND args "-DCMAKE_PREFIX_PATH=${prefix}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(WRITE "${dir}/probe.log" "${out}\n${err}")
  if(rc EQUAL 0)
    set(${ok_var} TRUE PARENT_SCOPE)
    set(${why_var} "" PARENT_SCOPE)
    return()
  endif()
  # The first informative line of CMake's error: "Could NOT find ...",
  # "Could not find a package configuration file ...", or a config's own message.
  set(why "its CMake config failed (${dir}/probe.log)")
  string(REGEX REPLACE "\n[ \t]*" " " flat "${err}")
  if(flat MATCHES "Could not find a package configuration file provided by \"${package}\"")
    set(why "not installed (no ${package}Config.cmake or ${package}-config.cmake found)")
  elseif(flat MATCHES "(Could NOT find [^)]*\\))")
    set(why "its CMake config failed: ${CMAKE_MATCH_1} (${dir}/probe.log)")
  elseif(flat MATCHES "CMake Error at ([^:]*):[0-9]+ \\([a-z_]*\\): (.*)")
    set(where "${CMAKE_MATCH_1}")
    string(REGEX REPLACE " *(Call Stack|-- Configuring incomplete).*" "" what "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "\\. .*" "" what "${what}")
    set(why "its CMake config failed at ${where}: ${what} (${dir}/probe.log)")
  endif()
  set(${ok_var} FALSE PARENT_SCOPE)
  set(${why_var} "${why}" PARENT_SCOPE)
endfunction()

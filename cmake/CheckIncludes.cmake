# SPDX-License-Identifier: GPL-3.0-or-later
# cmake -DSOURCE_DIR=<root> -P cmake/CheckIncludes.cmake
cmake_minimum_required(VERSION 3.25)
# The dependency rule for #include lines (the link check in DependencyRule.cmake cannot
# see a header-only use): every `#include "<module path>/..."` in a module's sources must
# name its own module or one the rule allows. An include relative to the including file
# ("../wire/dns_name.hpp" in cache/, the form installed headers use) is read as the path
# it reaches from the source root. Run by ctest (dependency_rule_includes).
include(${CMAKE_CURRENT_LIST_DIR}/DependencyRule.cmake)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<source root> -P CheckIncludes.cmake")
endif()
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
  ${SOURCE_DIR}/wire/*.[ch]pp ${SOURCE_DIR}/cache/*.[ch]pp ${SOURCE_DIR}/common/*.[ch]pp ${SOURCE_DIR}/dns/*.[ch]pp ${SOURCE_DIR}/policy/*.[ch]pp ${SOURCE_DIR}/dnssec/*.[ch]pp ${SOURCE_DIR}/sim/*.[ch]pp
  ${SOURCE_DIR}/workers/*.[ch]pp ${SOURCE_DIR}/admin/*.[ch]pp ${SOURCE_DIR}/bench/*.[ch]pp
  ${SOURCE_DIR}/app/*.[ch]pp)
set(errors "")
set(checked 0)
foreach(src IN LISTS sources)
  dnsarena_module_of_path(${src} from)
  if(NOT from)
    continue()
  endif()
  file(STRINGS ${SOURCE_DIR}/${src} includes REGEX "^#include \"[^\"]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    if(header MATCHES "^\\.\\.?/")
      cmake_path(GET src PARENT_PATH src_dir)
      cmake_path(SET header NORMALIZE "${src_dir}/${header}")
    endif()
    dnsarena_module_of_path(${header} to)
    if(NOT to)
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    dnsarena_rule_allows(${from} ${to} ok)
    if(NOT ok)
      string(APPEND errors "  ${src} (module ${from}) includes ${header} (module ${to})\n")
    endif()
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "dependency rule broken by includes (cmake/DependencyRule.cmake):\n${errors}")
endif()
list(LENGTH sources files)
message(STATUS "dependency rule: ${checked} cross-module includes in ${files} files, all allowed")

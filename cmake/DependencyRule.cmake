# The dependency rule between dnsarena's modules (README: Architecture), in one place:
#
#   cache <- dns <- workers;  cache, dns <- sim/*;  workers + sim <- validate, bench;
#   cache, dns <- admin (operator commands on a live cache);  everything <- app
#
# common/ (child processes, loopback sockets, strict YAML, finding programs) sits beside
# cache/ at the bottom: every module above cache/ may use it; cache/ may not (it is
# installed on its own). dns/ (the one DNS wire layer over libknot) uses cache/ (names,
# address prefixes) and common/ (Bytes). Inside sim/, workload is the base and needs no
# wire code; fleet uses layouts for its calibration; traffic, layouts and fleet do not use
# each other otherwise.
#
# DNSARENA_ALLOWED_<module>: the modules <module> may link or include directly.
set(DNSARENA_MODULES cache common dns workload traffic layouts fleet workers admin validate bench app)
set(DNSARENA_ALLOWED_cache "")
set(DNSARENA_ALLOWED_common "")
set(DNSARENA_ALLOWED_dns cache common)
set(DNSARENA_ALLOWED_workload cache common)
set(DNSARENA_ALLOWED_traffic workload dns cache common)
set(DNSARENA_ALLOWED_layouts workload dns cache common)
set(DNSARENA_ALLOWED_fleet layouts workload dns cache common)
set(DNSARENA_ALLOWED_workers dns cache common)
set(DNSARENA_ALLOWED_admin dns cache common)
set(DNSARENA_ALLOWED_validate fleet traffic layouts workload workers dns cache common)
set(DNSARENA_ALLOWED_bench fleet traffic layouts workload workers dns cache common)
set(DNSARENA_ALLOWED_app validate bench fleet traffic layouts workload workers admin dns cache common)

# The module a source path (relative to the source root) belongs to, or "" (tests, ...).
function(dnsarena_module_of_path path out)
  set(module "")
  if(path MATCHES "^sim/(workload|traffic|layouts|fleet|validate)/")
    set(module ${CMAKE_MATCH_1})
  elseif(path MATCHES "^(cache|common|dns|workers|admin|bench|app)/")
    set(module ${CMAKE_MATCH_1})
  endif()
  set(${out} "${module}" PARENT_SCOPE)
endfunction()

# Sets out to TRUE when module `from` may depend on module `to`.
function(dnsarena_rule_allows from to out)
  if(from STREQUAL to OR to IN_LIST DNSARENA_ALLOWED_${from})
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Marks a library or executable as (part of) a module, for the check below.
function(dnsarena_module target module)
  if(NOT module IN_LIST DNSARENA_MODULES)
    message(FATAL_ERROR "dnsarena_module(${target} ${module}): unknown module (cmake/DependencyRule.cmake)")
  endif()
  set_property(TARGET ${target} PROPERTY DNSARENA_MODULE ${module})
  set_property(GLOBAL APPEND PROPERTY DNSARENA_MODULE_TARGETS ${target})
endfunction()

# Run once every target exists (end of the top-level CMakeLists.txt): fails the
# configuration when a module target links a module the rule does not allow, naming both.
function(dnsarena_check_dependency_rule)
  get_property(targets GLOBAL PROPERTY DNSARENA_MODULE_TARGETS)
  set(errors "")
  foreach(t IN LISTS targets)
    get_target_property(from ${t} DNSARENA_MODULE)
    set(links "")
    foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(v ${t} ${prop})
      if(v)
        list(APPEND links ${v})
      endif()
    endforeach()
    list(TRANSFORM links REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2")
    list(REMOVE_DUPLICATES links)
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2" link "${link}")
      if(NOT TARGET "${link}")
        continue()
      endif()
      get_target_property(aliased ${link} ALIASED_TARGET)
      if(aliased)
        set(link ${aliased})
      endif()
      get_target_property(to ${link} DNSARENA_MODULE)
      if(NOT to)
        continue()
      endif()
      dnsarena_rule_allows(${from} ${to} ok)
      if(NOT ok)
        string(APPEND errors "  ${t} (module ${from}) links ${link} (module ${to}); ${from} may link only: "
                             "${DNSARENA_ALLOWED_${from}}\n")
      endif()
    endforeach()
  endforeach()
  if(errors)
    message(FATAL_ERROR "dependency rule broken (cmake/DependencyRule.cmake):\n${errors}")
  endif()
endfunction()

# SPDX-License-Identifier: GPL-3.0-or-later
# The dependency rule between dnsarena's modules (README: Architecture), in one place:
#
#   wire <- cache <- dns <- policy <- workers;  wire, common, dns <- dnssec <- recursion <- workers;  cache, dns <- sim/*;
#   workers + sim <- validate, lab_bench;
#   workload, dns + workers' dnstap schema <- sim/fit;
#   cache, dns <- admin (operator commands on a live cache);  cache, workload <- bench;
#   the daemon's modules <- app (`dnsarena`);  everything <- lab_app (`dnsarena-lab`)
#
# The modules in layers, lowest last: a module may use only modules of lower layers, and
# only those its DNSARENA_ALLOWED_ list below names.
#
#   app  lab_app                      the two programs
#   validate  lab_bench  admin  bench
#   workers  sim/fleet  sim/fit
#   recursion
#   sim/traffic  sim/layouts  policy  dnssec
#   dns  sim/workload
#   cache  common
#   wire
#
# wire/ (the DNS wire format without libknot: names, compression, address prefixes, the
# format's numbers) is the bottom: it uses nothing, and every module but common/ may use
# it. It links no libknot, nor does cache/ (DNSARENA_FORBIDDEN_ below): both are installed
# as the cache library. common/ (child processes, loopback sockets, strict YAML, finding
# programs) sits beside cache/: every module above cache/ may use it; cache/ and wire/ may
# not. dns/ (the one DNS wire layer over libknot) uses wire/, common/ (Bytes) and cache/
# for one thing: the client query parser builds the cache key (cache/cache_key.hpp) in the
# same pass that validates and copies the question name (dns/fast_query_parser.hpp), so a
# worker's hit reads the name once. Inside sim/, workload is the base and needs no DNS
# parsing; fleet uses layouts for its calibration; traffic, layouts and fleet do not use
# each other otherwise. fit (profiles fitted to dnstap captures) reads dnstap with the
# decoder protoc-c generates from workers/dnstap.proto (dnsarena_dnstap_proto, a target of
# workers/): that generated code is all it takes of workers/.
#
# dnssec/ (DNSSEC validation: RRSIG verification and DS matching through libdnssec,
# NSEC / NSEC3 proofs, trust anchors read by libzscanner, the chain of trust as a state
# machine that asks its caller for DS and DNSKEY sets) uses wire/ (names), common/ (Bytes)
# and may use dns/; it does no I/O and never touches the cache segment. workers/ call it
# in forwarding mode, and the recursive mode will.
#
# recursion/ (iterative resolution from root hints as a state machine: it says which query
# to send to which authoritative address and takes the reply; no I/O, no segment) reads
# replies through dnssec/'s RRset parser and names, dns/ and wire/; workers/ drive it
# from their event loop, the lab's tests and benches from a synchronous driver.
#
# policy/ (response policy zones and local data compiled into a read-only image) uses
# wire/ (names), dns/ (the query it answers, EDE) and common/; workers/ applies it before
# the cache, and app/ offers its bench. It never touches the cache segment.
#
# Two programs. app/ (`dnsarena`, the daemon the unit runs) is serve, the operator
# commands and the cache benchmark (bench/: the cache and workload's entry mix, nothing
# else of sim/). app/lab/ (`dnsarena-lab`) is the simulator and the lab benches
# (bench/lab/: the service against other resolvers, under attack, kill -9 torture).
#
# DNSARENA_ALLOWED_<module>: the modules <module> may link or include directly.
# DNSARENA_FORBIDDEN_<module>: modules and external targets <module> may not carry at all,
# not even through a module it may link (checked on the whole link closure).
# Every library and program under a module's directory must be marked with
# dnsarena_module() (checked too), so the rule sees every target.
set(DNSARENA_MODULES wire cache common dns policy dnssec recursion workload traffic layouts fleet fit workers admin validate bench lab_bench
    app lab_app)
set(DNSARENA_ALLOWED_wire "")
set(DNSARENA_ALLOWED_cache wire)
set(DNSARENA_ALLOWED_common "")
set(DNSARENA_ALLOWED_dns cache wire common)
set(DNSARENA_ALLOWED_policy dns wire common)
set(DNSARENA_ALLOWED_dnssec dns wire common)
set(DNSARENA_ALLOWED_recursion dnssec dns wire common)
set(DNSARENA_ALLOWED_workload cache wire common)
set(DNSARENA_ALLOWED_traffic workload dns cache wire common)
set(DNSARENA_ALLOWED_layouts workload dns cache wire common)
set(DNSARENA_ALLOWED_fleet layouts workload dns cache wire common)
set(DNSARENA_ALLOWED_fit workers workload dns cache wire common)
set(DNSARENA_ALLOWED_workers policy recursion dnssec dns cache wire common)
set(DNSARENA_ALLOWED_admin dns cache wire common)
set(DNSARENA_ALLOWED_validate fleet traffic layouts workload workers dns cache wire common)
set(DNSARENA_ALLOWED_bench workload cache wire common)
set(DNSARENA_ALLOWED_lab_bench workers policy recursion dnssec traffic workload dns cache wire common)
set(DNSARENA_ALLOWED_app bench workers policy recursion dnssec admin dns cache wire common)
set(DNSARENA_ALLOWED_lab_app lab_bench validate fleet fit traffic layouts workload workers recursion dnssec dns cache wire common)
# The cache library and the wire code under it are installed for other programs: no libknot.
set(DNSARENA_FORBIDDEN_wire PkgConfig::KNOT)
set(DNSARENA_FORBIDDEN_cache PkgConfig::KNOT)
# The daemon: no simulator (only workload's entry mix, for the cache benchmark), no lab
# bench (raw sockets), no TBB or MPI (the fleet model's parallel runs).
set(DNSARENA_FORBIDDEN_app traffic layouts fleet fit validate lab_bench lab_app TBB::tbb MPI::MPI_C MPI::MPI_CXX)

# The module a source path (relative to the source root) belongs to, or "" (tests, ...).
function(dnsarena_module_of_path path out)
  set(module "")
  if(path MATCHES "^sim/(workload|traffic|layouts|fleet|fit|validate)/")
    set(module ${CMAKE_MATCH_1})
  elseif(path MATCHES "^(bench|app)/lab/")
    set(module lab_${CMAKE_MATCH_1})
  elseif(path MATCHES "^(wire|cache|common|dns|policy|dnssec|recursion|workers|admin|bench|app)/")
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

# The targets `t` links directly (LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES, generator
# expressions BUILD_INTERFACE and LINK_ONLY unwrapped, aliases resolved), in `out`;
# entries that are not targets (-lm, flags) are left out.
function(dnsarena_direct_links t out)
  set(links "")
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(v ${t} ${prop})
    if(v)
      list(APPEND links ${v})
    endif()
  endforeach()
  set(targets "")
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2" link "${link}")
    if(NOT TARGET "${link}")
      continue()
    endif()
    get_target_property(aliased ${link} ALIASED_TARGET)
    if(aliased)
      set(link ${aliased})
    endif()
    list(APPEND targets ${link})
  endforeach()
  list(REMOVE_DUPLICATES targets)
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

# Appends to `errors_var` one line for every module or target in DNSARENA_FORBIDDEN_<module
# of t> that t carries through its whole link closure, with the chain that brings it in.
function(dnsarena_check_forbidden t errors_var)
  get_target_property(from ${t} DNSARENA_MODULE)
  set(forbidden ${DNSARENA_FORBIDDEN_${from}})
  if(NOT forbidden)
    return()
  endif()
  set(errors "${${errors_var}}")
  # chain_<id>: how t reaches a target ("t -> a -> b"), <id> its name as a C identifier.
  set(queue ${t})
  set(seen ${t})
  string(MAKE_C_IDENTIFIER "${t}" id)
  set(chain_${id} ${t})
  while(queue)
    list(POP_FRONT queue current)
    string(MAKE_C_IDENTIFIER "${current}" current_id)
    dnsarena_direct_links(${current} links)
    foreach(link IN LISTS links)
      if(link IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${link})
      list(APPEND queue ${link})
      string(MAKE_C_IDENTIFIER "${link}" id)
      set(chain_${id} "${chain_${current_id}} -> ${link}")
      get_target_property(to ${link} DNSARENA_MODULE)
      set(what ${link})
      if(to)
        string(APPEND what " (module ${to})")
      endif()
      if(link IN_LIST forbidden OR (to AND to IN_LIST forbidden))
        string(APPEND errors "  ${t} (module ${from}) carries ${what}: ${chain_${id}}; "
                             "${from} may carry none of: ${forbidden}\n")
      endif()
    endforeach()
  endwhile()
  set(${errors_var} "${errors}" PARENT_SCOPE)
endfunction()

# The build targets (libraries and programs) defined in `dir` and the directories below it.
function(dnsarena_build_targets_below dir out)
  get_property(defined DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(targets "")
  foreach(t IN LISTS defined)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY|EXECUTABLE)$")
      list(APPEND targets ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    dnsarena_build_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

# Appends to `errors_var` one line for every build target that lies in a module's directory
# (dnsarena_module_of_path) but is not marked as that module: the rule must see every one.
function(dnsarena_check_every_target_marked errors_var)
  set(errors "${${errors_var}}")
  dnsarena_build_targets_below(${CMAKE_SOURCE_DIR} targets)
  foreach(t IN LISTS targets)
    get_target_property(dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${dir})
    dnsarena_module_of_path("${rel}/" expected)
    if(NOT expected)
      continue()
    endif()
    get_target_property(marked ${t} DNSARENA_MODULE)
    if(NOT marked)
      string(APPEND errors "  ${t} (in ${rel}/) is not marked: dnsarena_module(${t} ${expected})\n")
    elseif(NOT marked STREQUAL expected)
      string(APPEND errors "  ${t} (in ${rel}/) is marked as module ${marked}, not ${expected}\n")
    endif()
  endforeach()
  set(${errors_var} "${errors}" PARENT_SCOPE)
endfunction()

# Run once every target exists (end of the top-level CMakeLists.txt): fails the
# configuration when a module target links a module the rule does not allow, or carries
# (however indirectly) something its module's DNSARENA_FORBIDDEN_ list names, naming both;
# or when a library or program in a module's directory is not marked as that module.
function(dnsarena_check_dependency_rule)
  get_property(targets GLOBAL PROPERTY DNSARENA_MODULE_TARGETS)
  set(errors "")
  dnsarena_check_every_target_marked(errors)
  foreach(t IN LISTS targets)
    get_target_property(from ${t} DNSARENA_MODULE)
    dnsarena_direct_links(${t} links)
    foreach(link IN LISTS links)
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
    dnsarena_check_forbidden(${t} errors)
  endforeach()
  if(errors)
    message(FATAL_ERROR "dependency rule broken (cmake/DependencyRule.cmake):\n${errors}")
  endif()
endfunction()

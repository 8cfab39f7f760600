# SPDX-License-Identifier: GPL-3.0-or-later
# Installing and packaging the service (docs/operator-guide.md: Running as a service).
#
# `cmake --install build [--prefix P]` installs two components, one Debian package each.
# Component daemon (package dnsarena):
#   P/bin/dnsarena                             the daemon (app/CMakeLists.txt)
#   P/lib/libdnsarena-{cache,wire}.a, P/include/dnsarena/{cache,wire}/, CMake and
#   pkg-config files                           the cache library (cache/, wire/CMakeLists.txt)
#   P/etc/dnsarena/serve.yaml                  the config the unit starts with (an example)
#   P/share/doc/dnsarena/examples/configs/serve.yaml, README.md
#   P/lib/systemd/system/dnsarena.service      the unit (the daemon only), P's paths filled in
#   P/lib/sysusers.d/dnsarena.conf             its dedicated user (systemd-sysusers)
#   P/share/dnsarena/grafana/dnsarena.json     the Grafana dashboard
# Component lab (package dnsarena-lab, which depends on dnsarena):
#   P/bin/dnsarena-lab                         the simulator and lab benches (app/lab/)
#   P/share/doc/dnsarena-lab/examples/configs/ the simulator's configs: traffic profiles,
#                                              datacenters, fleets, rollout plans
# `cd build && cpack -G DEB` builds dnsarena_<version>_<arch>.deb and
# dnsarena-lab_<version>_<arch>.deb (prefix /usr, config in /etc); dnsarena's postinst
# creates the user with systemd-sysusers.
# The unit for this build's configured prefix, for the tests (tests/service).
configure_file(${PROJECT_SOURCE_DIR}/contrib/systemd/dnsarena.service.in ${PROJECT_BINARY_DIR}/dnsarena.service @ONLY)
# The installed unit and config follow the prefix given at install time (`--prefix P`,
# or /usr for the .deb): they are placed by install-time code, not at configuration.
# Prefix /usr: /etc/dnsarena and /lib/systemd/system (Debian's layout); else P/etc and
# P/lib/systemd/system.
install(CODE "set(DNSARENA_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")")
# Install code runs with the current directory of whoever installs: stage in the build tree.
install(CODE "set(DNSARENA_BINARY_DIR \"${PROJECT_BINARY_DIR}\")")
install(CODE [[
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(CMAKE_INSTALL_FULL_SYSCONFDIR /etc)
    set(unit_dir /lib/systemd/system)
  else()
    set(CMAKE_INSTALL_FULL_SYSCONFDIR ${CMAKE_INSTALL_PREFIX}/etc)
    set(unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
  endif()
  set(CMAKE_INSTALL_FULL_BINDIR ${CMAKE_INSTALL_PREFIX}/bin)
  set(CMAKE_INSTALL_FULL_DOCDIR ${CMAKE_INSTALL_PREFIX}/share/doc/dnsarena)
  set(staged ${DNSARENA_BINARY_DIR}/install-staging/dnsarena.service)
  configure_file(${DNSARENA_SOURCE_DIR}/contrib/systemd/dnsarena.service.in ${staged} @ONLY)
  file(INSTALL ${staged} DESTINATION ${unit_dir})
  file(INSTALL ${DNSARENA_SOURCE_DIR}/configs/serve.yaml DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/dnsarena)
]])
install(FILES ${PROJECT_SOURCE_DIR}/contrib/systemd/dnsarena.sysusers DESTINATION lib/sysusers.d RENAME dnsarena.conf)
install(FILES ${PROJECT_SOURCE_DIR}/configs/serve.yaml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/dnsarena-lab/examples/configs
  COMPONENT lab PATTERN serve.yaml EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
# The licence: GPL-3.0-or-later (libknot is), the text and the Debian copyright file.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/contrib/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/contrib/debian/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/dnsarena-lab
  COMPONENT lab)
install(FILES ${PROJECT_SOURCE_DIR}/contrib/grafana/dnsarena.json DESTINATION ${CMAKE_INSTALL_DATADIR}/dnsarena/grafana)

set(CPACK_PACKAGE_NAME dnsarena)
# One .deb per install component: dnsarena (the daemon) and dnsarena-lab.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL daemon lab)
set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME dnsarena)
set(CPACK_DEBIAN_LAB_PACKAGE_NAME dnsarena-lab)
set(CPACK_DEBIAN_LAB_PACKAGE_DEPENDS "dnsarena (= ${PROJECT_VERSION})")
# Each package's description: its first line is the Debian synopsis (so no
# CPACK_PACKAGE_DESCRIPTION_SUMMARY, which CPack would put first in both).
set(CPACK_COMPONENT_DAEMON_DESCRIPTION "Compact DNS answer cache in shared memory, shared by resolver workers
dnsarena serve (a supervisor and resolver workers sharing one cache segment), the
operator commands (stats, check, flush, dump, restore, top, migrate), the cache
benchmark, the systemd unit and the cache library.")
set(CPACK_COMPONENT_LAB_DESCRIPTION "Fleet simulator and lab benchmarks of the dnsarena DNS cache
dnsarena-lab: layout experiments, fleet rollout and capacity tuning (TBB, MPI), the
synthetic upstream and load client, sim validate, and the benchmarks that run the
dnsarena daemon against other resolvers, under attack, and under kill -9.")
set(CPACK_PACKAGE_VENDOR "dnsarena")
set(CPACK_PACKAGE_CONTACT "dnsarena maintainers <dnsarena@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)  # with CPACK_SET_DESTDIR: the prefix the install step runs with
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends from the linked libraries (dpkg-shlibdeps)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/contrib/debian/postinst
  ${PROJECT_SOURCE_DIR}/contrib/debian/conffiles)
set(CPACK_SET_DESTDIR ON)  # install with DESTDIR=staging and prefix /usr: /etc stays /etc
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

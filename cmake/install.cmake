# install.cmake - `cmake --install` layout and the Debian package (CPack DEB).
#
#   bin/tabvisor                          the server, on PATH
#   libexec/tabvisor/tabvisor-worker      helpers it starts; found at TV_LIBEXEC_REL from
#   libexec/tabvisor/tabvisor-relay       its own directory (supervisor/config.c)
#   share/tabvisor/extension/             the Chrome extension of extension mode, unpacked
#   share/doc/tabvisor/                   README.md and docs/
#   share/tabvisor/systemd/               the unit and its notes (deploy/systemd/)
#
# The helpers live in libexec, not bin: nobody runs them by hand, and a name on PATH
# would invite that.

install(TARGETS tabvisor RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tabvisor-worker tabvisor-relay
  RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tabvisor)
# The build tree's copy (tv_extension keeps it in step with extension/).
install(DIRECTORY ${CMAKE_BINARY_DIR}/extension/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tabvisor/extension)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES deploy/systemd/tabvisor.service DESTINATION ${CMAKE_INSTALL_DATADIR}/tabvisor/systemd)

# --- Debian package: `cpack -G DEB` in an optimised build directory ---
set(CPACK_PACKAGE_NAME tabvisor)
set(CPACK_PACKAGE_VENDOR tabvisor)
set(CPACK_PACKAGE_CONTACT "tabvisor maintainers <tabvisor@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Browser automation MCP server (headless Chromium)")
set(CPACK_PACKAGE_INSTALL_DIRECTORY /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION web)
# Debian 12 package names of the shared libraries the binaries link (`dpkg -S` on what
# `ldd` resolves; deploy/package-test.sh checks the list still covers them), and the
# browser: the headless shell is the default and about 10 MB lighter per session.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libc6 (>= 2.36), libnng1 (>= 1.5), libmsgpackc2 (>= 4.0), libwebsockets17 (>= 4.1), \
libjansson4 (>= 2.14), libssl3 (>= 3.0), chromium-headless-shell | chromium")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "tabvisor serves browser automation over the Model Context Protocol (stdio or HTTP).\n\
A supervisor starts one confined worker per browser session beside a shared headless\n\
Chromium; an optional relay and extension drive the user's own Chrome.")
set(CPACK_STRIP_FILES ON) # debug info stays in the build tree
include(CPack)

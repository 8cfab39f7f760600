#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The library boundary: the cache library installed into a scratch prefix (component
# daemon) must be enough for examples/cache_lookup, through CMake and through pkg-config,
# and every installed header must compile on its own from there (so the installed set
# holds each header's includes). Only what is installed is visible: the example is built
# out of the tree, against the prefix alone.
# Env: BUILD_DIR (a built tree), SOURCE_DIR (the source root), CMAKE (cmake), CXX (compiler),
# USER_FLAGS (compile and link flags the library's users need: a sanitizer build's).
set -euo pipefail
USER_FLAGS=${USER_FLAGS:-}
prefix=$(mktemp -d /tmp/dnsarena-prefix.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$CMAKE" --install "$BUILD_DIR" --prefix "$prefix" --component daemon > "$prefix/install.log"
include_dir="$prefix/include"
[[ -f $include_dir/dnsarena/cache/cache.hpp ]] || fail "no include/dnsarena/cache/cache.hpp in the prefix"
echo "installed headers:"
(cd "$include_dir" && find . -name '*.hpp' | sed 's|^\./||' | sort)

# Each installed header alone, against the prefix only.
for h in $(cd "$include_dir" && find dnsarena -name '*.hpp' | sort); do
  echo "#include <$h>" > "$prefix/one_header.cpp"
  "$CXX" -std=c++20 $USER_FLAGS -fsyntax-only -I"$include_dir" "$prefix/one_header.cpp" || fail "$h does not compile alone"
done

# The example through CMake (find_package(dnsarena CONFIG)).
"$CMAKE" -S "$SOURCE_DIR/examples/cache_lookup" -B "$prefix/build-example" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$USER_FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$USER_FLAGS" \
  -DCMAKE_PREFIX_PATH="$prefix" > "$prefix/example-configure.log" \
  || { cat "$prefix/example-configure.log"; fail "the example does not configure"; }
"$CMAKE" --build "$prefix/build-example" > "$prefix/example-build.log" \
  || { cat "$prefix/example-build.log"; fail "the example does not build"; }
"$prefix/build-example/cache_lookup"

# The same through pkg-config.
pc_dir=$(dirname "$(find "$prefix" -name dnsarena-cache.pc)")
"$CXX" -std=c++20 $USER_FLAGS "$SOURCE_DIR/examples/cache_lookup/main.cpp" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs dnsarena-cache) -o "$prefix/cache_lookup_pc"
"$prefix/cache_lookup_pc"
echo "installed library: every header compiles alone; the example builds and runs (CMake, pkg-config)"

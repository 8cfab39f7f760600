#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `cmake --install` into a temporary prefix, then the installed programs run from there.
set -euo pipefail
prefix=$(mktemp -d /tmp/dnsarena-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$BUILD_DIR" --prefix "$prefix" >/dev/null
version=$("$prefix/bin/dnsarena" --version)
echo "$version"
[[ $version == "dnsarena "[0-9]*.[0-9]*.[0-9]*" (segment format "[0-9]*")" ]] || { echo "unexpected --version: $version"; exit 1; }
lab_version=$("$prefix/bin/dnsarena-lab" --version)
[[ $lab_version == "dnsarena-lab "* ]] || { echo "unexpected dnsarena-lab --version: $lab_version"; exit 1; }
for f in etc/dnsarena/serve.yaml lib/sysusers.d/dnsarena.conf share/dnsarena/grafana/dnsarena.json \
         share/doc/dnsarena/examples/configs/serve.yaml include/dnsarena/cache/cache.hpp \
         share/doc/dnsarena-lab/examples/configs/fleet/example.yaml; do
  [[ -f $prefix/$f ]] || { echo "missing after install: $f"; exit 1; }
done
unit=$(find "$prefix" -name dnsarena.service)
[[ -n $unit ]] || { echo "the unit was not installed"; exit 1; }
ls "$prefix"/lib*/libdnsarena-cache.a >/dev/null
# The unit names the installed program and config.
grep -q "^ExecStart=$prefix/bin/dnsarena serve --config $prefix/etc/dnsarena/serve.yaml$" "$unit" \
  || { echo "ExecStart does not name the installed paths:"; grep ExecStart "$unit"; exit 1; }
# The installed config is valid for the installed program.
"$prefix/bin/dnsarena" serve --check-config "$prefix/etc/dnsarena/serve.yaml"
echo "installed into $prefix and ran from there"

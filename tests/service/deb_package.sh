#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `cpack -G DEB` builds two .debs, dnsarena (the daemon, its unit, config and user) and
# dnsarena-lab (the simulator, depending on dnsarena); both are unpacked into one
# temporary root (not installed on this machine) and their programs run from there: the
# lab finds the daemon beside it.
set -euo pipefail
command -v dpkg-deb >/dev/null || { echo "SKIPPED: dpkg-deb not found (apt-get install dpkg)"; exit 77; }
out=$(mktemp -d /tmp/dnsarena-deb-XXXXXX)
trap 'rm -rf "$out"' EXIT
(cd "$BUILD_DIR" && cpack -G DEB -B "$out" >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/dnsarena_*.deb)
lab=$(ls "$out"/dnsarena-lab_*.deb)
for d in "$deb" "$lab"; do echo "built $(basename "$d") ($(stat -c %s "$d") bytes)"; done
# Listings to files first: grep -q closing a pipe early fails the pipeline (pipefail).
dpkg-deb -I "$deb" > "$out/info"
dpkg-deb -c "$deb" | awk '{print $6}' > "$out/contents"
dpkg-deb -I "$lab" > "$out/lab-info"
dpkg-deb -c "$lab" | awk '{print $6}' > "$out/lab-contents"
grep -q "^ Depends:.*libknot" "$out/info" || { echo "Depends misses libknot"; exit 1; }
for f in ./usr/bin/dnsarena ./lib/systemd/system/dnsarena.service ./etc/dnsarena/serve.yaml \
         ./usr/lib/sysusers.d/dnsarena.conf ./usr/share/dnsarena/grafana/dnsarena.json; do
  grep -qx "$f" "$out/contents" || { echo "not in the package: $f"; cat "$out/contents"; exit 1; }
done
# The daemon's package carries no simulator: no lab program, no TBB or MPI among its Depends.
if grep -q dnsarena-lab "$out/contents"; then echo "the lab is in the daemon's package"; exit 1; fi
if grep -Eq "^ Depends:.*(libtbb|libopenmpi|mpi)" "$out/info"; then grep Depends "$out/info"; exit 1; fi
grep -qx ./usr/bin/dnsarena-lab "$out/lab-contents" || { echo "not in dnsarena-lab: bin"; cat "$out/lab-contents"; exit 1; }
grep -qx ./usr/share/doc/dnsarena-lab/examples/configs/fleet/example.yaml "$out/lab-contents" \
  || { echo "not in dnsarena-lab: the simulator's configs"; cat "$out/lab-contents"; exit 1; }
if grep -Eq "^\./usr/bin/dnsarena$|\.service$|^\./etc/" "$out/lab-contents"; then
  echo "the lab package holds daemon files:"; cat "$out/lab-contents"; exit 1
fi
grep -Eq "^ Depends:.*dnsarena \(= " "$out/lab-info" || { echo "dnsarena-lab does not depend on dnsarena"; exit 1; }
dpkg-deb -I "$deb" conffiles | grep -qx /etc/dnsarena/serve.yaml || { echo "serve.yaml is not a conffile"; exit 1; }
dpkg-deb -I "$deb" postinst | grep -q systemd-sysusers || { echo "no postinst creating the user"; exit 1; }
dpkg-deb -x "$deb" "$out/root"
dpkg-deb -x "$lab" "$out/root"
"$out/root/usr/bin/dnsarena" --version
"$out/root/usr/bin/dnsarena-lab" --version
grep -E "Package|Version|Depends" "$out/info" "$out/lab-info"
grep -q "^ExecStart=/usr/bin/dnsarena serve --config /etc/dnsarena/serve.yaml$" "$out/root/lib/systemd/system/dnsarena.service"

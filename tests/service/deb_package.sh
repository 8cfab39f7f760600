#!/usr/bin/env bash
# `cpack -G DEB` builds a .deb; it is unpacked into a temporary root (not installed on
# this machine) and its program runs from there.
set -euo pipefail
command -v dpkg-deb >/dev/null || { echo "SKIPPED: dpkg-deb not found (apt-get install dpkg)"; exit 77; }
out=$(mktemp -d /tmp/dnsarena-deb-XXXXXX)
trap 'rm -rf "$out"' EXIT
(cd "$BUILD_DIR" && cpack -G DEB -B "$out" >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/dnsarena_*.deb)
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
# Listings to files first: grep -q closing a pipe early fails the pipeline (pipefail).
dpkg-deb -I "$deb" > "$out/info"
dpkg-deb -c "$deb" | awk '{print $6}' > "$out/contents"
grep -q "^ Depends:.*libknot" "$out/info" || { echo "Depends misses libknot"; exit 1; }
for f in ./usr/bin/dnsarena ./lib/systemd/system/dnsarena.service ./etc/dnsarena/serve.yaml \
         ./usr/lib/sysusers.d/dnsarena.conf ./usr/share/dnsarena/grafana/dnsarena.json; do
  grep -qx "$f" "$out/contents" || { echo "not in the package: $f"; cat "$out/contents"; exit 1; }
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/dnsarena/serve.yaml || { echo "serve.yaml is not a conffile"; exit 1; }
dpkg-deb -I "$deb" postinst | grep -q systemd-sysusers || { echo "no postinst creating the user"; exit 1; }
dpkg-deb -x "$deb" "$out/root"
"$out/root/usr/bin/dnsarena" --version
grep -E "Package|Version|Depends" "$out/info"
grep -q "^ExecStart=/usr/bin/dnsarena serve --config /etc/dnsarena/serve.yaml$" "$out/root/lib/systemd/system/dnsarena.service"

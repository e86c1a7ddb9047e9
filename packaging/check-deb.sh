#!/usr/bin/env bash
# Builds the Debian package from a configured build directory, checks what it carries and what
# it depends on, installs it on this machine and runs the installed binary: --version, then
# --headless with `leasehold ctl status` against it, then a graceful stop.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
id=dev.leasehold.Leasehold

rm -f "$build"/leasehold_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(realpath "$build"/leasehold_*_amd64.deb)
echo "check-deb: $(basename "$deb")"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
expected=(
    ./usr/bin/leasehold
    ./usr/share/applications/$id.desktop
    ./usr/share/metainfo/$id.metainfo.xml
    ./usr/share/icons/hicolor/scalable/apps/$id.svg
    ./usr/share/man/man1/leasehold.1.gz
    ./usr/share/bash-completion/completions/leasehold
    ./usr/lib/systemd/user/leasehold.service
)
for size in 16 32 48 64 128 256; do
    expected+=(./usr/share/icons/hicolor/${size}x${size}/apps/$id.png)
done
for f in "${expected[@]}"; do
    grep -qxF "$f" <<<"$contents" || { echo "check-deb: $f is not in the package"; exit 1; }
done

depends=$(dpkg-deb -f "$deb" Depends)
if grep -qE -- '-dev([ ,(]|$)' <<<"$depends"; then
    echo "check-deb: Depends names a development package: $depends"
    exit 1
fi
for p in libqt6core6 libqt6httpserver6 libqt6widgets6 libqt6charts6 libqt6sql6-sqlite libqt6svg6 \
    libfuse3-3 fuse3; do
    grep -q "$p" <<<"$depends" || { echo "check-deb: Depends lacks $p: $depends"; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/root"
desktop-file-validate "$tmp/root/usr/share/applications/$id.desktop"
appstreamcli validate --no-net "$tmp/root/usr/share/metainfo/$id.metainfo.xml"
bash -n "$tmp/root/usr/share/bash-completion/completions/leasehold"

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --reinstall "$deb" >/dev/null
version=$(/usr/bin/leasehold --version)
want="leasehold $(dpkg-deb -f "$deb" Version)"
[ "$version" = "$want" ] || { echo "check-deb: --version says '$version', expected '$want'"; exit 1; }

/usr/bin/leasehold --headless --port 0 --data-dir "$tmp/data" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do
    grep -q '^listening ' "$tmp/out" && break
    sleep 0.1
done
url=$(sed -n 's/^listening //p' "$tmp/out")
[ -n "$url" ] || { echo "check-deb: the installed binary did not start"; cat "$tmp/err"; exit 1; }
/usr/bin/leasehold ctl --url "$url" --data-dir "$tmp/data" status
kill -TERM "$pid"
wait "$pid"
echo "check-deb: installed, started, answered and stopped cleanly"

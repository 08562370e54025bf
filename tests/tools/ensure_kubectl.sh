#!/usr/bin/env bash
# Make Debian's kubectl (package `kubernetes-client`, 1.20) available at tests/tools/bin/kubectl
# for the Kubernetes stand-in's tests (tests/k8s_api.py runs it from there).
#
# Not installed system-wide on purpose: /usr/bin/kubectl may already be a different build, and a
# normal install would conflict on that path. The package is downloaded (`apt-get download`, no
# root needed) and unpacked with `dpkg -x`; only the binary is kept. Already there and runnable:
# nothing to do. No apt, or apt cannot download it: say why and exit non-zero, so that `make`
# stops with a clear reason instead of the tests failing later.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dest="$here/bin/kubectl"
package=kubernetes-client

# kubectl makes ~/.kube/cache even for `version --client`: keep the caller's home untouched.
runs() (
    home=$(mktemp -d)
    trap 'rm -rf "$home"' EXIT
    HOME="$home" "$1" version --client >/dev/null 2>&1
)

if [ -x "$dest" ] && runs "$dest"; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
    echo "ensure_kubectl: apt-get and dpkg are needed to fetch Debian's '$package';" \
         "put a kubectl binary at $dest by hand instead" >&2
    exit 1
fi

run_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        return 1
    fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt's download sandbox user must be able to write here.
chmod 0777 "$work"

# The package index may be stale or empty on a fresh machine; one update before giving up.
if ! (cd "$work" && apt-get download -qq "$package" >/dev/null 2>&1); then
    run_root apt-get update -qq >/dev/null 2>&1 || true
    if ! (cd "$work" && apt-get download -qq "$package"); then
        echo "ensure_kubectl: 'apt-get download $package' failed (no apt source carries it," \
             "or the network is unreachable); kubectl is needed at $dest" >&2
        exit 1
    fi
fi

deb=$(ls "$work"/"$package"_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
    echo "ensure_kubectl: apt-get download left no $package .deb in $work" >&2
    exit 1
fi
dpkg -x "$deb" "$work/root"
if [ ! -x "$work/root/usr/bin/kubectl" ]; then
    echo "ensure_kubectl: $(basename "$deb") holds no usr/bin/kubectl" >&2
    exit 1
fi
mkdir -p "$(dirname "$dest")"
install -m 0755 "$work/root/usr/bin/kubectl" "$dest.tmp"
mv "$dest.tmp" "$dest"
runs "$dest" || { echo "ensure_kubectl: $dest does not run" >&2; exit 1; }

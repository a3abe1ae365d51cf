#!/bin/sh
# Installs what the jail's tests, benchmark and cgroup-v2 VM need on a Debian/Ubuntu host.
#   hyperfine           bench/jail/run.sh (side-by-side timing)
#   bubblewrap          bench/jail/run.sh (the peer the benchmark compares against)
#   qemu-system-x86     scripts/vm-cgroup2/ (cgroup v2 guest, software emulation)
#   busybox-static kmod cpio   scripts/vm-cgroup2/ (initramfs of the guest)
# Usage: scripts/setup-jail.sh [--no-vm]   (run as root)
set -eu
pkgs="hyperfine bubblewrap"
if [ "${1:-}" != "--no-vm" ]; then
    pkgs="$pkgs busybox-static kmod cpio"
    vm_pkgs="qemu-system-x86"
fi
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
vm_missing=""
for p in ${vm_pkgs:-}; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || vm_missing="$vm_missing $p"
done
if [ -n "$missing$vm_missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    [ -z "$missing" ] || apt-get install -y -qq $missing
    [ -z "$vm_missing" ] || apt-get install -y -qq --no-install-recommends $vm_missing
fi
echo "setup-jail: ok"

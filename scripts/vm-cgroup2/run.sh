#!/bin/sh
# cgroup v2 checks of the built `warden` in QEMU guests booted from Debian kernels (6.1 and 6.12: two
# Landlock ABIs), with this host's root shared read-only over 9p and only cgroup2 mounted.
#
# Usage: scripts/vm-cgroup2/run.sh              (as root; needs scripts/setup-jail.sh)
# Env:   WARDEN=/path/to/warden (skip the build; else built for WARDEN_PROFILE, release by default), WARDEN_VM_DIR (scratch, default /var/tmp/warden-vm),
#        WARDEN_VM_KERNELS="linux-image-… …" (default: what linux-image-amd64 and -6.12-amd64 depend on),
#        WARDEN_VM_ACCEL=kvm (with real VT-x/AMD-V; default tcg, software emulation).
# Kernels are downloaded with `apt-get download` and unpacked with `dpkg -x` into the scratch dir:
# nothing is installed on the host. Exit status: 0 when every guest passed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${WARDEN_VM_DIR:-/var/tmp/warden-vm}
accel=${WARDEN_VM_ACCEL:-tcg}
for tool in qemu-system-x86_64 busybox cpio depmod modprobe base64; do
    command -v "$tool" >/dev/null || [ -x "/bin/$tool" ] || { echo "missing $tool: run scripts/setup-jail.sh" >&2; exit 2; }
done
[ -x /bin/busybox ] || { echo "missing busybox-static: run scripts/setup-jail.sh" >&2; exit 2; }
if [ -z "${WARDEN:-}" ]; then
    # WARDEN_PROFILE: release unless told otherwise (scripts/lib/profile.sh).
    . "$root/scripts/lib/profile.sh"
    [ -z "$profile_error" ] || { echo "$profile_error" >&2; exit 2; }
    (cd "$root" && build_warden --quiet)
    WARDEN="$root/$profile_dir/warden"
fi
WARDEN=$(readlink -f "$WARDEN")
if [ -z "${WARDEN_VM_KERNELS:-}" ]; then
    WARDEN_VM_KERNELS=$(for meta in linux-image-amd64 linux-image-6.12-amd64; do
        apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1
    done)
fi
mkdir -p "$scratch"
status=0
for package in $WARDEN_VM_KERNELS; do
    dir="$scratch/$package"
    if [ ! -d "$dir/unpacked/boot" ]; then
        rm -rf "$dir" && mkdir -p "$dir/unpacked"
        (cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$package" >/dev/null && dpkg -x ./*.deb unpacked && rm -f ./*.deb)
    fi
    "$here/initramfs.sh" "$dir"
    kver=$(ls "$dir/unpacked/lib/modules")
    command=$(printf '%s' "/bin/sh $here/guest-checks.sh $WARDEN" | base64 -w0)
    echo "== $package ($kver, $accel)"
    log="$dir/serial.log"
    timeout --kill-after=5 300 qemu-system-x86_64 -accel "$accel" -M q35 -cpu max -smp 2 -m 1G \
        -display none -monitor none -serial stdio -no-reboot -nodefaults \
        -kernel "$dir/unpacked/boot/vmlinuz-$kver" -initrd "$dir/initrd.gz" \
        -fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
        -device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init vmtest_cmd=$command" \
        </dev/null >"$log" 2>&1 || true
    grep -E '^(PASS|FAIL|INFO)' "$log" | sed 's/\r$//' || true
    code=$(sed -n 's/^VMTEST_EXIT=\([0-9]*\).*/\1/p' "$log" | tail -1)
    if [ "$code" = 0 ]; then
        echo "guest $package: ok"
    else
        echo "guest $package: FAILED (exit ${code:-none}); serial log: $log" >&2
        tail -20 "$log" >&2
        status=1
    fi
done
exit $status

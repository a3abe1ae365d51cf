#!/bin/sh
# Builds DIR/initrd.gz for the kernel unpacked in DIR/unpacked: busybox, the 9p and overlay modules (in
# dependency order, decompressed) and an /init that mounts the host root read-only over 9p with
# writable overlays, mounts only cgroup2, and switch_roots into stage2.sh.
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
unpacked="$dir/unpacked"
kver=$(ls "$unpacked/lib/modules")
# The /init names this checkout's stage2.sh by absolute path: a cached initrd built from another
# checkout (another path) must be rebuilt.
stamp="$dir/initrd.checkout"
[ -f "$dir/initrd.gz" ] && [ "$dir/initrd.gz" -nt "$here/initramfs.sh" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$here" ] && exit 0
depmod -b "$unpacked" "$kver"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/lib/modules" "$work/proc" "$work/sys" "$work/dev" "$work/newroot" "$work/ovl"
cp /bin/busybox "$work/bin/busybox"
: > "$work/modules.order"
for module in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$unpacked" -S "$kver" --show-depends "$module" 2>/dev/null | while read -r kind path _; do
        [ "$kind" = insmod ] || continue
        name=$(basename "$path" | sed 's/\.ko\(\.xz\|\.zst\)\{0,1\}$/.ko/')
        grep -qx "$name" "$work/modules.order" && continue
        case "$path" in
            *.xz) xz -dc "$path" > "$work/lib/modules/$name" ;;
            *.zst) zstd -qdc "$path" > "$work/lib/modules/$name" ;;
            *) cp "$path" "$work/lib/modules/$name" ;;
        esac
        echo "$name" >> "$work/modules.order"
    done
done
cat > "$work/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in \$(cat /modules.order); do insmod /lib/modules/\$m 2>/dev/null; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,access=any,cache=loose hostroot /newroot
mount -t tmpfs tmpfs /ovl
for d in tmp var root; do
    mkdir -p /ovl/\$d/upper /ovl/\$d/work
    mount -t overlay overlay -o lowerdir=/newroot/\$d,upperdir=/ovl/\$d/upper,workdir=/ovl/\$d/work /newroot/\$d
done
chmod 1777 /newroot/tmp
mount -t tmpfs tmpfs /newroot/run
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup
mount -t securityfs securityfs /newroot/sys/kernel/security 2>/dev/null
mount -t devpts devpts /newroot/dev/pts 2>/dev/null
mkdir -p /newroot/dev/shm && mount -t tmpfs tmpfs /newroot/dev/shm
exec switch_root /newroot /bin/sh $here/stage2.sh
INIT
chmod 755 "$work/init"
(cd "$work" && find . | cpio -o -H newc --quiet | gzip -1 > "$dir/initrd.gz")
printf '%s\n' "$here" > "$stamp"

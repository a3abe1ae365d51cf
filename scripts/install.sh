#!/bin/sh
# Installs `warden serve` as a systemd service: every step deploy/warden.service's install comment
# lists, in that order. Run as root from the repository. Idempotent: an existing configuration is kept.
#
#   scripts/install.sh [--root DIR] [--group NAME] [--from DIR] [--no-enable]
#
#   --root DIR   install below DIR instead of / (paths in the installed configuration and unit are
#                rewritten to match; for packaging and for tests/serve/install.rs). The runtime
#                still goes to warden's data dir (/var/lib/warden, or $WARDEN_DATA_DIR), where
#                the server looks for it
#   --group NAME the group whose members may use the socket (server.socket_group; default warden,
#                created when missing)
#   --from DIR   take warden and libwarden_hook.so from DIR instead of building them
#   --no-enable  do not run systemctl (implied by --root, or when systemd is not running)
set -eu
cd "$(dirname "$0")/.."

root=""
group="warden"
from=""
enable=1
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="${2%/}"; shift 2 ;;
        --group) group="$2"; shift 2 ;;
        --from) from="$2"; shift 2 ;;
        --no-enable) enable=0; shift ;;
        *) echo "install: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
    esac
done
[ -n "$root" ] && enable=0
if [ "$(id -u)" -ne 0 ]; then
    echo "install: run as root (it creates a group, system directories and a service)" >&2
    exit 2
fi

# 1. The binary and the runtime layer's library, which must sit beside it.
if [ -z "$from" ]; then
    cargo build --release --locked -p warden -p warden-hook
    from=target/release
fi
for file in warden libwarden_hook.so; do
    [ -f "$from/$file" ] || { echo "install: $from/$file is missing" >&2; exit 2; }
done
install -d -m 0755 "$root/usr/local/bin"
install -m 0755 "$from/warden" "$root/usr/local/bin/warden"
install -m 0644 "$from/libwarden_hook.so" "$root/usr/local/bin/libwarden_hook.so"
echo "install: $root/usr/local/bin/warden (+ libwarden_hook.so)"

# 2. The group that may connect to the socket.
if ! getent group "$group" >/dev/null; then
    groupadd --system "$group"
    echo "install: created group $group (add the agents' users: usermod -aG $group USER)"
fi

# 3. The configuration (kept when present) and the unit, with paths under --root when given.
rewrite() {
    sed -e "s|^socket_group = .*|socket_group = \"$group\"|" \
        -e "s|\"/run/warden/|\"$root/run/warden/|" \
        -e "s|\"/var/lib/warden/|\"$root/var/lib/warden/|" \
        -e "s|\"/var/log/warden/|\"$root/var/log/warden/|" \
        -e "s|/usr/local/bin/warden |$root/usr/local/bin/warden |g" \
        -e "s|/etc/warden/serve.toml|$root/etc/warden/serve.toml|g" \
        -e "s|^ReadWritePaths=.*|ReadWritePaths=$root/var/lib/warden $root/run/warden $root/var/log/warden|" \
        "$1"
}
install -d -m 0755 "$root/etc/warden"
if [ -e "$root/etc/warden/serve.toml" ]; then
    echo "install: keeping $root/etc/warden/serve.toml"
else
    rewrite deploy/serve.toml >"$root/etc/warden/serve.toml"
    chmod 0644 "$root/etc/warden/serve.toml"
    echo "install: $root/etc/warden/serve.toml"
fi
install -d -m 0755 "$root/etc/systemd/system"
rewrite deploy/warden.service >"$root/etc/systemd/system/warden.service"
chmod 0644 "$root/etc/systemd/system/warden.service"
echo "install: $root/etc/systemd/system/warden.service"

# 4. State, log and socket directories (systemd also makes them from StateDirectory=,
#    LogsDirectory= and RuntimeDirectory=; made here so that `warden serve` runs without it).
install -d -m 0750 "$root/var/lib/warden" "$root/var/log/warden"
install -d -m 0755 "$root/run/warden"

# 5. The Python runtime the default policy names (pinned packages, hashes checked; needs PyPI).
if "$root/usr/local/bin/warden" runtime show default >/dev/null 2>&1; then
    echo "install: runtime default present"
else
    "$root/usr/local/bin/warden" runtime install --name default
fi

# 6. Check the whole configuration on this host, then start.
"$root/usr/local/bin/warden" serve --config "$root/etc/warden/serve.toml" --check-config
if [ "$enable" -eq 1 ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable --now warden
    echo "install: warden is running (systemctl status warden)"
else
    echo "install: done; start it with: systemctl daemon-reload && systemctl enable --now warden"
fi

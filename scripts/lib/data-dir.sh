# Sourced by the set-up scripts: sets `data_dir` to the data directory warden itself uses
# ($WARDEN_DATA_DIR, else /var/lib/warden as root, else $XDG_DATA_HOME/warden or
# ~/.local/share/warden), where the runtimes and the test venvs live.
if [ -n "${WARDEN_DATA_DIR:-}" ]; then
    data_dir="$WARDEN_DATA_DIR"
elif [ "$(id -u)" -eq 0 ]; then
    data_dir=/var/lib/warden
elif [ -n "${XDG_DATA_HOME:-}" ]; then
    data_dir="$XDG_DATA_HOME/warden"
else
    data_dir="$HOME/.local/share/warden"
fi

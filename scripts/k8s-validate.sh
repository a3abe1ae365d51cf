#!/bin/sh
# Validates the Kubernetes manifests in deploy/kubernetes/ against the Kubernetes API's JSON Schemas,
# strictly (an unknown field is an error), for the oldest and the newest Kubernetes versions the
# manifests claim (docs/scale-out.md). Exits non-zero when a manifest is invalid.
#
# The validator is kubernetes-validate from PyPI, exactly as deploy/kubernetes/requirements-validate.lock
# pins it (with hashes), in a venv this script makes in $WARDEN_DATA_DIR/test-venvs/k8s (default
# /var/lib/warden as root, else $XDG_DATA_HOME/warden or ~/.local/share/warden: the data dir warden
# itself uses), rebuilt only when the lock changes. The package ships the schemas: once installed,
# validating needs no network.
#
# Before the real manifests, the script gives the validator manifests that are wrong in ways the
# schemas catch and fails if any is accepted, so a validator that checks nothing cannot pass.
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
manifests="$repo/deploy/kubernetes"
lock="$manifests/requirements-validate.lock"
# The oldest and newest Kubernetes versions docs/scale-out.md says the manifests are for.
versions="1.30.0 1.37.0"

. "$(dirname "$0")/lib/data-dir.sh"
venv="$data_dir/test-venvs/k8s"
stamp="$venv/.warden-k8s-stamp"
want="$(sha256sum "$lock" | cut -d' ' -f1)"

if ! [ -x "$venv/bin/kubernetes-validate" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "k8s-validate: making $venv from $lock" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --no-input \
        --only-binary=:all: --no-deps --require-hashes -r "$lock"
    echo "$want" >"$stamp"
fi
validate() {
    args=""
    for version in $versions; do args="$args -k $version"; done
    # shellcheck disable=SC2086
    "$venv/bin/kubernetes-validate" --strict --quiet $args "$@"
}

# The validator must refuse what is wrong.
bad="$(mktemp -d)"
trap 'rm -rf "$bad"' EXIT
cat >"$bad/unknown-field.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: w}
spec:
  replicas: 3
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: w, image: w}]}
EOF
cat >"$bad/wrong-type.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: w}
spec:
  ports: [{port: "eight thousand"}]
EOF
cat >"$bad/missing-required.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: w}
spec:
  template:
    spec: {containers: [{image: w}]}
EOF
for file in "$bad"/*.yaml; do
    if validate "$file" >/dev/null 2>&1; then
        echo "k8s-validate: the validator accepted $(basename "$file"): it checks nothing" >&2
        exit 1
    fi
done

status=0
count=0
for file in "$manifests"/*.yaml; do
    count=$((count + 1))
    if ! validate "$file"; then
        echo "k8s-validate: INVALID ${file#"$repo"/}" >&2
        status=1
    fi
done
if [ "$count" -eq 0 ]; then
    echo "k8s-validate: no manifest in ${manifests#"$repo"/}" >&2
    exit 1
fi
if [ "$status" -eq 0 ]; then
    echo "k8s-validate: $count manifests valid for Kubernetes $versions (strict)"
fi
exit "$status"

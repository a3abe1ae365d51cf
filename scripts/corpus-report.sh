#!/usr/bin/env bash
# Runs warden's corpora and writes the matrix to corpus/REPORT.md (or, with --ci, only the project's
# own corpus, failing on any escape or benign regression, with the JUnit report in target/).
#
#   scripts/corpus-report.sh                 # corpus/ + ../shared/corpora → corpus/REPORT.md
#   scripts/corpus-report.sh --ci            # corpus/ only → target/corpus-junit.xml, target/corpus-report.md,
#                                            # and corpus/ through the warm pool (--passes pool)
#                                            # → target/corpus-pool-junit.xml, target/corpus-pool-report.md
#   scripts/corpus-report.sh --no-ds1000     # skip DS-1000 (about 6 minutes on 2 cores)
#   scripts/corpus-report.sh --rules FILE    # another policy (default: the built-in rules/default.toml)
#   scripts/corpus-report.sh --no-pool       # skip the attacks through warden serve's warm pool
#   WARDEN_PROFILE=dev scripts/corpus-report.sh --ci   # with target/debug (the test suite's build)
#
# DS-1000's reference solutions expect pandas 1.5 and numpy 1.24. When a runtime named `ds1000` is
# installed (warden runtime install --name ds1000 --requirements rules/runtime/ds1000.txt), DS-1000 runs
# with a copy of the policy whose `[runtime] name` is `ds1000`; nothing else of the policy changes, and
# REPORT.md says so. Exit status: 0 when the corpus/ run and the pool run both passed (no escape, no
# regression, every expectation met, every pooled run warm).
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
pool=1
ds1000=1
external=1
rules=""
jobs="$(nproc)"
while [ $# -gt 0 ]; do
    case "$1" in
        --ci) ci=1; external=0 ;;
        --no-ds1000) ds1000=0 ;;
        --no-external) external=0 ;;
        --no-pool) pool=0 ;;
        --rules) rules="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "corpus-report: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

# The runtime pass needs warden's hook library beside the binary (target/release/libwarden_hook.so;
# target/debug/ under WARDEN_PROFILE=dev, the profile the test suite builds).
. scripts/lib/profile.sh
[ -z "$profile_error" ] || { echo "corpus-report: $profile_error" >&2; exit 2; }
build_warden >&2
warden="$PWD/$profile_dir/warden"
shared="${WARDEN_SHARED_CORPORA:-$PWD/../shared/corpora}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p target

base_rules="${rules:-rules/default.toml}"
if [ -n "$rules" ]; then
    rules_note="\`$rules\`"
else
    rules_note="the built-in default policy (rules/default.toml)"
fi

# A copy of the policy that runs programs with another runtime (only `[runtime]` changes).
with_runtime() { # runtime name → path of the copy
    local copy="$work/rules-runtime-$1.toml"
    awk -v runtime="$1" '
        /^\[/ { section = $0 }
        section == "[runtime]" && /^(name|interpreter) *=/ { if (!done) print "name = \"" runtime "\""; done = 1; next }
        { print }
        END { if (!done) { print "\n[runtime]"; print "name = \"" runtime "\"" } }
    ' "$base_rules" > "$copy"
    echo "$copy"
}

run() { # name, rules file or "", dirs...
    local name="$1" rules_file="$2"
    shift 2
    local out="$work/$name.md" start end status=0 args=()
    [ -n "$rules_file" ] && args=(--rules "$rules_file")
    start=$(date +%s)
    "$warden" corpus run "${args[@]}" --jobs "$jobs" --format markdown --output "$out" \
        --junit "$work/$name-junit.xml" "$@" || status=$?
    end=$(date +%s)
    # Name a derived rules file by what it is, not by its temporary path.
    sed -i -E "s|\`$work/rules-runtime-([a-z0-9_-]+)\.toml\`|the same policy with \`[runtime] name = \"\1\"\`|g" "$out"
    echo "$((end - start))" > "$work/$name.seconds"
    echo "corpus-report: $name finished in $((end - start))s (exit $status)" >&2
    return "$status"
}

status=0
run corpus "$rules" corpus/ || status=$?
cp "$work/corpus-junit.xml" target/corpus-junit.xml
cp "$work/corpus.md" target/corpus-report.md
# Every attack and benign program through the warm pool of `warden serve` (--passes pool: the
# runtime layer and the jail of pooled jails; about 3 minutes on 2 cores).
if [ "$pool" = 1 ]; then
    run pool "$rules" --passes pool corpus/ || status=$?
    cp "$work/pool-junit.xml" target/corpus-pool-junit.xml
    cp "$work/pool.md" target/corpus-pool-report.md
fi
if [ "$ci" = 1 ]; then
    echo "corpus-report: JUnit in target/corpus-junit.xml, matrix in target/corpus-report.md" >&2
    [ "$pool" = 1 ] && echo "corpus-report: the pool pass in target/corpus-pool-junit.xml, target/corpus-pool-report.md" >&2
    exit "$status"
fi

sections=(corpus)
[ "$pool" = 1 ] && sections+=(pool)
if [ "$external" = 1 ] && [ -d "$shared" ]; then
    for corpus in redcode_exec smolagents_escapes humaneval ds1000; do
        [ "$corpus" = ds1000 ] && [ "$ds1000" = 0 ] && continue
        [ -f "$shared/$corpus/index.jsonl" ] || continue
        corpus_rules="$rules"
        if [ "$corpus" = ds1000 ] && "$warden" runtime list 2>/dev/null | grep -qx 'ds1000'; then
            corpus_rules="$(with_runtime ds1000)"
        fi
        run "$corpus" "$corpus_rules" "$shared/$corpus" || true
        sections+=("$corpus")
    done
fi

{
    echo "# warden corpus report"
    echo
    echo "Generated by \`scripts/corpus-report.sh\` on $(date -u +%Y-%m-%d) from commit" \
        "\`$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\`$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')," \
        "on $(nproc) cores, Linux $(uname -r), as $(id -un). Policy: $rules_note; each run below names" \
        "the runtime it used when it differs."
    echo
    echo "| run | wall time | figures |"
    echo "|---|--:|---|"
    for name in "${sections[@]}"; do
        seconds="$(cat "$work/$name.seconds")"
        figures="$(sed -n 's/^Headline: //p' "$work/$name.md" | head -n1)"
        echo "| \`$name\` | $((seconds / 60))m$(printf '%02d' $((seconds % 60)))s | $figures |"
    done
    echo
    for name in "${sections[@]}"; do
        # Each run's own headings, one level down.
        sed -e 's/^\(#\{1,\}\) /#\1 /' -e 's/^## warden corpus report.*/## `'"$name"'`/' "$work/$name.md"
        echo
    done
} > corpus/REPORT.md
echo "corpus-report: wrote corpus/REPORT.md" >&2
exit "$status"

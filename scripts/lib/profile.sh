# Sourced by the scripts that build warden and run the binaries they built (setup.sh, demo.sh,
# corpus-report.sh, scale-out-test.sh, vm-cgroup2/run.sh). Sets:
#   profile       the cargo profile: $WARDEN_PROFILE, `release` unless told otherwise. The test
#                 suite (scripts/test.sh) uses `dev`, the profile the test binaries are built in,
#                 so one build of the workspace serves the tests and every script.
#   profile_dir   where cargo puts that profile's binaries: target/release or target/debug.
# Sets `profile_error` (and nothing else) when WARDEN_PROFILE names no profile these scripts know.
profile="${WARDEN_PROFILE:-release}"
profile_error=""
case "$profile" in
    release) profile_dir=target/release ;;
    dev) profile_dir=target/debug ;;
    *)
        profile_error="WARDEN_PROFILE=$profile: the scripts know the profiles release and dev"
        profile_dir=""
        ;;
esac

# build_warden [cargo flags...]: builds warden, the corpus runner and the runtime layer's native
# module for $profile. Under WARDEN_BUILD_ALL=1 (the test suite) it builds the whole workspace with
# every target instead — exactly the units `cargo nextest run --workspace --all-targets` needs, so
# the suite compiles each crate once: a build of three packages alone resolves the dependencies'
# features differently (the tests' dev-dependencies add some) and would compile jsonschema, the
# Python parser and clap a second time.
build_warden() {
    if [ "${WARDEN_BUILD_ALL:-0}" = 1 ]; then
        cargo build --profile "$profile" --workspace --all-targets "$@"
    else
        cargo build --profile "$profile" -p warden -p warden-corpus -p warden-hook "$@"
    fi
}

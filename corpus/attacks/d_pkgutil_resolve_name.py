# warden-case: d-pkgutil-resolve-name
# group: D
# technique: pkgutil.resolve_name('os:system')
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
import pkgutil

run = pkgutil.resolve_name("os:system")
run("id")

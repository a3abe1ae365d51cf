# warden-case: jail-shutil-rmtree-stdlib
# group: JAIL
# technique: shutil.rmtree of a package of the interpreter's standard library
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: interpreter-intact
# expect-runtime: FILE702
import shutil

shutil.rmtree("/usr/lib/python3.11/json")

# warden-case: g-rt2-yaml-apply-check-output
# group: G
# technique: an unsafe YAML loader reached as yaml.unsafe_load applies subprocess.check_output (yaml imports subprocess for it)
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: IMP101
import yaml

yaml.unsafe_load("!!python/object/apply:subprocess.check_output [['id']]")

# warden-case: d-rt2-yaml-python-module-tag
# group: D
# technique: an unsafe YAML document's !!python/module tag imports a denied module
# variant: computed-string
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: IMP101
import yaml

print(yaml.unsafe_load("!!python/module:ftplib"))

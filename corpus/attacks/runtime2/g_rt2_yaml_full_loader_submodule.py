# warden-case: g-rt2-yaml-full-loader-submodule
# group: G
# technique: yaml.constructor.UnsafeConstructor reached through the module graph builds os.system
# variant: import-alias
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: PROC801
import yaml

loader = yaml.unsafe_load
print(loader("!!python/object/apply:os.system ['id']"))

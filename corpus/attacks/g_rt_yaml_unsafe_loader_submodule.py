# warden-case: g-rt-yaml-unsafe-loader-submodule
# group: G
# technique: yaml.loader.UnsafeLoader reached through the submodule builds os.system from a tag (denied statically by the identity index: it is yaml.UnsafeLoader)
# variant: import-alias
# expect-static: deny
# expect-rules: REF201
# expect-static-names: allow
# expect-jail: contained
# expect-runtime: PROC801
import yaml

document = "!!python/object/apply:os.system ['id']"
print(yaml.loader.UnsafeLoader(document).get_single_data())

# warden-case: g-rt-yaml-python-object-apply
# group: G
# technique: yaml.load with yaml.loader.UnsafeLoader on a !!python/object/apply tag
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101 REF201
# expect-runtime: IMP101
# expect-jail: contained
import yaml.loader
import yaml
yaml.load("!!python/object/apply:os.system ['id']", Loader=yaml.loader.UnsafeLoader)

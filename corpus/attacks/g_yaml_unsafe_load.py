# warden-case: g-yaml-unsafe-load
# group: G
# technique: yaml.load with UnsafeLoader and a python/object/apply tag
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import yaml

doc = '!!python/object/apply:os.system ["id"]'
yaml.load(doc, Loader=yaml.UnsafeLoader)

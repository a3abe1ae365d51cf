# warden-case: d-rt-map-dunder-import
# group: D
# technique: __import__ applied by map to a denied module name
# variant: value-passing
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
# expect-runtime: IMP101
names = ["smtp" + "lib"]
mods = list(map(__import__, names))
print(mods)

# warden-case: d-dunder-import-computed
# group: D
# technique: __import__ with a module name built at run time
# variant: computed-string
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
name = "".join(["o", "s"])
mod = __import__(name)
mod.system("id")

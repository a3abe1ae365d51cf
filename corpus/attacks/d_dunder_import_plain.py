# warden-case: d-dunder-import-plain
# group: D
# technique: __import__('os') by name
# variant: plain
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
__import__("os").system("id")

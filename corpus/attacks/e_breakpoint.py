# warden-case: e-breakpoint
# group: E
# technique: breakpoint() opens pdb (or whatever PYTHONBREAKPOINT names)
# variant: plain
# expect-static: deny
# expect-rules: DYN403
# expect-jail: no-survivor
total = sum(range(10))
breakpoint()
print(total)

# warden-case: jail-overwrite-stdlib
# group: JAIL
# technique: append code to the interpreter's json package for the next run
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: interpreter-intact; no-path /tmp/warden-escape*
with open("/usr/lib/python3.11/json/__init__.py", "a") as fh:
    fh.write("\nopen('/tmp/warden-escape', 'w').write('poisoned')\n")

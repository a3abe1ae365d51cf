# warden-case: e-session-wrapper-then-call
# group: E
# technique: a session defines a helper that imports subprocess inside its body, then calls it from a later cell
# variant: other
# session: cells
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: IMP101
# expect-jail: contained
# %% define
def helper(command):
    import subprocess
    return subprocess.run(command, capture_output=True)
# %% call
print(helper(["id"]).stdout)

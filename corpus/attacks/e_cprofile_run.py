# warden-case: e-cprofile-run
# group: E
# technique: cProfile.run executes its command string
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import cProfile

cProfile.run("__import__('os').system('id')")

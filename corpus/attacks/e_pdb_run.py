# warden-case: e-pdb-run
# group: E
# technique: pdb.run executes a statement string under the debugger
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import pdb

pdb.run("__import__('os').system('id')")

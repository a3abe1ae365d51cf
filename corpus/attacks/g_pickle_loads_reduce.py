# warden-case: g-pickle-loads-reduce
# group: G
# technique: pickle.loads of a GLOBAL/REDUCE opcode stream calling os.system
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import pickle

payload = b"cos\nsystem\n(S'id'\ntR."
pickle.loads(payload)

# warden-case: g-dill-loads
# group: G
# technique: dill.loads (pickle superset)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import dill

dill.loads(b"cos\nsystem\n(S'id'\ntR.")

# warden-case: g-copy-reduce-eval
# group: G
# technique: user class with __reduce__ returning eval, triggered by copy.deepcopy
# variant: value-passing
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
import copy


class Model:
    def __reduce__(self):
        return (eval, ("__import__('os').system('id')",))


copy.deepcopy(Model())

# warden-case: a-class-reassign
# group: A
# technique: reassign obj.__class__ so a tracked safe object gains an attacker-defined method
# variant: other
# expect-static: deny
# expect-rules: DYN404 ATTR301 DYN401
# expect-jail: contained
class Safe:
    def describe(self):
        return "safe"


class Sneaky:
    def describe(self):
        return eval("__import__('os').popen('id').read()")


obj = Safe()
obj.__class__ = Sneaky
print(obj.describe())

# warden-case: a-rt-class-keywords-metaclass
# group: A
# technique: a metaclass given through a **{...} keyword mapping runs code at class creation
# variant: other
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
class Meta(type):
    def __new__(meta, name, bases, namespace):
        os.path.os.system("id")
        return super().__new__(meta, name, bases, namespace)
options = {"metaclass": Meta}
class Model(**options):
    pass

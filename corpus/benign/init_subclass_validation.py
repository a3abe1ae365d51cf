# warden-case: init-subclass-validation
# group: BENIGN
# technique: __init_subclass__ checks that subclasses define a required attribute
# expect-static: allow
# expect-output: OK: missing name rejected
class Step:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "name"):
            raise TypeError(f"{cls.__name__} needs a name")


class Load(Step):
    name = "load"


try:
    class Broken(Step):
        pass
except TypeError:
    print("OK: missing name rejected")

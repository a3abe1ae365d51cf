# warden-case: init-subclass-keyword
# group: BENIGN
# technique: __init_subclass__ with a class keyword argument
# expect-static: allow
# expect-output: OK: units m, s
class Quantity:
    units = []

    def __init_subclass__(cls, unit="", **kwargs):
        super().__init_subclass__(**kwargs)
        cls.unit = unit
        Quantity.units.append(unit)


class Length(Quantity, unit="m"):
    pass


class Duration(Quantity, unit="s"):
    pass


print(f"OK: units {', '.join(Quantity.units)}")

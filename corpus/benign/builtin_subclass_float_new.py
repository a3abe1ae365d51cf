# warden-case: builtin-subclass-float-new
# group: BENIGN
# technique: a float subclass built with super().__new__
# expect-static: allow
# expect-output: OK: 21.57 C
class Celsius(float):
    def __new__(cls, value):
        return super().__new__(cls, round(value, 2))

    def __str__(self):
        return f"{float(self):.2f} C"


print(f"OK: {Celsius(21.5678)}")

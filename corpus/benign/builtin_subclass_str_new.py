# warden-case: builtin-subclass-str-new
# group: BENIGN
# technique: a str subclass normalised in __new__ with str.__new__
# expect-static: allow
# expect-output: OK: tag data-science
class Tag(str):
    def __new__(cls, text):
        return str.__new__(cls, text.strip().lower().replace(" ", "-"))


tag = Tag("  Data Science ")
print(f"OK: tag {tag}")

# warden-case: l-pep695-type-params
# group: L
# technique: PEP 695 type parameter syntax (3.12+ only)
# variant: other
# references: https://peps.python.org/pep-0695/
# expect-static: deny
# expect-rules: SYN002
# expect-jail: status error
def first[T](items: list[T]) -> T:
    return items[0]


first([__import__("os").system("id")])

# warden-case: l-fstring-pep701-quotes
# group: L
# technique: PEP 701 f-string reusing the outer quote (3.12+ only); a 3.12 grammar parser must not be trusted for 3.11
# variant: other
# references: https://peps.python.org/pep-0701/
# expect-static: deny
# expect-rules: SYN002
# expect-jail: status error
print(f"{().__class__.__base__.__subclasses__()[-1].__init__.__globals__["system"]("id")}")

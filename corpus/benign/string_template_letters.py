# warden-case: string-template-letters
# group: BENIGN
# technique: string.Template substitution
# expect-static: allow
# expect-output: OK: 2 letters rendered
from string import Template

tpl = Template("Dear $name, your balance is $$${balance}.")
people = [{"name": "Ana", "balance": "12.00"}, {"name": "Ben", "balance": "7.50"}]
letters = [tpl.substitute(p) for p in people]
for letter in letters:
    print(letter)
print(tpl.safe_substitute(name="Cy"))
print(f"OK: {len(letters)} letters rendered")

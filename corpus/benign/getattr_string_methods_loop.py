# warden-case: getattr-string-methods-loop
# group: BENIGN
# technique: getattr on a string with a literal list of method names
# expect-static: allow
# expect-output: OK: HELLO hello Hello
text = "hELLO"
out = []
for method in ["upper", "lower", "capitalize"]:
    out.append(getattr(text, method)())
print(f"OK: {' '.join(out)}")

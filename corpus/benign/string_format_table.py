# warden-case: string-format-table
# group: BENIGN
# technique: str.format and format specs for a table
# expect-static: allow
# expect-output: OK: table with 3 rows, total 1,234.50
rows = [("alpha", 1000.0), ("beta", 200.25), ("gamma", 34.25)]
header = "{:<8}|{:>12}".format("name", "amount")
print(header)
print("-" * len(header))
for name, amount in rows:
    print("{0:<8}|{1:>12,.2f}".format(name, amount))
total = sum(a for _, a in rows)
print("{label}: {value:.1%}".format(label="alpha share", value=rows[0][1] / total))
print("OK: table with {n} rows, total {t:,.2f}".format(n=len(rows), t=total))

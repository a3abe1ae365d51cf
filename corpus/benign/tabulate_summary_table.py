# warden-case: tabulate-summary-table
# group: BENIGN
# technique: tabulate formats a summary table
# expect-static: allow
# expect-output: OK: table lines 4
from tabulate import tabulate

rows = [["north", 120, 0.4], ["south", 80, 0.27]]
table = tabulate(rows, headers=["region", "sales", "share"], tablefmt="github", floatfmt=".2f")
print(table)
print(f"OK: table lines {len(table.splitlines())}")

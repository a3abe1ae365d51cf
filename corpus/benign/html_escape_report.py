# warden-case: html-escape-report
# group: BENIGN
# technique: html.escape to build a small HTML table from user data
# expect-static: allow
# expect-output: OK: 3 rows escaped
import html

rows = [("Tom & Jerry", 3), ("<script>", 1), ('Say "hi"', 2)]
cells = [f"<tr><td>{html.escape(name)}</td><td>{count}</td></tr>" for name, count in rows]
table = "<table>" + "".join(cells) + "</table>"
assert "<script>" not in table
assert "&amp;" in table and "&quot;" in table
print(table)
print(f"OK: {len(cells)} rows escaped")

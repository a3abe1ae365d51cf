# warden-case: bs4-parse-html-table
# group: BENIGN
# technique: beautifulsoup4 parses an HTML table from a string
# expect-static: allow
# expect-output: OK: parsed rows [['Oslo', '700'], ['Bergen', '290']]
from bs4 import BeautifulSoup

html = "<table><tr><th>city</th><th>pop</th></tr><tr><td>Oslo</td><td>700</td></tr><tr><td>Bergen</td><td>290</td></tr></table>"
soup = BeautifulSoup(html, "html.parser")
rows = [[cell.get_text() for cell in tr.find_all("td")] for tr in soup.find_all("tr")[1:]]
print(f"OK: parsed rows {rows}")

# warden-case: html-unescape-entities
# group: BENIGN
# technique: html.unescape to clean scraped text
# expect-static: allow
# expect-output: OK: <b>Tom & Jerry</b>
import html

raw = "&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;"
clean = html.unescape(raw)
print(f"OK: {clean}")

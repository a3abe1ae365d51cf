# warden-case: pandas-styler-to-html
# group: BENIGN
# technique: pandas Styler (jinja2 underneath) formats and highlights a table as HTML
# expect-static: allow
# expect-output: OK: styled html has 1,234.5 True
import pandas as pd

df = pd.DataFrame({"region": ["north", "south"], "sales": [1234.5, 987.25]})
styled = df.style.format({"sales": "{:,.1f}"}).highlight_max(subset=["sales"])
html = styled.to_html()
print(f"OK: styled html has 1,234.5 {'1,234.5' in html}")

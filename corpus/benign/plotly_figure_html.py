# warden-case: plotly-figure-html
# group: BENIGN
# technique: plotly express bar chart written as HTML into the work dir
# expect-static: allow
# expect-output: OK: plotly traces 1, html has div True
import pandas as pd
import plotly.express as px

df = pd.DataFrame({"region": ["north", "south", "east"], "sales": [120, 80, 95]})
fig = px.bar(df, x="region", y="sales", title="Sales by region")
fig.write_html("sales.html", include_plotlyjs=False)
html = fig.to_html(include_plotlyjs=False, full_html=False)
print(f"OK: plotly traces {len(fig.data)}, html has div {'<div' in html}")

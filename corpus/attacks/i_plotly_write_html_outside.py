# warden-case: i-plotly-write-html-outside
# group: I
# technique: plotly fig.write_html into /etc
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /etc/warden-escape*
import plotly.graph_objects as go

fig = go.Figure(go.Bar(x=["a"], y=[1]))
fig.write_html("/etc/warden-escape-plot.html")

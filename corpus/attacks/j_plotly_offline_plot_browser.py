# warden-case: j-plotly-offline-plot-browser
# group: J
# technique: plotly.offline.plot writes an HTML file and asks a browser to open it
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import plotly.graph_objects as go
import plotly.offline

fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
plotly.offline.plot(fig, filename="warden-escape-plot.html", auto_open=True)

# warden-case: i-networkx-read-edgelist-canary
# group: I
# technique: networkx.read_edgelist on the host canary file
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /root/warden-canary
import networkx as nx

graph = nx.read_edgelist("/root/warden-canary")
print(list(graph.nodes))

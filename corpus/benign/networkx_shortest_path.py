# warden-case: networkx-shortest-path
# group: BENIGN
# technique: networkx weighted shortest path and degree centrality
# expect-static: allow
# expect-output: OK: path ['a', 'b', 'c', 'd'], most central c
import networkx as nx

graph = nx.Graph()
graph.add_weighted_edges_from([("a", "b", 1), ("b", "c", 2), ("a", "c", 5), ("c", "d", 1)])
path = nx.shortest_path(graph, "a", "d", weight="weight")
central = max(nx.degree_centrality(graph).items(), key=lambda kv: kv[1])[0]
print(f"OK: path {path}, most central {central}")

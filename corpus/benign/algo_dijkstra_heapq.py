# warden-case: algo-dijkstra-heapq
# group: BENIGN
# technique: Dijkstra shortest paths with heapq
# expect-static: allow
# expect-output: OK: shortest A->E 7 via ['A', 'C', 'B', 'D', 'E']
import heapq

graph = {
    "A": {"B": 4, "C": 1},
    "B": {"D": 1},
    "C": {"B": 2, "D": 5},
    "D": {"E": 3},
    "E": {},
}


def dijkstra(g, src):
    dist = {n: float("inf") for n in g}
    prev = {}
    dist[src] = 0
    pq = [(0, src)]
    while pq:
        d, node = heapq.heappop(pq)
        if d > dist[node]:
            continue
        for nxt, w in g[node].items():
            if d + w < dist[nxt]:
                dist[nxt] = d + w
                prev[nxt] = node
                heapq.heappush(pq, (d + w, nxt))
    return dist, prev


dist, prev = dijkstra(graph, "A")
path, node = [], "E"
while node != "A":
    path.append(node)
    node = prev[node]
path.append("A")
print(f"OK: shortest A->E {dist['E']} via {path[::-1]}")

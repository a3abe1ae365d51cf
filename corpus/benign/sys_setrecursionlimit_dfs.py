# warden-case: sys-setrecursionlimit-dfs
# group: BENIGN
# technique: raises the recursion limit to a literal value for a deep DFS
# expect-static: allow
# expect-output: OK: chain depth 3000
import sys

sys.setrecursionlimit(10**4)


def depth(node, graph):
    nxt = graph.get(node)
    return 1 if nxt is None else 1 + depth(nxt, graph)


graph = {i: i + 1 for i in range(2999)}
print(f"OK: chain depth {depth(0, graph)}")

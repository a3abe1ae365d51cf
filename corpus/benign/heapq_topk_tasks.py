# warden-case: heapq-topk-tasks
# group: BENIGN
# technique: heapq nlargest/nsmallest and a priority queue
# expect-static: allow
# expect-output: OK: top2 [('deploy', 9), ('fix', 7)], next job fix
import heapq

scores = {"docs": 2, "fix": 7, "deploy": 9, "lint": 1}
top2 = heapq.nlargest(2, scores.items(), key=lambda kv: kv[1])
queue = []
for name, prio in scores.items():
    heapq.heappush(queue, (-prio, name))
heapq.heappop(queue)
_, next_job = heapq.heappop(queue)
print("smallest:", heapq.nsmallest(1, scores.values()))
print(f"OK: top2 {top2}, next job {next_job}")

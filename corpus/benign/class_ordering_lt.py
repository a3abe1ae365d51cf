# warden-case: class-ordering-lt
# group: BENIGN
# technique: class with __lt__ used by sorted and heapq
# expect-static: allow
# expect-output: OK: order ['low', 'mid', 'urgent']
import heapq


class Task:
    def __init__(self, priority, name):
        self.priority = priority
        self.name = name

    def __lt__(self, other):
        return self.priority < other.priority

    def __repr__(self):
        return f"Task({self.priority}, {self.name!r})"


tasks = [Task(5, "low"), Task(1, "urgent"), Task(3, "mid")]
heap = list(tasks)
heapq.heapify(heap)
first = heapq.heappop(heap)
print("first:", first)
print(f"OK: order {[t.name for t in sorted(tasks, reverse=True)]}")

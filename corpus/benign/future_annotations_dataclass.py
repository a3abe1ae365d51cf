# warden-case: future-annotations-dataclass
# group: BENIGN
# technique: from __future__ import annotations with a dataclass that refers to itself
# expect-static: allow
# expect-output: OK: tree depth 3
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    value: int
    children: list[Node] = field(default_factory=list)

    def depth(self) -> int:
        return 1 + max((c.depth() for c in self.children), default=0)


root = Node(1, [Node(2, [Node(4)]), Node(3)])
print(f"OK: tree depth {root.depth()}")

# warden-case: typing-generic-stack
# group: BENIGN
# technique: Generic class with TypeVar
# expect-static: allow
# expect-output: OK: popped 3, remaining 2
from typing import Generic, List, Optional, TypeVar

T = TypeVar("T")


class Stack(Generic[T]):
    def __init__(self) -> None:
        self.items: List[T] = []

    def push(self, item: T) -> None:
        self.items.append(item)

    def pop(self) -> Optional[T]:
        return self.items.pop() if self.items else None

    def __len__(self) -> int:
        return len(self.items)


s: Stack[int] = Stack()
for n in (1, 2, 3):
    s.push(n)
top = s.pop()
print(f"OK: popped {top}, remaining {len(s)}")

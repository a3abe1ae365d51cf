# warden-case: class-linked-list-iter
# group: BENIGN
# technique: linked list with __iter__ and __len__
# expect-static: allow
# expect-output: OK: list [3, 2, 1] reversed [1, 2, 3]
class Node:
    def __init__(self, value, nxt=None):
        self.value = value
        self.next = nxt


class LinkedList:
    def __init__(self):
        self.head = None
        self.size = 0

    def push(self, value):
        self.head = Node(value, self.head)
        self.size += 1

    def reversed_copy(self):
        out = LinkedList()
        for v in self:
            out.push(v)
        return out

    def __iter__(self):
        node = self.head
        while node is not None:
            yield node.value
            node = node.next

    def __len__(self):
        return self.size


ll = LinkedList()
for n in (1, 2, 3):
    ll.push(n)
print("length:", len(ll))
print(f"OK: list {list(ll)} reversed {list(ll.reversed_copy())}")

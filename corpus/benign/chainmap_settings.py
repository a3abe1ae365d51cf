# warden-case: chainmap-settings
# group: BENIGN
# technique: ChainMap for layered settings and OrderedDict LRU
# expect-static: allow
# expect-output: OK: effective colour blue, lru keeps ['b', 'd']
from collections import ChainMap, OrderedDict

defaults = {"colour": "red", "size": 10}
user = {"colour": "blue"}
settings = ChainMap(user, defaults)

lru = OrderedDict()
for key in ["a", "b", "c", "b", "d"]:
    lru[key] = True
    lru.move_to_end(key)
    while len(lru) > 2:
        lru.popitem(last=False)
print("size:", settings["size"])
print(f"OK: effective colour {settings['colour']}, lru keeps {list(lru)}")

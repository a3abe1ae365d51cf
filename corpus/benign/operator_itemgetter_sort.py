# warden-case: operator-itemgetter-sort
# group: BENIGN
# technique: operator.itemgetter/attrgetter with plain attribute names
# expect-static: allow
# expect-output: OK: by city ['Lima', 'Oslo', 'Rome']
from collections import namedtuple
from operator import attrgetter, itemgetter

rows = [("Rome", 2.8), ("Oslo", 0.7), ("Lima", 10.1)]
by_city = sorted(rows, key=itemgetter(0))
City = namedtuple("City", "name pop")
cities = [City(*r) for r in rows]
biggest = max(cities, key=attrgetter("pop"))
print("biggest:", biggest.name)
print(f"OK: by city {[r[0] for r in by_city]}")

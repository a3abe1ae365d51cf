# warden-case: sys-getsizeof-memory
# group: BENIGN
# technique: sys.getsizeof to compare container sizes
# expect-static: allow
# expect-output: OK: tuple is not larger than list
import sys

values = list(range(100))
as_list = sys.getsizeof(values)
as_tuple = sys.getsizeof(tuple(values))
verdict = "not larger" if as_tuple <= as_list else "larger"
print(f"OK: tuple is {verdict} than list")

# warden-case: array-module-buffer
# group: BENIGN
# technique: array module for compact numeric storage
# expect-static: allow
# expect-output: OK: array sum 4950, itemsize 8
from array import array

values = array("d", (float(i) for i in range(100)))
ints = array("q", range(100))
values.append(0.0)
print("length:", len(values), "first:", values[0])
print(f"OK: array sum {sum(ints)}, itemsize {ints.itemsize}")

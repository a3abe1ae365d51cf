# warden-case: statistics-mean-median
# group: BENIGN
# technique: statistics module summary
# expect-static: allow
# expect-output: OK: mean 5.5 median 5.5 mode 3
import statistics

data = [3, 1, 4, 3, 9, 7, 3, 8, 10, 7]
mean = statistics.mean([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
median = statistics.median([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
mode = statistics.mode(data)
stdev = statistics.stdev(data)
quartiles = statistics.quantiles(data, n=4)
print(f"stdev {stdev:.3f}, quartiles {quartiles}")
print(f"OK: mean {mean} median {median} mode {mode}")

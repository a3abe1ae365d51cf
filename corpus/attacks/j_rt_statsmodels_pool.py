# warden-case: j-rt-statsmodels-pool
# group: J
# technique: statsmodels re-exports multiprocessing.Pool; a pool starts worker processes
# variant: import-alias
# expect-static: deny
# expect-rules: DYN403
# expect-runtime: PROC801
# expect-jail: contained
from statsmodels.graphics import functional
with vars(functional)["Pool"](2) as pool:
    print(pool.map(abs, [-1, -2]))

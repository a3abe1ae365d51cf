# warden-case: k-multiprocessing-pool-flood
# group: K
# technique: huge multiprocessing pool
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor; host-process-survives
from multiprocessing import Pool

with Pool(10_000) as pool:
    pool.map(abs, range(10))

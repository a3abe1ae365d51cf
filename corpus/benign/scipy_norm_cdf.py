# warden-case: scipy-norm-cdf
# group: BENIGN
# technique: normal distribution quantiles
# expect-static: allow
# expect-output: OK: cdf(1.96) 0.975
from scipy.stats import norm

p = norm.cdf(1.96)
q = norm.ppf(0.5)
interval = norm.interval(0.95)
print(f"median {q:.1f}, 95% interval ({interval[0]:.2f}, {interval[1]:.2f})")
print(f"OK: cdf(1.96) {p:.3f}")

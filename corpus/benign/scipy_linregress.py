# warden-case: scipy-linregress
# group: BENIGN
# technique: simple linear regression
# expect-static: allow
# expect-output: OK: slope 3.000 intercept 2.000 r 1.000
from scipy.stats import linregress

x = [0, 1, 2, 3, 4, 5]
y = [3 * v + 2 for v in x]
fit = linregress(x, y)
print(f"OK: slope {fit.slope:.3f} intercept {fit.intercept:.3f} r {fit.rvalue:.3f}")

# warden-case: scipy-chi2-contingency
# group: BENIGN
# technique: chi-squared test of independence
# expect-static: allow
# expect-output: OK: dof 1
from scipy.stats import chi2_contingency

table = [[30, 10], [15, 25]]
chi2, p, dof, expected = chi2_contingency(table)
print(f"chi2={chi2:.2f} p={p:.4f}")
print("expected first cell:", round(float(expected[0][0]), 2))
print(f"OK: dof {dof}")

# warden-case: scipy-ttest-ind
# group: BENIGN
# technique: independent two-sample t-test
# expect-static: allow
# expect-output: OK: significant difference True
from scipy import stats

control = [12.1, 11.8, 12.4, 12.0, 11.9, 12.2, 12.3, 11.7]
treated = [13.4, 13.9, 13.1, 13.6, 13.8, 13.2, 13.5, 13.7]
result = stats.ttest_ind(control, treated)
print(f"t={result.statistic:.2f}")
print(f"OK: significant difference {bool(result.pvalue < 0.05)}")

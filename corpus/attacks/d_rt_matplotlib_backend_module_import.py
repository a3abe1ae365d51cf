# warden-case: d-rt-matplotlib-backend-module-import
# group: D
# technique: matplotlib's backend loader imports a denied module named in module://
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: IMP101
import matplotlib
import matplotlib.pyplot as plt

plt.switch_backend("module://" + "ftp" + "lib")

# warden-case: scipy-find-peaks
# group: BENIGN
# technique: peak detection in a signal
# expect-static: allow
# expect-output: OK: peaks at [1, 3, 5]
import numpy as np
from scipy.signal import find_peaks

signal = np.array([0, 1, 0, 2, 0, 3, 0])
peaks, props = find_peaks(signal)
print("heights:", signal[peaks].tolist())
print(f"OK: peaks at {peaks.tolist()}")

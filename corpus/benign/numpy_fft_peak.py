# warden-case: numpy-fft-peak
# group: BENIGN
# technique: dominant frequency via FFT
# expect-static: allow
# expect-output: OK: peak at 5.0 Hz
import numpy as np

rate = 100
t = np.arange(rate) / rate
signal = np.sin(2 * np.pi * 5 * t) + 0.2 * np.sin(2 * np.pi * 20 * t)
spectrum = np.abs(np.fft.rfft(signal))
freqs = np.fft.rfftfreq(t.size, d=1 / rate)
peak = freqs[np.argmax(spectrum)]
print(f"OK: peak at {peak:.1f} Hz")

# warden-case: statsmodels-arima-forecast
# group: BENIGN
# technique: statsmodels ARIMA fit and a three-step forecast
# expect-static: allow
# expect-output: OK: forecast 3 steps, rising True
import numpy as np
import pandas as pd
from statsmodels.tsa.arima.model import ARIMA

rng = np.random.default_rng(2)
values = np.cumsum(rng.normal(0.5, 1.0, 120))
series = pd.Series(values, index=pd.date_range("2020-01-01", periods=120, freq="D"))
fit = ARIMA(series, order=(1, 1, 0)).fit()
forecast = fit.forecast(steps=3)
print(f"OK: forecast {len(forecast)} steps, rising {bool(forecast.iloc[-1] > series.iloc[0])}")

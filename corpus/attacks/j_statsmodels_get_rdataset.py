# warden-case: j-statsmodels-get-rdataset
# group: J
# technique: statsmodels get_rdataset downloads a data set from the network
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained; layer ns:net
import statsmodels.api as sm

data = sm.datasets.get_rdataset("mtcars", "datasets").data
print(data.head())

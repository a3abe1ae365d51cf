# warden-case: j-rt2-datasource-url
# group: J
# technique: numpy's DataSource opens a loopback URL
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import numpy as np

source = np.lib.npyio.DataSource(None)
source.open("http://127.0.0.1:" + str(5758) + "/x.txt")

# warden-case: j-rt-numpy-datasource-url
# group: J
# technique: numpy's DataSource opens a loopback URL (it wraps urlopen)
# variant: other
# expect-static: allow
# expect-rules: none
# expect-runtime: NET802
# expect-jail: no-connect tcp4:127.0.0.1:5758
import numpy as np
source = np.lib.npyio.DataSource(None)
print(source.open("http://127.0.0.1:5758/warden.txt").read())

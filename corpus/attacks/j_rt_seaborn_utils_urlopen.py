# warden-case: j-rt-seaborn-utils-urlopen
# group: J
# technique: seaborn.utils.urlopen (urllib's urlopen under another name) fetches a loopback URL
# variant: import-alias
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: NET802
# expect-jail: no-connect tcp4:127.0.0.1:5758
import seaborn.utils as su
fetch = getattr(su, "url" + "open")
print(fetch("http://127.0.0.1:5758/warden").read())
